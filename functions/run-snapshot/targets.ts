// Which object(s) an event is about, for run-snapshot. Pure: the event is only a hint, the function
// reads the objects itself.
import { API_VERSION, ETCD_SNAPSHOT, ETCD_SNAPSHOT_SCHEDULE } from '../../shared/api/group.ts';
import type { OperatorEvent } from '../../shared/events/types.ts';
import { scheduleOfPing } from '../../shared/plan/schedule/ping.ts';
import { snapshotOfWake } from '../../shared/plan/wake/snapshot-wake.ts';
import { clusterOfWake } from '../../shared/plan/wake/cluster-wake.ts';

export const FUNCTION_NAME = 'run-snapshot';

export type SnapshotTarget =
  /** The snapshot, then (when a schedule owns it) its schedule, so retention follows completion. */
  | { kind: 'snapshot'; namespace: string; name: string }
  | { kind: 'schedule'; namespace: string; name: string }
  /** A Job (a snapshot to a PVC): its owning EtcdSnapshot, read from the Job. */
  | { kind: 'job'; namespace: string; name: string }
  /**
   * The tick: every schedule (this is what fires them), then every EtcdSnapshot not finished yet
   * (waiting, retrying, or left Started by a crash).
   */
  | { kind: 'resync' }
  /** Nothing for this function to do; answered done with `summary`. */
  | { kind: 'ignore'; summary: string };

export function snapshotTarget(event: OperatorEvent): SnapshotTarget {
  if (event.kind === 'tick') {
    // A schedule's own PingSource (shared/plan/schedule/ping.ts) names it: that schedule, at its minute.
    const schedule = scheduleOfPing(event.data);
    if (schedule) return { kind: 'schedule', ...schedule };
    // A snapshot's own wake-up (shared/plan/wake/snapshot-wake.ts) names it: that snapshot, within a minute.
    const snapshot = snapshotOfWake(event.data);
    if (snapshot) return { kind: 'snapshot', ...snapshot };
    // run-snapshot takes every PingSource: a cluster's wake-up is reconcile-cluster's alone.
    const cluster = clusterOfWake(event.data);
    if (cluster)
      return {
        kind: 'ignore',
        summary: `the wake-up of EtcdCluster ${cluster.namespace}/${cluster.name}: not for this function`,
      };
    return { kind: 'resync' };
  }
  const { apiVersion, kind, namespace, name } = event.ref;
  if (apiVersion === API_VERSION && kind === ETCD_SNAPSHOT.kind) return { kind: 'snapshot', namespace, name };
  if (apiVersion === API_VERSION && kind === ETCD_SNAPSHOT_SCHEDULE.kind) {
    return { kind: 'schedule', namespace, name };
  }
  if (apiVersion === 'batch/v1' && kind === 'Job') return { kind: 'job', namespace, name };
  return { kind: 'ignore', summary: `${kind} (${apiVersion}) ${namespace}/${name}: not for this function` };
}
