// run-snapshot's I/O for a schedule's own timing (shared/plan/schedule/ping.ts): read the schedule
// and its PingSource, then have the PingSource created, updated or deleted by the generic apply
// (shared/reconcile/owned-apply.ts). Where the cluster serves no PingSource API (standalone mode
// without Knative's CRDs) nothing is written and the summary says so: the schedule then runs on the
// resync tick only.
import { pingSink } from './ping-sink.ts';
import type { EtcdSnapshotSchedule } from '../api/etcd-snapshot-schedule.ts';
import { API_VERSION, ETCD_SNAPSHOT_SCHEDULE } from '../api/group.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { pingSourceChange, pingSourceRef } from '../plan/owned/ping-sources.ts';
import { desiredPingSource, pingSourceName, pingSourceStep, type PingSource } from '../plan/schedule/ping.ts';
import type { Context } from '../runtime/context.ts';
import { applyChange } from './owned-apply.ts';
import type { ScheduleRef } from './schedule.ts';

/**
 * Brings the schedule's PingSource in line with it; returns a one-line summary. A failure (no
 * PingSource API: the create answers 404; the API server unavailable) is said in the summary, not
 * thrown: the schedule itself was handled, and its next event or the tick tries again.
 */
export async function ensureSchedulePing(ctx: Context, ref: ScheduleRef): Promise<string> {
  try {
    return await ensure(ctx, ref);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return `PingSource not written (${message}): until it is, the schedule runs on the resync tick only`;
  }
}

async function ensure(ctx: Context, ref: ScheduleRef): Promise<string> {
  const schedule = await ctx.kube.find<EtcdSnapshotSchedule & KubeObject>({
    apiVersion: API_VERSION,
    kind: ETCD_SNAPSHOT_SCHEDULE.kind,
    ...ref,
  });
  // Gone: the garbage collector deletes its PingSource (owner reference).
  if (!schedule || schedule.metadata.deletionTimestamp) return 'no schedule, no PingSource';
  const pingRef = pingSourceRef(ref.namespace, pingSourceName(ref.name));
  const existing = await ctx.kube.find<PingSource>(pingRef);
  const step = pingSourceStep(schedule, desiredPingSource(schedule, await pingSink(ctx)), existing);
  if (step.kind === 'none') return `PingSource ${pingRef.name} up to date`;
  if (step.kind === 'conflict') return step.message;
  const result = await applyChange(ctx.kube, pingSourceChange(step, ref.namespace));
  if (result.kind === 'invalid') return `PingSource ${pingRef.name} refused: ${result.message}`;
  switch (step.kind) {
    case 'create':
      return `PingSource ${pingRef.name} created (${step.object.spec.schedule})`;
    case 'update':
      // conflict / not-found: a newer write brings its own event.
      return `PingSource ${pingRef.name} ${result.kind === 'written' ? 'updated' : result.kind}`;
    case 'delete':
      return `PingSource ${pingRef.name} deleted (schedule suspended)`;
  }
}
