// reconcile-cluster's decision: given everything observed, the single next step toward the locked
// target, and the status that describes the world after deciding it. Pure: no I/O, no clock (the
// time is part of the state), so every branch is a row in a table test.
import type { EtcdClusterStatus } from '../../api/etcd-cluster.ts';
import { clusterToken } from '../../names.ts';
import { planBootstrap } from '../membership/bootstrap.ts';
import { planBootstrapRetry, startBootstrapRetry } from '../membership/bootstrap-retry.ts';
import { planRestoreRecovery } from '../recovery/restore-latest.ts';
import { planInPlaceRestore } from '../restore/in-place.ts';
import { planForceNewCluster } from '../recovery/force-new-cluster.ts';
import type { ClusterState } from './types.ts';
import { computeStatus } from './status.ts';
import { planMembership } from '../membership/scaling.ts';
import { planSpaceRecovery } from '../space/nospace-alarm.ts';
import { planVolumeGrowth } from '../space/volume-growth.ts';
import {
  defragAbandoned,
  defragOperation,
  planDefrag,
  releasedDefragClaim,
  withoutDefragClaim,
} from '../space/defrag.ts';
import { withDefragSchedule } from '../space/defrag-schedule-status.ts';
import {
  podTrouble,
  targetMessage,
  working,
  type ClusterAction,
  type ClusterEvent,
  type ClusterPlan,
  type Progress,
} from './step.ts';
import { outdatedMembers, upgradeStalledOnPull, upgradingMembers } from '../upgrade/upgrade.ts';
import { versionRefusal } from '../upgrade/version-moves.ts';
import { WAITING_FOR_RAFT_SNAPSHOT, legacyRaftEntries, raftSnapshotWait } from '../upgrade/wal-guard.ts';
import { heldMember, isDeleting, isMemberReady, podOf, runningMembers } from './members.ts';
import { deadlineFrom, deadlinePassed, observedFromSpec, specDiffersFromObserved } from './target.ts';
import { networkPolicyChanges } from '../owned/network-policy.ts';
import { pdbChanges } from '../owned/pdb.ts';
import { servicesChanges } from '../owned/services.ts';

export type { ClusterAction, ClusterEvent, ClusterPlan } from './step.ts';
export type { AddMemberOperation } from '../../api/cluster-operation.ts';

export function planCluster(state: ClusterState): ClusterPlan {
  const plan = withLegacyRaftEntries(state, planSteps(state));
  return state.cluster.status?.observed && !isDeleting(state.cluster)
    ? withDefragSchedule(
        state,
        plan,
        isComplete({ ...state, cluster: { ...state.cluster, status: plan.status } }),
      )
    : plan;
}

function planSteps(state: ClusterState): ClusterPlan {
  const cluster = state.cluster;
  const current = cluster.status ?? {};
  if (isDeleting(cluster)) return { action: { kind: 'none' }, status: current, events: [] };
  const restoring = current.observed && planInPlaceRestore(state, isComplete(state));
  if (restoring) return restoring;
  const restoringLatest = current.observed && planRestoreRecovery(state);
  if (restoringLatest) return restoringLatest;
  if (!current.clusterToken || !current.observed) return initialTarget(state);
  const retrying = planBootstrapRetry(state);
  if (retrying) return retrying;
  const forcing = planForceNewCluster(state, isComplete(state));
  if (forcing) return forcing;
  if (defragOperation(current)) {
    // A member is being defragmented: wait for it, take it over, or drop the claim and plan on.
    const free = withoutDefragClaim(state);
    const held = planDefrag(state, isComplete(free));
    if (!held) {
      const next = planSteps(releasedDefragClaim(state, isComplete(free)));
      const abandoned = defragAbandoned(state, isComplete(free));
      return abandoned ? { ...next, events: [abandoned, ...next.events] } : next;
    }
    return {
      action: held.action,
      status: computeStatus(state, held.base ?? current, held.progress),
      events: [],
    };
  }
  if (current.operation?.type === 'add-member') {
    const operation = current.operation;
    const message = operation.initialMembers
      ? `creating the initial members ${operation.initialMembers.join(', ')} together`
      : `adding member ${operation.member}`;
    const progress = { active: true, reason: 'AddingMember', message };
    return {
      action: { kind: 'resume', operation },
      status: computeStatus(state, current, progress),
      events: [],
    };
  }
  const complete = isComplete(state);
  const stalled = upgradeStalledOnPull(state, runningMembers(state));
  if (specDiffersFromObserved(cluster) && (complete || stalled || deadlinePassed(cluster, state.now))) {
    const refused = versionRefusal(state);
    if (refused) return refuseTarget(state, refused.reason, refused.message);
    const wait = raftSnapshotWait(state, legacyRaftEntries(state));
    if (wait) return waitForRaftSnapshots(state, wait);
    return adoptSpec(state, complete || stalled ? 'NewTarget' : 'RetryAfterDeadline');
  }
  if (!complete && deadlinePassed(cluster, state.now))
    return startBootstrapRetry(state) ?? lateFormation(state) ?? deadlineExceeded(state);
  return planTowardTarget(state, complete);
}

