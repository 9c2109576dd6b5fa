// The ForceNewCluster recovery as status shows it (shared/plan/recovery/force-new-cluster.ts decides the
// steps): whether quorum is lost, the record in progress, and the QuorumRecovery condition.
import type { EtcdClusterStatus, ForceNewClusterStatus } from '../../api/etcd-cluster.ts';
import type { ConditionInput } from '../../conditions.ts';
import type { ClusterState } from '../cluster/types.ts';
import { isMemberReady, runningMembers } from '../cluster/members.ts';

export const QUORUM_RECOVERY = 'QuorumRecovery';

/** How long quorum must stay lost before ForceNewCluster acts: one failed probe is not evidence. */
export const FORCE_GRACE_SECONDS = 30;

/** The recovery in progress (recorded, not done), if any. */
export function activeForceRecovery(
  status: EtcdClusterStatus | undefined,
): ForceNewClusterStatus | undefined {
  const record = status?.forceNewCluster;
  return record && record.step !== 'Done' ? record : undefined;
}

/** When the grace after the detection ends (RFC 3339, whole seconds). */
export function graceEnd(record: ForceNewClusterStatus): string {
  const end = new Date(Date.parse(record.detectedAt) + FORCE_GRACE_SECONDS * 1000);
  return end.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The voters the cluster has as its EtcdMembers record them, and how many of them are ready. */
export function voterHealth(state: ClusterState): { voters: number; ready: number } {
  const voters = runningMembers(state).filter(m => m.status?.isVoter === true || m.spec.bootstrap === true);
  return { voters: voters.length, ready: voters.filter(m => isMemberReady(state, m)).length };
}

/**
 * Quorum is lost: the cluster has formed and is not paused, etcd did not answer a linearizable
 * member list through any ready member (an answer proves a quorum), and fewer than a majority of
 * its voters (at least two: a one-member cluster has no one to lose) are ready.
 */
export function quorumLost(state: ClusterState): boolean {
  const current = state.cluster.status ?? {};
  if (!current.clusterID || (current.observed?.replicas ?? 0) === 0) return false;
  if (state.etcd?.reachable) return false;
  const { voters, ready } = voterHealth(state);
  return voters >= 2 && ready < Math.floor(voters / 2) + 1;
}

const who = (record: ForceNewClusterStatus): string =>
  `member ${record.member ?? '?'}${record.memberID ? ` (ID ${record.memberID})` : ''}`;

/** The QuorumRecovery condition while a recovery is recorded (under way or done). */
export function forceRecoveryCondition(base: EtcdClusterStatus): ConditionInput | undefined {
  const record = base.forceNewCluster;
  if (!record) return undefined;
  const condition = (status: ConditionInput['status'], reason: string, message: string) => ({
    type: QUORUM_RECOVERY,
    status,
    reason,
    message,
  });
  const lost = (record.lost ?? []).join(', ');
  const replicas = base.observed?.replicas ?? 0;
  switch (record.step) {
    case 'Waiting':
      return condition(
        'True',
        'Waiting',
        `spec.recovery.policy ForceNewCluster, step 1 of 4: quorum lost since ${record.detectedAt}; waiting until ${graceEnd(record)} for it to return before forcing a new cluster from the most advanced surviving member`,
      );
    case 'Forcing':
      return condition(
        'True',
        'Forcing',
        `step 2 of 4: restarting ${who(record)} alone with --force-new-cluster (${record.reason ?? ''}); given up on: ${lost}`,
      );
    case 'Removing':
      return condition(
        'True',
        'Removing',
        `step 3 of 4: ${who(record)} runs as a one-member cluster (cluster ID ${record.clusterID ?? '?'}); removing ${lost}, which are no longer in its member list`,
      );
    case 'Rejoining':
      return condition(
        'True',
        'Rejoining',
        `step 4 of 4: new members join ${who(record)} as learners and are promoted until ${replicas} members are ready`,
      );
    case 'Done':
      return condition(
        'False',
        'Recovered',
        `recovered from quorum loss at ${record.finishedAt ?? ''}: a new cluster was forced from ${who(record)}, which kept its data and ID; ${lost} ${(record.lost ?? []).length === 1 ? 'was' : 'were'} replaced by new members; etcd cluster ID ${record.clusterID ?? '?'}${record.previousClusterID && record.previousClusterID !== record.clusterID ? ` (was ${record.previousClusterID})` : ' (kept)'}`,
      );
  }
}
