// Quorum-loss recovery, spec.recovery.policy ForceNewCluster (opt-in; the default only reports).
// The steps, each recorded in status.forceNewCluster before the next one starts, so an operator
// crash anywhere resumes where it stopped, and every step is idempotent:
//   detect     quorum is lost (plan/recovery/force-new-cluster-status.ts: a majority of the voters not ready
//              and etcd answering through none of them): step Waiting, with the time;
//   Waiting    the loss must hold for FORCE_GRACE_SECONDS (the event comes back as a retry). If
//              quorum returns, or the policy is changed, the record is dropped and nothing was
//              changed. Then the most advanced surviving member is chosen: it answers on its own
//              endpoint as its recorded member ID, of this cluster, with its data, and knows no leader
//              (one that does means quorum holds); highest raft index, then applied index, then name.
//              None: the condition says why and nothing is done. Chosen: step Forcing (a
//              compare-and-swap status write: one invocation claims it), with the member, its ID,
//              why it was chosen, the members given up on and the old cluster ID;
//   Forcing    the survivor's spec.forceNewCluster is set; reconcile-member replaces its Pod with one
//              that starts etcd with --force-new-cluster (plan/member/force-new-cluster.ts). Once etcd lists that member
//              alone, the forced start happened: the cluster ID it answers with is recorded, step
//              Removing (recorded first: the flag is unset only after, so a crash in between cannot
//              force the survivor twice). Quorum back before that (etcd lists several members):
//              undone, dropped;
//   Removing   the flag is unset (the survivor's Pod is replaced again without it, so no later
//              restart forces anything on data that moved on); then the lost EtcdMembers are deleted with their Pods (their PVCs follow by garbage
//              collection); finalize-member lets them go without an etcd removal, since etcd's member
//              list no longer has them. Once they are gone and the survivor runs without the flag,
//              step Rejoining, with a new progress deadline;
//   Rejoining  the ordinary scale-up adds new learners (new IDs) and promotes them; once the target
//              is reached, step Done.
// A member is never started empty under an existing ID: the survivor keeps its own data, and the
// others come back as new members. Pure: cluster-observe gathers the survivors' own reports.
import type { EtcdClusterStatus, ForceNewClusterStatus } from '../../api/etcd-cluster.ts';
import type { EtcdMember } from '../../api/etcd-member.ts';
import { isMemoryMedium } from '../../builders/storage.ts';
import { toKubeTime } from '../../conditions.ts';
import type { ClusterState } from '../cluster/types.ts';
import { computeStatus } from '../cluster/status.ts';
import {
  podTrouble,
  working,
  type ClusterAction,
  type ClusterEvent,
  type ClusterPlan,
  type Progress,
} from '../cluster/step.ts';
import {
  activeForceRecovery,
  FORCE_GRACE_SECONDS,
  graceEnd,
  quorumLost,
  voterHealth,
} from './force-new-cluster-status.ts';
import { isDeleting, isMemberReady, podOf, runningMembers } from '../cluster/members.ts';
import { deadlineFrom } from '../cluster/target.ts';

const RECOVERING = 'Recovering';

const policyOf = (state: ClusterState) => state.cluster.spec.recovery?.policy ?? 'ReportOnly';

/** Whether observe should ask each running member's own endpoint about itself (step Waiting only). */
export function needsSelfReports(state: ClusterState): boolean {
  const record = activeForceRecovery(state.cluster.status);
  return record ? record.step === 'Waiting' : policyOf(state) === 'ForceNewCluster' && quorumLost(state);
}

/**
 * The recovery's step, or undefined when it has nothing to decide (no quorum loss under the policy,
 * or step Rejoining before the target is reached: the ordinary scaling path carries that out).
 */
export function planForceNewCluster(state: ClusterState, complete: boolean): ClusterPlan | undefined {
  const record = activeForceRecovery(state.cluster.status);
  if (!record) {
    if (policyOf(state) !== 'ForceNewCluster' || !quorumLost(state)) return undefined;
    return detect(state);
  }
  switch (record.step) {
    case 'Waiting':
      return planWaiting(state, record);
    case 'Forcing':
      return planForcing(state, record);
    case 'Removing':
      return planRemoving(state, record);
    case 'Rejoining':
      return complete ? finish(state, record) : undefined;
  }
  return undefined;
}