function initialTarget(state: ClusterState): ClusterPlan {
  const cluster = state.cluster;
  const current = cluster.status ?? {};
  const observed = observedFromSpec(cluster);
  const base: EtcdClusterStatus = {
    ...current,
    clusterToken:
      current.clusterToken ??
      clusterToken(cluster.metadata.namespace ?? '', cluster.metadata.name ?? '', cluster.metadata.uid ?? ''),
    observed,
    progressDeadline: deadlineFrom(cluster, state.now),
    nextMemberOrdinal: current.nextMemberOrdinal ?? 0,
  };
  const progress = {
    active: true,
    reason: 'NewTarget',
    message: targetMessage(observed.replicas, observed.version),
  };
  return { action: { kind: 'none' }, status: computeStatus(state, base, progress), events: [] };
}

/** etcd formed after the deadline (a slow start): its cluster ID is latched rather than reported failed. */
function lateFormation(state: ClusterState): ClusterPlan | undefined {
  if (state.cluster.status?.clusterID || !state.etcd?.reachable) return undefined;
  const onward = planTowardTarget(state, false);
  return onward.status.clusterID ? onward : undefined;
}

function adoptSpec(state: ClusterState, reason: 'NewTarget' | 'RetryAfterDeadline'): ClusterPlan {
  const observed = observedFromSpec(state.cluster);
  const base = {
    ...state.cluster.status,
    observed,
    progressDeadline: deadlineFrom(state.cluster, state.now),
  };
  const message =
    reason === 'NewTarget'
      ? targetMessage(observed.replicas, observed.version)
      : `the previous target missed its deadline; now ${targetMessage(observed.replicas, observed.version)}`;
  const events: ClusterEvent[] = [{ type: 'Normal', reason, message }];
  return {
    action: { kind: 'none' },
    status: computeStatus(state, base, { active: true, reason, message }),
    events,
  };
}

/** The spec asks for something that must not be adopted: the locked target stays, and status says why. */
function refuseTarget(state: ClusterState, reason: string, message: string): ClusterPlan {
  const current = state.cluster.status ?? {};
  const progress: Progress = { active: false, reason, message };
  const already = current.conditions?.some(
    c => c.type === 'Progressing' && c.reason === reason && c.message === message,
  );
  return {
    action: { kind: 'none' },
    status: {
      ...computeStatus(state, current, progress),
      ...(current.progressDeadline && { progressDeadline: current.progressDeadline }),
    },
    events: already ? [] : [{ type: 'Warning', reason, message }],
  };
}

/**
 * spec.version asks for etcd 3.7 while a member may still replay raft entries of etcd 3.5
 * (../upgrade/wal-guard.ts): nothing is adopted and no member is touched; etcd itself ends the wait
 * (a raft snapshot), and no event says when, so it is checked again with back-off (and on every
 * resync). The message names no moving figure, so the status is written once, not at every check.
 */
function waitForRaftSnapshots(state: ClusterState, message: string): ClusterPlan {
  const current = state.cluster.status ?? {};
  const already = current.conditions?.some(
    c => c.type === 'Progressing' && c.reason === WAITING_FOR_RAFT_SNAPSHOT,
  );
  return {
    action: { kind: 'recheck', reason: 'waiting for raft snapshots past the etcd 3.5 entries' },
    status: {
      ...computeStatus(state, current, working(WAITING_FOR_RAFT_SNAPSHOT, message)),
      ...(current.progressDeadline && { progressDeadline: current.progressDeadline }),
    },
    events: already ? [] : [{ type: 'Normal', reason: WAITING_FOR_RAFT_SNAPSHOT, message }],
  };
}

