// Quorum-loss recovery by restore (spec.recovery.policy RestoreLatestSnapshot): once quorum has been
// lost for longer than a grace, the newest verified EtcdSnapshot of this cluster is restored in place,
// exactly as if the user had asked (shared/plan/restore/in-place.ts carries out the steps). Every
// write after the snapshot is lost, which is why the policy is opt-in and the choice is recorded.
//   snapshot   the newest EtcdSnapshot of this cluster (same namespace, spec.clusterRef this cluster,
//              created after it, Complete and Verified True), by completion time: revisions restart
//              their meaning after an earlier restore, times do not;
//   grace      quorum lost as status recorded it (Available=False QuorumLost at the last reconcile)
//              and still lost now, etcd not answering, for GRACE_DATA_LOST_MS when the members that
//              lost their data leave too few to form a quorum (they can never come back), else for
//              GRACE_MEMBERS_DOWN_MS (members merely down may come back: a node restarting);
//   record     status.inPlaceRestore with an operator-made request ID `recovery-<etcd cluster ID>`,
//              step Stopping, the snapshot, its revision and time: a status write with the
//              resourceVersion (one invocation wins), so it runs once per etcd cluster, an operator
//              crash carries on from the record, and the restored cluster (a new ID) starts afresh;
//   nothing    no verified snapshot, or one that cannot be read back (its Secret or claim missing):
//              Progressing says so (RecoveryBlocked, one Warning Event) and nothing changes.
// Crash windows: the recovery adds one side effect, the record. Dying before it is written changes
// nothing (the next event, tick or wake-up decides the same record); a lost write race (409) leaves
// the winner's record; dying after it, the QuorumLossRecovery Event may be missing, but the next
// invocation carries on with Stopping from the record, as for a user's request (whose later windows
// restore-in-place-crash covers).
// Pure: shared/reconcile/cluster-observe-recovery.ts gathers the snapshots, cluster-plan calls it.
import type { EtcdClusterStatus, InPlaceRestoreStatus } from '../../api/etcd-cluster.ts';
import { findCondition, toKubeTime } from '../../conditions.ts';
import { blockedMessage, deadlineOf, describeSnapshot, quorumLoss, type QuorumLoss } from './quorum-loss.ts';
import type { ClusterState } from '../cluster/types.ts';
import { computeStatus } from '../cluster/status.ts';
import { working, type ClusterPlan } from '../cluster/step.ts';
import { pendingRequest } from '../restore/in-place-status.ts';
import { RESTORE_POLICY, restorePolicyOn } from './restore-latest-snapshot.ts';
import type { RecoverySnapshot } from './types.ts';

/** The operator-made request ID: one recovery per etcd cluster (a restored cluster has a new ID). */
export const recoveryRequestID = (clusterID: string): string => `recovery-${clusterID}`;

/**
 * The recovery's step, or undefined when the ordinary plan goes on (policy off, quorum held, the
 * grace not over, or the observation not made).
 */
export function planRestoreRecovery(state: ClusterState): ClusterPlan | undefined {
  if (!restorePolicyOn(state.cluster)) return undefined;
  const loss = quorumLoss(state);
  const source = state.recoverySnapshot;
  if (!loss || !loss.recorded || !source) return undefined;
  if (state.now.getTime() < deadlineOf(loss).getTime()) return undefined;
  const current = state.cluster.status ?? {};
  const clusterID = current.clusterID ?? '';
  if (current.inPlaceRestore?.requestID === recoveryRequestID(clusterID)) return undefined;
  if (source.kind !== 'ready') return blocked(state, blockedMessage(state, source));
  return start(state, loss, source);
}

function blocked(state: ClusterState, message: string): ClusterPlan {
  const current = state.cluster.status ?? {};
  const reason = 'RecoveryBlocked';
  const said = findCondition(current.conditions, 'Progressing');
  const already = said?.reason === reason && said.message === message;
  return {
    action: { kind: 'none' },
    status: computeStatus(state, current, { active: false, reason, message }),
    events: already ? [] : [{ type: 'Warning', reason, message }],
  };
}

function start(
  state: ClusterState,
  loss: QuorumLoss,
  source: Extract<RecoverySnapshot, { kind: 'ready' }>,
): ClusterPlan {
  const cluster = state.cluster;
  const current = cluster.status ?? {};
  const clusterID = current.clusterID ?? '';
  const members = state.members.map(m => m.metadata.name ?? '').sort();
  const superseded = cluster.spec.inPlaceRestore?.requestID;
  const dropped = pendingRequest(cluster);
  const { revision, takenAt } = source.snapshot;
  const record: InPlaceRestoreStatus = {
    requestID: recoveryRequestID(clusterID),
    snapshot: source.snapshot.name,
    step: 'Stopping',
    source: source.restore,
    members,
    previousClusterID: clusterID,
    startedAt: state.now.toISOString(),
    recovery: {
      policy: RESTORE_POLICY,
      quorumLostSince: toKubeTime(loss.since),
      ...(loss.dataLost.length > 0 && { dataLost: loss.dataLost }),
      ...(revision !== undefined && { revision }),
      ...(takenAt && { snapshotTime: takenAt }),
      ...(superseded && { supersedesRequestID: superseded }),
    },
  };
  const lost = loss.dataLost.length > 0 ? ` (data lost: ${loss.dataLost.join(', ')})` : '';
  const message =
    `quorum lost since ${toKubeTime(loss.since)}${lost}; spec.recovery.policy ${RESTORE_POLICY}: restoring ${describeSnapshot(source.snapshot)} in place (request ${record.requestID}); every write made after it is lost; stopping ${members.join(', ')}, their data is discarded` +
    (dropped ? `; the pending in-place restore request ${dropped.requestID} is dropped` : '');
  const base: EtcdClusterStatus = { ...current, inPlaceRestore: record };
  return {
    action: { kind: 'none' },
    status: computeStatus(state, base, working('RestoringInPlace', message)),
    events: [{ type: 'Warning', reason: 'QuorumLossRecovery', message }],
  };
}