function step(
  state: ClusterState,
  action: ClusterAction,
  progress: Progress,
  base: EtcdClusterStatus = state.cluster.status ?? {},
  events: ClusterEvent[] = [],
): ClusterPlan {
  return { action, status: computeStatus(state, base, progress), events };
}

const withRecord = (state: ClusterState, record: ForceNewClusterStatus): EtcdClusterStatus => ({
  ...state.cluster.status,
  forceNewCluster: record,
});

function detect(state: ClusterState): ClusterPlan {
  const record: ForceNewClusterStatus = { step: 'Waiting', detectedAt: toKubeTime(state.now) };
  const message = waitingMessage(state, record);
  return step(state, { kind: 'none' }, working(RECOVERING, message), withRecord(state, record), [
    { type: 'Warning', reason: 'QuorumLossDetected', message },
  ]);
}

function waitingMessage(state: ClusterState, record: ForceNewClusterStatus): string {
  const { voters, ready } = voterHealth(state);
  return `quorum lost (${ready} of ${voters} voters ready) since ${record.detectedAt}; spec.recovery.policy is ForceNewCluster: unless quorum returns by ${graceEnd(record)}, the most advanced surviving member is restarted alone with --force-new-cluster and the others are replaced by new members`;
}

/** Quorum back, or the policy changed, before anything was forced: the record goes, nothing changed. */
function cancel(state: ClusterState, why: string): ClusterPlan {
  const base: EtcdClusterStatus = { ...state.cluster.status };
  delete base.forceNewCluster;
  const message = `quorum-loss recovery cancelled: ${why}; nothing was changed`;
  return step(state, { kind: 'none' }, working(RECOVERING, message), base, [
    { type: 'Normal', reason: 'RecoveryCancelled', message },
  ]);
}

function planWaiting(state: ClusterState, record: ForceNewClusterStatus): ClusterPlan {
  if (policyOf(state) !== 'ForceNewCluster')
    return cancel(state, `spec.recovery.policy is ${policyOf(state)}`);
  if (!quorumLost(state)) return cancel(state, 'quorum returned');
  if (state.now.getTime() < Date.parse(record.detectedAt) + FORCE_GRACE_SECONDS * 1000) {
    // Answered as a retry, which reconcile-cluster adds to Progressing: kept short.
    const reason = `quorum-loss grace until ${graceEnd(record)}`;
    return step(state, { kind: 'recheck', reason }, working(RECOVERING, waitingMessage(state, record)));
  }
  const choice = chooseSurvivor(state);
  if (choice.kind === 'none') {
    const message = `quorum lost and spec.recovery.policy is ForceNewCluster, but no member can be forced: ${choice.why}; nothing is changed. Bring a member with its data back, or create a new EtcdCluster restoring a snapshot (spec.bootstrap.restore)`;
    const current = state.cluster.status ?? {};
    const already = current.conditions?.some(c => c.type === 'Progressing' && c.message === message);
    return step(
      state,
      { kind: 'wait', reason: message },
      working('RecoveryBlocked', message),
      current,
      already ? [] : [{ type: 'Warning', reason: 'RecoveryBlocked', message }],
    );
  }
  const { survivor, why } = choice;
  const name = survivor.metadata.name ?? '';
  const lost = runningMembers(state)
    .map(m => m.metadata.name ?? '')
    .filter(n => n !== name)
    .sort();
  const current = state.cluster.status ?? {};
  const next: ForceNewClusterStatus = {
    ...record,
    step: 'Forcing',
    member: name,
    ...(survivor.status?.memberID && { memberID: survivor.status.memberID }),
    reason: why,
    lost,
    ...(current.clusterID && { previousClusterID: current.clusterID }),
    startedAt: toKubeTime(state.now),
  };
  // The claim: a compare-and-swap status write one invocation wins; what was in flight is dropped
  // (an add-member operation or a replacement cannot finish without quorum; the recovery replaces them).
  const base = withRecord(state, next);
  delete base.operation;
  delete base.replacement;
  const message = `forcing a new cluster from member ${name} (ID ${next.memberID ?? '?'}): ${why}; ${lost.join(', ')} ${lost.length === 1 ? 'is' : 'are'} given up on and replaced by new members; writes only they acknowledged are lost`;
  return step(state, { kind: 'none' }, working(RECOVERING, message), base, [
    { type: 'Warning', reason: 'ForcingNewCluster', message },
  ]);
}