/** status.legacyRaftEntries brought up to date (see ../upgrade/wal-guard.ts). */
function withLegacyRaftEntries(state: ClusterState, plan: ClusterPlan): ClusterPlan {
  if (isDeleting(state.cluster)) return plan;
  const formsNow = plan.status.clusterID !== undefined && !state.cluster.status?.clusterID;
  const record = legacyRaftEntries(state, formsNow);
  const { legacyRaftEntries: _, ...rest } = plan.status;
  return { ...plan, status: record ? { ...rest, legacyRaftEntries: record } : rest };
}

function deadlineExceeded(state: ClusterState): ClusterPlan {
  const current = state.cluster.status ?? {};
  const observed = current.observed!;
  const seconds = state.cluster.spec.progressDeadlineSeconds ?? 600;
  const troubled = runningMembers(state).find(m => podOf(state, m)?.problem);
  const trouble = troubled ? `; member ${troubled.metadata.name}${podTrouble(state, troubled)}` : '';
  const progress: Progress = current.clusterID
    ? {
        active: false,
        reason: 'DeadlineExceeded',
        message: `could not reach ${targetMessage(observed.replicas, observed.version)} within ${seconds}s${trouble}; see the members' conditions and Pods, then edit the spec to retry or delete the cluster`,
      }
    : {
        active: false,
        reason: 'BootstrapFailed',
        message: `the cluster did not form within ${seconds}s${trouble}; fix the cause, then delete and recreate the cluster`,
      };
  // The deadline stays in status so the failure is stable until the user acts.
  const status = { ...computeStatus(state, current, progress), progressDeadline: current.progressDeadline };
  const already = current.conditions?.some(c => c.type === 'Progressing' && c.reason === progress.reason);
  const events: ClusterEvent[] = already
    ? []
    : [{ type: 'Warning', reason: progress.reason, message: progress.message }];
  return { action: { kind: 'none' }, status, events };
}

function planTowardTarget(state: ClusterState, complete: boolean): ClusterPlan {
  const current = state.cluster.status ?? {};
  const desired = current.observed!.replicas;
  const plan = (
    action: ClusterAction,
    progress: Progress,
    base: EtcdClusterStatus = current,
    events: ClusterEvent[] = [],
  ) => ({
    action,
    status: computeStatus(state, base, progress),
    events,
  });
  const done: Progress = {
    active: false,
    reason: desired === 0 ? 'Paused' : 'Reconciled',
    message: desired === 0 ? 'paused' : `${targetMessage(desired, current.observed!.version)}: reached`,
  };

  // Owned objects carry their changes in the plan: the act layer applies them as they are.
  const services = servicesChanges(state);
  if (services) {
    const creating = working('CreatingServices', 'creating Services');
    return { ...plan({ kind: 'ensure-services' }, complete ? done : creating), owned: services };
  }
  const networkPolicy = networkPolicyChanges(state);
  if (networkPolicy) {
    const creating = working('CreatingNetworkPolicy', 'creating the NetworkPolicy');
    return { ...plan({ kind: 'ensure-network-policy' }, complete ? done : creating), owned: networkPolicy };
  }
  if (!current.clusterID) return planBootstrap(state, plan);
  const space = planSpaceRecovery(state);
  if (space) return plan(space.action, space.progress, current, space.events);
  const membership = planMembership(state, desired);
  if (membership)
    return plan(membership.action, membership.progress, membership.base ?? current, membership.events);
  const volumes = planVolumeGrowth(state);
  if (volumes) return plan(volumes.action, volumes.progress, current, volumes.events);
  const pdb = pdbChanges(state);
  if (pdb) return { ...plan({ kind: 'ensure-pdb' }, done), owned: pdb };
  const defrag = complete ? planDefrag(state, complete) : undefined;
  if (defrag) return plan(defrag.action, defrag.progress, defrag.base);
  return plan({ kind: 'none' }, done);
}

/** The locked target is reached: the members etcd has are the members asked for, all ready. */
export function isComplete(state: ClusterState): boolean {
  const current = state.cluster.status ?? {};
  const desired = current.observed?.replicas ?? -1;
  const running = runningMembers(state);
  if (current.operation || running.length !== desired) return false;
  const held = heldMember(state);
  if (state.members.some(m => isDeleting(m) && m !== held)) return false;
  if (desired === 0) return true;
  if (!current.clusterID || !running.every(m => isMemberReady(state, m))) return false;
  const etcd = state.etcd;
  if (!etcd?.reachable) return false;
  if (outdatedMembers(state, running).length > 0 || upgradingMembers(state, running).length > 0) return false;
  return etcd.members.length === desired && etcd.members.every(e => !e.isLearner);
}
