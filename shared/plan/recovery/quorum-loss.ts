// Quorum loss as the recovery by restore sees it (spec.recovery.policy RestoreLatestSnapshot): since
// when, whether status already said so (a single observation never acts), how long the grace is, and
// what the QuorumLost message tells the user about what happens next. Pure; cluster-status words the
// condition with it, shared/plan/recovery/restore-latest.ts acts on it.
import { findCondition, toKubeTime } from '../../conditions.ts';
import type { ClusterState } from '../cluster/types.ts';
import { activeRestore } from '../restore/in-place-status.ts';
import { isMemberReady, runningMembers } from '../cluster/members.ts';
import {
  GRACE_DATA_LOST_MS,
  GRACE_MEMBERS_DOWN_MS,
  RESTORE_POLICY,
  restorePolicyOn,
} from './restore-latest-snapshot.ts';
import type { RecoveryCandidate, RecoverySnapshot } from './types.ts';

export interface QuorumLoss {
  /** Since when (the Available condition's last transition), or now when status has not said so yet. */
  since: Date;
  /** Whether status already recorded QuorumLost (a single observation never acts). */
  recorded: boolean;
  /** Running members whose data is lost. */
  dataLost: string[];
  graceMs: number;
}

/**
 * Quorum is lost now: the cluster formed, is not paused, no restore runs, etcd does not answer and
 * at most half the members are ready. Undefined otherwise (also when etcd answers: a linearizable
 * member list needs a quorum).
 */
export function quorumLoss(state: ClusterState): QuorumLoss | undefined {
  const current = state.cluster.status ?? {};
  const desired = current.observed?.replicas ?? 0;
  if (!current.clusterID || desired === 0 || activeRestore(state.cluster)) return undefined;
  if (state.etcd?.reachable) return undefined;
  const running = runningMembers(state);
  const majority = Math.floor(desired / 2) + 1;
  if (running.filter(m => isMemberReady(state, m)).length >= majority) return undefined;
  const dataLost = running
    .filter(m => m.status?.dataLoss)
    .map(m => m.metadata.name ?? '')
    .sort();
  const available = findCondition(current.conditions, 'Available');
  const down =
    available?.status === 'False' && ['QuorumLost', 'ClusterUnreachable'].includes(available.reason);
  const since = down ? new Date(available.lastTransitionTime) : state.now;
  return {
    since: Number.isNaN(since.getTime()) ? state.now : since,
    recorded: available?.status === 'False' && available.reason === 'QuorumLost',
    dataLost,
    graceMs: running.length - dataLost.length < majority ? GRACE_DATA_LOST_MS : GRACE_MEMBERS_DOWN_MS,
  };
}

export const deadlineOf = (loss: QuorumLoss): Date => new Date(loss.since.getTime() + loss.graceMs);

export function describeSnapshot(s: RecoveryCandidate): string {
  const parts = [
    s.revision !== undefined ? `revision ${s.revision}` : '',
    s.takenAt ? `taken ${s.takenAt}` : '',
  ].filter(Boolean);
  return `EtcdSnapshot ${s.name}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

/** Why nothing can be restored: the Progressing message and the QuorumLost advice share it. */
export function blockedMessage(
  state: ClusterState,
  source: Exclude<RecoverySnapshot, { kind: 'ready' }>,
): string {
  const name = state.cluster.metadata.name ?? '';
  if (source.kind === 'none')
    return `spec.recovery.policy is ${RESTORE_POLICY}, but there is no verified EtcdSnapshot of this cluster to restore (Complete with Verified True, spec.clusterRef.name ${name}, made after the cluster was created; ${source.considered} EtcdSnapshot${source.considered === 1 ? '' : 's'} of it found), so etcdfn changes nothing. What you can do: bring back the members whose Pods cannot run; if a majority lost its data, create a new EtcdCluster restoring a snapshot you have (spec.bootstrap.restore)`;
  return `spec.recovery.policy is ${RESTORE_POLICY}, but the newest verified snapshot, ${describeSnapshot(source.snapshot)}, cannot be restored: ${source.message}; etcdfn changes nothing until that is fixed`;
}

/**
 * What the QuorumLost message says about recovery under this policy (what happens next and what the
 * user can do); undefined when the policy is not RestoreLatestSnapshot (the default advice applies).
 */
export function restoreRecoveryAdvice(state: ClusterState): string | undefined {
  if (!restorePolicyOn(state.cluster)) return undefined;
  const restoring = activeRestore(state.cluster);
  if (restoring)
    return `an in-place restore of EtcdSnapshot ${restoring.snapshot} is under way (request ${restoring.requestID}; the Restored condition shows its step): the members come back as it proceeds`;
  const loss = quorumLoss(state);
  const source = state.recoverySnapshot;
  if (!loss || !source)
    return `spec.recovery.policy is ${RESTORE_POLICY}: the newest verified EtcdSnapshot of this cluster is restored in place if quorum stays lost`;
  if (source.kind !== 'ready') return blockedMessage(state, source);
  const what = describeSnapshot(source.snapshot);
  return `spec.recovery.policy is ${RESTORE_POLICY}: unless a majority is ready again by ${toKubeTime(deadlineOf(loss))}, etcdfn restores ${what} in place and every write made after it is lost; to keep them, bring the members back before then or set spec.recovery.policy to ReportOnly`;
}

/** Whether a wake-up should look again within a minute: the grace runs out, or a fix is awaited. */
export function recoveryWaits(state: ClusterState): boolean {
  if (!restorePolicyOn(state.cluster) || !quorumLoss(state)) return false;
  return state.recoverySnapshot?.kind === 'ready' || state.recoverySnapshot?.kind === 'blocked';
}