type Choice = { kind: 'chosen'; survivor: EtcdMember; why: string } | { kind: 'none'; why: string };

/**
 * The most advanced member that survives with its data: it answers on its own endpoint as its
 * recorded member ID of this cluster, has run with data and lost none, and knows no leader. Any
 * member that knows a leader means quorum may hold: nobody is chosen.
 */
export function chooseSurvivor(state: ClusterState): Choice {
  const clusterID = state.cluster.status?.clusterID;
  const answering: { member: EtcdMember; index: number; applied: number }[] = [];
  const excluded: string[] = [];
  for (const m of runningMembers(state)) {
    const name = m.metadata.name ?? '';
    const report = state.selfReports?.[name];
    const s = m.status ?? {};
    const out = (why: string) => excluded.push(`${name} ${why}`);
    if (s.dataLoss) out(`lost its data (${s.dataLoss.reason})`);
    // Its data lives in its Pod: the new Pod the flag needs would start empty.
    else if (isMemoryMedium(m.spec.storage))
      out('keeps its data in memory (a Pod started with --force-new-cluster would start empty)');
    else if (!s.memberID || s.hasData !== true) out('never ran with its data');
    else if (!report) out('does not answer');
    else if (report.memberId !== s.memberID) out(`answers as member ${report.memberId}, not ${s.memberID}`);
    else if (report.clusterId !== clusterID)
      out(`answers for etcd cluster ${report.clusterId}, not ${clusterID}`);
    else if (report.leaderId)
      return { kind: 'none', why: `${name} still knows leader ${report.leaderId}, so quorum may hold` };
    else answering.push({ member: m, index: report.raftIndex, applied: report.raftAppliedIndex });
  }
  answering.sort(
    (a, b) =>
      b.index - a.index ||
      b.applied - a.applied ||
      (a.member.metadata.name ?? '').localeCompare(b.member.metadata.name ?? ''),
  );
  const skipped = excluded.length > 0 ? `; ${excluded.sort().join('; ')}` : '';
  const best = answering[0];
  if (!best) return { kind: 'none', why: `no member answers with its data${skipped}` };
  const listed = answering.map(a => `${a.member.metadata.name} ${a.index}`).join(', ');
  return {
    kind: 'chosen',
    survivor: best.member,
    why: `the highest raft index of the members answering with their data (${listed})${skipped}`,
  };
}

function survivorOf(state: ClusterState, record: ForceNewClusterStatus): EtcdMember | undefined {
  return state.members.find(m => m.metadata.name === record.member && !isDeleting(m));
}

