// The auth concern's I/O (decision: shared/plan/cluster/auth.ts): read the two root credentials
// Secrets, ask etcd to log root in with each password, then carry out the one step planAuth chose
// (a Secret it writes goes through the generic apply: shared/plan/owned/root-secrets.ts).
// Thin on purpose: every choice is in the plan. reconcile-cluster runs it (through
// cluster-auth-run.ts) once the cluster plan has nothing left to do.
import type { V1Secret } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import { generatePassword, readRootCredentials, type RootCredentials } from '../builders/root-credentials.ts';
import { changeRootPassword, enableAuth, probeAuth, type AuthProbeResult } from '../etcd/auth.ts';
import type { EtcdConnectionOptions } from '../etcd/connection.ts';
import type { KubeObjects } from '../k8s/objects.ts';
import { planAuth, type AuthFacts, type AuthStep, type LoginAnswer } from '../plan/cluster/auth.ts';
import { appliedRootSecretChange, generatedRootSecretChange } from '../plan/owned/root-secrets.ts';
import { appliedRootSecretName, ROOT_USER } from '../names.ts';
import { applyChange } from './owned-apply.ts';

export interface AuthWorld {
  kube: KubeObjects;
  /** The members' client URLs. */
  endpoints: readonly string[];
  /** TLS and deadline for the logins (credentials are set per login here). */
  connection?: EtcdConnectionOptions;
}

export interface AuthObservation {
  facts: AuthFacts;
  desired: RootCredentials;
  applied: RootCredentials;
  appliedSecret?: V1Secret;
}

export type AuthOutcome =
  /** The step ran; `authEnabled` is the value status.authEnabled should now hold. */
  | { kind: 'done'; step: AuthStep; authEnabled: boolean }
  /** The step could not run; `message` says why (never a password). */
  | { kind: 'failed'; step: AuthStep; message: string };

export async function observeAuth(
  cluster: EtcdCluster,
  formed: boolean,
  world: AuthWorld,
): Promise<AuthObservation> {
  const wanted = cluster.spec.auth?.enabled === true;
  const namespace = cluster.metadata.namespace ?? '';
  const desiredName = cluster.spec.auth?.rootCredentialsSecretRef?.name;
  const desiredSecret = wanted && desiredName ? await secret(world.kube, namespace, desiredName) : undefined;
  const appliedSecret = wanted
    ? await secret(world.kube, namespace, appliedRootSecretName(cluster.metadata.name ?? ''))
    : undefined;
  const desired = readRootCredentials(desiredSecret);
  const applied = readRootCredentials(appliedSecret);
  const facts: AuthFacts = {
    wanted,
    recorded: cluster.status?.authEnabled === true,
    formed,
    desired,
    applied,
  };
  if (wanted && desired.kind === 'ok' && (formed || facts.recorded)) {
    facts.loginDesired = await login(world, desired.password);
    if (facts.loginDesired === 'refused' && applied.kind === 'ok' && applied.password !== desired.password) {
      facts.loginApplied = await login(world, applied.password);
    }
  }
  return { facts, desired, applied, appliedSecret };
}

/** Observes, plans and runs one auth step. */
export async function reconcileAuth(
  cluster: EtcdCluster,
  formed: boolean,
  world: AuthWorld,
): Promise<AuthOutcome> {
  const seen = await observeAuth(cluster, formed, world);
  return runAuthStep(cluster, planAuth(seen.facts), seen, world);
}

export async function runAuthStep(
  cluster: EtcdCluster,
  step: AuthStep,
  seen: AuthObservation,
  world: AuthWorld,
): Promise<AuthOutcome> {
  const recorded = cluster.status?.authEnabled === true;
  const done = (authEnabled = recorded): AuthOutcome => ({ kind: 'done', step, authEnabled });
  const failed = (message: string): AuthOutcome => ({ kind: 'failed', step, message });
  const { desired, applied } = seen;
  switch (step.kind) {
    case 'none':
    case 'wait':
    case 'stuck':
      return done();
    case 'create-secret': {
      const change = generatedRootSecretChange(cluster, generatePassword());
      const created = await applyChange(world.kube, change);
      return created.kind === 'invalid' ? failed(created.message) : done();
    }
    case 'enable-auth': {
      if (desired.kind !== 'ok') return failed('no root password to enable auth with');
      const enabled = await enableAuth(world.endpoints, desired.password, world.connection);
      return enabled.kind === 'ok' ? done() : failed(`turning auth on failed: ${enabled.message}`);
    }
    case 'rotate-password': {
      if (desired.kind !== 'ok' || applied.kind !== 'ok') return failed('no passwords to rotate between');
      const current = { username: ROOT_USER, password: applied.password };
      const changed = await changeRootPassword(world.endpoints, current, desired.password, world.connection);
      return changed.kind === 'ok' ? done() : failed(`changing the root password failed: ${changed.message}`);
    }
    case 'record-applied': {
      if (desired.kind !== 'ok') return failed('no root password to record');
      const written = await writeApplied(cluster, desired.password, seen.appliedSecret, world.kube);
      return written ? failed(written) : done(true);
    }
  }
}

async function writeApplied(
  cluster: EtcdCluster,
  password: string,
  existing: V1Secret | undefined,
  kube: KubeObjects,
): Promise<string | undefined> {
  const change = appliedRootSecretChange(cluster, password, existing);
  if (change.kind === 'create') {
    const created = await applyChange(kube, change);
    if (created.kind === 'created') return undefined;
    return created.kind === 'already-exists'
      ? 'the applied copy appeared meanwhile; deciding again'
      : created.message;
  }
  const replaced = await applyChange(kube, change);
  return replaced.kind === 'written' ? undefined : `writing the applied copy: ${replaced.kind}`;
}

async function login(world: AuthWorld, password: string): Promise<LoginAnswer> {
  const answer: AuthProbeResult = await probeAuth(
    world.endpoints,
    { username: ROOT_USER, password },
    world.connection,
  );
  switch (answer.kind) {
    case 'enabled':
    case 'disabled':
      return answer.kind;
    case 'auth-failed':
      return 'refused';
    default:
      return 'unavailable';
  }
}

async function secret(kube: KubeObjects, namespace: string, name: string): Promise<V1Secret | undefined> {
  return kube.find<V1Secret & { metadata: NonNullable<V1Secret['metadata']> }>({
    apiVersion: 'v1',
    kind: 'Secret',
    namespace,
    name,
  });
}
