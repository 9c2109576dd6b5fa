// reconcile-cluster's auth part: once the cluster plan has nothing left to do (formed, every member
// ready) and spec.auth.enabled, run the auth steps (shared/reconcile/cluster-auth.ts) and say what
// status.authEnabled should hold. A healthy auth cluster in sync only reads: 0 writes.
//
// Up to MAX_STEPS steps in one invocation: turning auth on or changing the password in etcd makes
// no Kubernetes event that would bring the next step (create-secret → enable-auth → record-applied),
// and each step is decided again from etcd's answers, so a crash between them converges.
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import type { EventContent } from '../builders/k8s-event.ts';
import { resolveClusterAccess } from '../runtime/cluster-etcd.ts';
import type { Context } from '../runtime/context.ts';
import { reconcileAuth } from './cluster-auth.ts';

const MAX_STEPS = 4;

export type AuthRun =
  /** `authEnabled`: the value status.authEnabled should hold; `event`: what to tell the user. */
  | { kind: 'ok'; authEnabled: boolean; summary: string; event?: EventContent }
  | { kind: 'failed'; authEnabled: boolean; reason: string };

export async function runAuth(
  ctx: Context,
  cluster: EtcdCluster,
  endpoints: readonly string[],
): Promise<AuthRun | undefined> {
  if (cluster.spec.auth?.enabled !== true) return undefined;
  // Logins carry their own credentials; only the cluster's client TLS is taken from its access.
  const access = await resolveClusterAccess(ctx.kube, cluster);
  const tls = access.kind === 'ok' ? access.access.tls : undefined;
  const world = { kube: ctx.kube, endpoints, connection: tls ? { tls } : undefined };
  let current = cluster;
  const done: string[] = [];
  for (let i = 0; i < MAX_STEPS; i++) {
    const outcome = await reconcileAuth(current, true, world);
    const recorded = current.status?.authEnabled === true;
    if (outcome.kind === 'failed')
      return {
        kind: 'failed',
        authEnabled: recorded,
        reason: `auth: ${outcome.step.kind}: ${outcome.message}`,
      };
    const authEnabled = outcome.authEnabled;
    const step = outcome.step;
    if (step.kind === 'none' || step.kind === 'wait')
      return { kind: 'ok', authEnabled, summary: summary(done, step.kind === 'wait' ? step.reason : '') };
    if (step.kind === 'stuck') {
      const event: EventContent = { type: 'Warning', reason: step.reason, message: step.message };
      return { kind: 'ok', authEnabled, summary: summary(done, step.message), event };
    }
    done.push(step.kind);
    if (step.kind === 'record-applied') return { kind: 'ok', authEnabled: true, summary: summary(done, '') };
    current = { ...current, status: { ...current.status, authEnabled } };
  }
  return { kind: 'ok', authEnabled: current.status?.authEnabled === true, summary: summary(done, '') };
}

function summary(done: string[], note: string): string {
  const steps = done.length ? `auth: ${done.join(' → ')}` : 'auth: in sync';
  return note ? `${steps} (${note})` : steps;
}
