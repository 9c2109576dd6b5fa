// Which EtcdSnapshot(s) an event is about, for run-snapshot. Pure: the event is only a hint, the
// function reads the snapshot itself.
import { API_VERSION, ETCD_SNAPSHOT, ETCD_SNAPSHOT_SCHEDULE } from '../../shared/api/group.ts';
import type { OperatorEvent } from '../../shared/events/types.ts';

export const FUNCTION_NAME = 'run-snapshot';

export type SnapshotTarget =
  | { kind: 'snapshot'; namespace: string; name: string }
  /** The resync tick: every EtcdSnapshot not finished yet (waiting, retrying, or left Started by a crash). */
  | { kind: 'unfinished-snapshots' }
  /** Nothing for this function to do; answered done with `summary`. */
  | { kind: 'ignore'; summary: string };

export function snapshotTarget(event: OperatorEvent): SnapshotTarget {
  if (event.kind === 'tick') return { kind: 'unfinished-snapshots' };
  const { apiVersion, kind, namespace, name } = event.ref;
  if (apiVersion === API_VERSION && kind === ETCD_SNAPSHOT.kind) return { kind: 'snapshot', namespace, name };
  if (apiVersion === API_VERSION && kind === ETCD_SNAPSHOT_SCHEDULE.kind) {
    return {
      kind: 'ignore',
      summary: `EtcdSnapshotSchedule ${namespace}/${name}: schedules are not handled yet; create EtcdSnapshots on demand`,
    };
  }
  return { kind: 'ignore', summary: `${kind} (${apiVersion}) ${namespace}/${name}: not for this function` };
}
