// run-snapshot's I/O for a schedule's own timing (shared/plan/schedule/ping.ts): read the schedule
// and its PingSource, then create, update or delete the PingSource. Where the cluster serves no
// PingSource API (standalone mode without Knative's CRDs) nothing is written and the summary says
// so: the schedule then runs on the resync tick only.
import { pingSink } from './ping-sink.ts';
import type { EtcdSnapshotSchedule } from '../api/etcd-snapshot-schedule.ts';
import { API_VERSION, ETCD_SNAPSHOT_SCHEDULE } from '../api/group.ts';
import type { KubeObject } from '../k8s/objects.ts';
import {
  desiredPingSource,
  pingSourceName,
  pingSourceStep,
  PING_SOURCE_API_VERSION,
  PING_SOURCE_KIND,
  type PingSource,
} from '../plan/schedule/ping.ts';
import type { Context } from '../runtime/context.ts';
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
  const pingRef = {
    apiVersion: PING_SOURCE_API_VERSION,
    kind: PING_SOURCE_KIND,
    namespace: ref.namespace,
    name: pingSourceName(ref.name),
  };
  const existing = await ctx.kube.find<PingSource>(pingRef);
  const step = pingSourceStep(schedule, desiredPingSource(schedule, await pingSink(ctx)), existing);
  switch (step.kind) {
    case 'none':
      return `PingSource ${pingRef.name} up to date`;
    case 'conflict':
      return step.message;
    case 'create': {
      const created = await ctx.kube.create<PingSource>(step.object);
      if (created.kind === 'invalid') return `PingSource ${pingRef.name} refused: ${created.message}`;
      return `PingSource ${pingRef.name} created (${step.object.spec.schedule})`;
    }
    case 'update': {
      const written = await ctx.kube.replace<PingSource>(step.object);
      if (written.kind === 'invalid') return `PingSource ${pingRef.name} refused: ${written.message}`;
      // conflict / not-found: a newer write brings its own event.
      return `PingSource ${pingRef.name} ${written.kind === 'written' ? 'updated' : written.kind}`;
    }
    case 'delete': {
      await ctx.kube.delete(pingRef, step.uid ? { uid: step.uid } : {});
      return `PingSource ${pingRef.name} deleted (schedule suspended)`;
    }
  }
}