function planForcing(state: ClusterState, record: ForceNewClusterStatus): ClusterPlan {
  const survivor = survivorOf(state, record);
  const name = record.member ?? '';
  if (!survivor) {
    const message = `member ${name}, chosen to force a new cluster from, is gone; nothing more is done. Create a new EtcdCluster restoring a snapshot (spec.bootstrap.restore)`;
    return step(state, { kind: 'wait', reason: message }, working('RecoveryBlocked', message));
  }
  const etcd = state.etcd?.reachable ? state.etcd : undefined;
  const alone = etcd?.members.length === 1 && etcd.members[0]?.id === record.memberID;
  if (etcd && alone) {
    const next: ForceNewClusterStatus = {
      ...record,
      step: 'Removing',
      clusterID: etcd.clusterId,
      forcedAt: toKubeTime(state.now),
    };
    const kept =
      etcd.clusterId === record.previousClusterID ? 'kept' : `changed from ${record.previousClusterID}`;
    const message = `member ${name} (ID ${record.memberID}) runs as a one-member cluster (cluster ID ${etcd.clusterId}, ${kept}); restarting it without --force-new-cluster and removing ${(record.lost ?? []).join(', ')}`;
    // Recorded before the flag is unset: a crash in between must not read "flag unset, not yet
    // forced" and force the survivor a second time (step Removing unsets it).
    return step(
      state,
      { kind: 'none' },
      working(RECOVERING, message),
      { ...withRecord(state, next), clusterID: etcd.clusterId },
      [{ type: 'Normal', reason: 'NewClusterForced', message }],
    );
  }
  if (etcd) {
    // etcd answers with several members: quorum is back and the forced start has not happened.
    if (survivor.spec.forceNewCluster === true) {
      const message = `quorum returned before ${name} was forced: undoing (its Pod keeps running without --force-new-cluster)`;
      return step(
        state,
        { kind: 'force-new-cluster', member: name, on: false },
        working(RECOVERING, message),
      );
    }
    return cancel(state, `quorum returned before ${name} was forced`);
  }
  if (survivor.spec.forceNewCluster !== true) {
    const message = `restarting member ${name} (ID ${record.memberID}) alone with --force-new-cluster: ${record.reason}`;
    return step(state, { kind: 'force-new-cluster', member: name, on: true }, working(RECOVERING, message));
  }
  const message = `waiting for member ${name} (ID ${record.memberID}) to start alone with --force-new-cluster${podTrouble(state, survivor)}`;
  return step(state, { kind: 'wait', reason: message }, working(RECOVERING, message));
}

function planRemoving(state: ClusterState, record: ForceNewClusterStatus): ClusterPlan {
  const survivor = survivorOf(state, record);
  const name = record.member ?? '';
  if (survivor?.spec.forceNewCluster === true) {
    const message = `restarting member ${name} without --force-new-cluster`;
    return step(state, { kind: 'force-new-cluster', member: name, on: false }, working(RECOVERING, message));
  }
  // The survivor first runs again without the flag: finalize-member asks etcd through it.
  const pod = survivor ? podOf(state, survivor) : undefined;
  if (!survivor || !pod || pod.forceNewCluster === true || !isMemberReady(state, survivor)) {
    const message = `waiting for member ${name} to run again without --force-new-cluster${survivor ? podTrouble(state, survivor) : ''}`;
    return step(state, { kind: 'wait', reason: message }, working(RECOVERING, message));
  }
  const lost = state.members.filter(m => (record.lost ?? []).includes(m.metadata.name ?? ''));
  const standing = lost.filter(m => !isDeleting(m)).map(m => m.metadata.name ?? '');
  if (standing.length > 0) {
    const message = `removing ${standing.join(', ')} (and their Pods and volumes): after the forced start they are no longer in etcd's member list`;
    return step(state, { kind: 'delete-members', members: standing }, working(RECOVERING, message));
  }
  if (lost.length > 0) {
    const message = `waiting for ${lost.map(m => m.metadata.name).join(', ')} to go`;
    return step(state, { kind: 'wait', reason: message }, working(RECOVERING, message));
  }
  const replicas = state.cluster.status?.observed?.replicas ?? 0;
  const message = `${(record.lost ?? []).join(', ')} removed; adding new members to ${name} until ${replicas} are ready`;
  const base: EtcdClusterStatus = {
    ...withRecord(state, { ...record, step: 'Rejoining' }),
    progressDeadline: deadlineFrom(state.cluster, state.now),
  };
  return step(state, { kind: 'none' }, working(RECOVERING, message), base, [
    { type: 'Normal', reason: 'LostMembersRemoved', message },
  ]);
}

function finish(state: ClusterState, record: ForceNewClusterStatus): ClusterPlan {
  const done: ForceNewClusterStatus = { ...record, step: 'Done', finishedAt: toKubeTime(state.now) };
  const replicas = state.cluster.status?.observed?.replicas ?? 0;
  const message = `recovered from quorum loss: ${replicas} members again around member ${record.member} (ID ${record.memberID}), which kept its data; ${(record.lost ?? []).join(', ')} replaced by new members`;
  return step(
    state,
    { kind: 'none' },
    { active: false, reason: 'Reconciled', message },
    withRecord(state, done),
    [{ type: 'Normal', reason: 'Recovered', message }],
  );
}
