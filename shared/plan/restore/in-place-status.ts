// The in-place restore as status shows it (shared/plan/restore/in-place.ts decides the steps): the
// request not yet recorded, the restore under way, what its seed restores, and the Restored condition.
import type { EtcdCluster, EtcdClusterStatus, InPlaceRestoreStatus } from '../../api/etcd-cluster.ts';
import type { ConditionInput } from '../../conditions.ts';
import type { ClusterState } from '../cluster/types.ts';
import { activeMembers } from '../cluster/members.ts';
import { RESTORED_CONDITION, sourceNameOf } from './source.ts';
import type { RestoreResolution } from './types.ts';

/**
 * The request in spec that status has not recorded yet, if any. A restore etcdfn started on quorum
 * loss records the request it superseded: that one never runs after it.
 */
export function pendingRequest(cluster: EtcdCluster): EtcdCluster['spec']['inPlaceRestore'] {
  const request = cluster.spec.inPlaceRestore;
  const record = cluster.status?.inPlaceRestore;
  const done = [record?.requestID, record?.recovery?.supersedesRequestID];
  return request && !done.includes(request.requestID) ? request : undefined;
}

/** The restore in progress (accepted, not done), if any. */
export function activeRestore(cluster: EtcdCluster): InPlaceRestoreStatus | undefined {
  const record = cluster.status?.inPlaceRestore;
  return record && record.step !== 'Done' ? record : undefined;
}

/** What the seed restores while the in-place restore is in its Restoring step. */
export function inPlaceSource(cluster: EtcdCluster): RestoreResolution | undefined {
  const record = activeRestore(cluster);
  if (record?.step !== 'Restoring') return undefined;
  return {
    kind: 'ready',
    restore: record.source,
    sourceName: `EtcdSnapshot ${record.snapshot} (${sourceNameOf(record.source)})`,
  };
}

/**
 * The Restored condition while an in-place restore is requested, under way or done; undefined when
 * the cluster never had one (the bootstrap restore's condition applies).
 */
export function inPlaceRestoreCondition(
  state: ClusterState,
  base: EtcdClusterStatus,
): ConditionInput | undefined {
  const cluster = state.cluster;
  const pending = pendingRequest(cluster);
  const record = base.inPlaceRestore;
  const condition = (status: ConditionInput['status'], reason: string, message: string): ConditionInput => ({
    type: RESTORED_CONDITION,
    status,
    reason,
    message,
  });
  if (pending && !activeRestore({ ...cluster, status: base })) {
    const what = `the in-place restore of EtcdSnapshot ${pending.snapshotRef.name} (request ${pending.requestID})`;
    const resolution = state.inPlaceRestore;
    if (resolution?.kind === 'blocked') return condition('False', resolution.reason, resolution.message);
    if ((base.observed?.replicas ?? 0) === 0)
      return condition('False', 'ClusterPaused', `${what} waits: the cluster is paused; resume it first`);
    if (!base.clusterID)
      return condition('Unknown', 'WaitingForCluster', `${what} waits for the cluster to form`);
    return condition('Unknown', 'Requested', `${what} starts once the step under way ends`);
  }
  if (!record) return undefined;
  const what = `EtcdSnapshot ${record.snapshot} (request ${record.requestID})`;
  if (record.step === 'Stopping')
    return condition(
      'Unknown',
      'Stopping',
      `restoring ${what} in place, step 1 of 3: stopping ${record.members.join(', ')}; their data is discarded`,
    );
  if (record.step === 'Restoring' && !base.clusterID) {
    const seed = activeMembers(state).find(m => m.spec.bootstrap === true);
    const failure = seed ? state.pods.find(p => p.name === seed.metadata.name)?.restoreFailure : undefined;
    if (failure)
      return condition(
        'False',
        failure.reason,
        `restoring ${what} in place, step 2 of 3, failed: ${failure.message}; no member runs until it succeeds (it is retried with back-off)`,
      );
    return condition(
      'Unknown',
      'RestoringSeed',
      `restoring ${what} in place, step 2 of 3: ${seed ? `the seed member ${seed.metadata.name}` : 'a new seed member'} restores the snapshot under a new cluster token`,
    );
  }
  if (record.step === 'Restoring')
    return condition(
      'Unknown',
      'Rejoining',
      `restoring ${what} in place, step 3 of 3: etcd cluster ${base.clusterID} formed from the snapshot; the other members join it as new learners`,
    );
  return condition(
    'True',
    'Restored',
    `restored ${what} in place at ${record.finishedAt ?? ''}: etcd cluster ${base.clusterID ?? ''}${record.previousClusterID ? ` replaces ${record.previousClusterID}` : ''}`,
  );
}
