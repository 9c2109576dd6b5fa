// The auto TLS provider's adapter: reads the cluster's CA and leaf Secrets, asks planAutoTls for
// the next step, generates the key pair it needs and has the Secret written by the generic apply
// (shared/reconcile/owned-apply.ts; the desired Secret and its change: shared/plan/owned/auto-tls-secrets.ts).
// Each Secret is written whole (create, or replace under its resourceVersion), so a crash between
// steps leaves either the old or the new pair, never half.
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import { isControlledBy } from '../builders/owner.ts';
import type { KubeObjects } from '../k8s/objects.ts';
import { secretValues } from '../k8s/secrets.ts';
import {
  desiredTlsSecret,
  tlsSecretChange,
  type TlsSecret as Secret,
} from '../plan/owned/auto-tls-secrets.ts';
import {
  planAutoTls,
  type AutoTlsStep,
  type AutoTlsTimings,
  type ObservedCertificate,
} from '../plan/tls/auto-tls.ts';
import { autoCertificates, caSecretName } from '../tls/auto-certificates.ts';
import { createCa, issueLeaf, type KeyPairPem } from '../tls/issue.ts';
import { readCertificate } from '../tls/read.ts';
import { applyChange } from './owned-apply.ts';

/** What one call did: the step taken, and whether its write went through (false: lost a race). */
export interface AutoTlsOutcome {
  step: AutoTlsStep;
  written: boolean;
}

const secretRef = (namespace: string, name: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  namespace,
  name,
});

function pairOf(secret: Secret | undefined): KeyPairPem | undefined {
  if (!secret) return undefined;
  const values = secretValues(secret);
  const cert = values['tls.crt'];
  const key = values['tls.key'];
  return cert && key ? { cert, key } : undefined;
}

function observe(secret: Secret | undefined, caPem?: string): ObservedCertificate {
  if (!secret) return { kind: 'missing' };
  const pair = pairOf(secret);
  const facts = pair && readCertificate(pair.cert, caPem);
  return facts ? { kind: 'read', facts } : { kind: 'unreadable' };
}

/** Takes the next auto TLS step for the cluster (one write at most). */
export async function stepAutoTls(
  kube: KubeObjects,
  cluster: EtcdCluster,
  timings: AutoTlsTimings,
  now: Date,
): Promise<AutoTlsOutcome> {
  const name = cluster.metadata.name ?? '';
  const namespace = cluster.metadata.namespace ?? 'default';
  const desired = autoCertificates(cluster);
  if (desired.length === 0) return { step: { kind: 'none' }, written: false };

  const caSecret = await kube.find<Secret>(secretRef(namespace, caSecretName(name)));
  const ca = pairOf(caSecret);
  const leafSecrets = await Promise.all(desired.map(c => kube.find<Secret>(secretRef(namespace, c.secret))));
  const foreign = [caSecret, ...leafSecrets].flatMap(s =>
    s && !isControlledBy(s, cluster) ? [s.metadata.name ?? ''] : [],
  );
  const step = planAutoTls({
    now,
    foreign,
    ca: observe(caSecret),
    leaves: desired.map((certificate, i) => ({ certificate, observed: observe(leafSecrets[i], ca?.cert) })),
  });

  if (step.kind === 'create-ca') {
    const pair = await createCa(
      `${namespace}/${name} etcd CA`,
      backdated(now),
      after(now, timings.caLifetimeMs),
    );
    // planAutoTls creates the CA only when its Secret is missing: this is a create.
    const fresh = desiredTlsSecret(cluster, caSecretName(name), pair);
    const created = await applyChange(kube, tlsSecretChange(caSecret, fresh));
    return { step, written: created.kind === 'created' };
  }
  if (step.kind !== 'issue' || !ca) return { step, written: false };

  const { certificate } = step;
  // A leaf never outlives its CA: a client would stop trusting it at the CA's end anyway.
  const caEnd = step.caNotAfter.getTime();
  const notAfter = new Date(Math.min(now.getTime() + timings.leafLifetimeMs, caEnd));
  const pair = await issueLeaf(ca, { ...certificate, notBefore: backdated(now), notAfter });
  const fresh = desiredTlsSecret(cluster, certificate.secret, { ...pair, ca: ca.cert });
  const existing = leafSecrets[desired.indexOf(certificate)];
  const written = await applyChange(kube, tlsSecretChange(existing, fresh));
  return { step, written: written.kind === (existing ? 'written' : 'created') };
}

/** What ensureAutoTls did: the steps it wrote, and the step it stopped at (none, ca-unusable, secrets-not-ours). */
export interface AutoTlsPass {
  written: AutoTlsStep[];
  last: AutoTlsStep;
}

/** Steps until nothing is left to do (a handful of writes at most: CA + three leaves). */
export async function ensureAutoTls(
  kube: KubeObjects,
  cluster: EtcdCluster,
  timings: AutoTlsTimings,
  now: Date,
): Promise<AutoTlsPass> {
  const written: AutoTlsStep[] = [];
  for (let i = 0; i < 8; i++) {
    const outcome = await stepAutoTls(kube, cluster, timings, now);
    if (outcome.written) written.push(outcome.step);
    const { kind } = outcome.step;
    if (kind === 'none' || kind === 'ca-unusable' || kind === 'secrets-not-ours' || !outcome.written)
      return { written, last: outcome.step };
  }
  throw new Error(`auto TLS for ${cluster.metadata.name}: still issuing after 8 steps`);
}

// A minute of slack for clocks that lag the operator's (a member checking a just-issued peer cert).
const backdated = (now: Date): Date => new Date(now.getTime() - 60_000);
const after = (now: Date, ms: number): Date => new Date(now.getTime() + ms);
