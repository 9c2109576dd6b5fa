// reconcile-cluster's decision: given everything observed, the single next step toward the locked
// target, and the status that describes the world after deciding it. Pure: no I/O, no clock (the
// time is part of the state), so every branch is a row in a table test.
import type { V1NetworkPolicy, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { EtcdClusterStatus } from '../api/etcd-cluster.ts';
import { buildNetworkPolicy, networkPolicyDrift } from '../builders/network-policy.ts';
import { buildPdb, pdbDrift } from '../builders/pdb.ts';
import { isMemoryMedium } from '../builders/storage.ts';
import { buildClientService, buildHeadlessService, serviceDrift } from '../builders/services.ts';
import type { EtcdMember } from '../api/etcd-member.ts';
import { clusterToken } from '../names.ts';
import type { ClusterState } from './cluster-state.ts';
import { computeStatus, type Progress } from './cluster-status.ts';
import {
  activeMembers,
  isDeleting,
  isMemberReady,
  memberName,
  membershipOf,
  memberUrls,
  newestFirst,
  podOf,
  runningMembers,
} from './members.ts';
import { deadlineFrom, deadlinePassed, observedFromSpec, specDiffersFromObserved } from './target.ts';

/** A step that changes membership or creates a member: claimed in status before it starts. */
export interface AddMemberOperation {
  type: 'add-member';
  member: string;
  bootstrap: boolean;
  startedAt: string;
}

export type ClusterAction =
  /** Nothing to do but (maybe) write the status. */
  | { kind: 'none' }
  /** Waiting for something outside this invocation (a Pod to start, a finalizer to run). */
  | { kind: 'wait'; reason: string }
  | { kind: 'ensure-services' }
  | { kind: 'ensure-pdb' }
  | { kind: 'ensure-network-policy' }
  /** Write status (with the operation) first; only the winner of that write runs it. */
  | { kind: 'claim'; operation: AddMemberOperation }
  /** An operation is recorded in status: carry it on (every part of it is idempotent). */
  | { kind: 'resume'; operation: AddMemberOperation }
  | { kind: 'set-dormant'; member: string; dormant: boolean }
  | { kind: 'promote'; member: string; id: string }
  /** etcd says voter but the EtcdMember does not know yet. */
  | { kind: 'mark-voter'; member: string }
  | { kind: 'move-leader'; from: string; toId: string }
  /** Set one member's version; reconcile-member then replaces its Pod on the same volume. */
  | { kind: 'upgrade-member'; member: string; from: string; version: string }
  | { kind: 'delete-member'; member: string }
  | { kind: 'remove-orphan'; id: string; peerURL: string };

export interface ClusterEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface ClusterPlan {
  action: ClusterAction;
  /** The status to hold after this step; written only if it differs from the current one. */
  status: EtcdClusterStatus;
  events: ClusterEvent[];
}

export function planCluster(state: ClusterState): ClusterPlan {
  const cluster = state.cluster;
  const current = cluster.status ?? {};
  if (isDeleting(cluster)) return { action: { kind: 'none' }, status: current, events: [] };
  if (!current.clusterToken || !current.observed) return initialTarget(state);
  if (current.operation) {
    const operation = current.operation as unknown as AddMemberOperation;
    const progress = { active: true, reason: 'AddingMember', message: `adding member ${operation.member}` };
    return {
      action: { kind: 'resume', operation },
      status: computeStatus(state, current, progress),
      events: [],
    };
  }
  const complete = isComplete(state);
  if (specDiffersFromObserved(cluster) && (complete || deadlinePassed(cluster, state.now))) {
    return adoptSpec(state, complete ? 'NewTarget' : 'RetryAfterDeadline');
  }
  if (!complete && deadlinePassed(cluster, state.now)) return deadlineExceeded(state);
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

  if (needsServices(state))
    return plan(
      { kind: 'ensure-services' },
      complete ? done : working('CreatingServices', 'creating Services'),
    );
  if (needsNetworkPolicy(state))
    return plan(
      { kind: 'ensure-network-policy' },
      complete ? done : working('CreatingNetworkPolicy', 'creating the NetworkPolicy'),
    );
  if (!current.clusterID) return planBootstrap(state, plan);
  const membership = planMembership(state, desired);
  if (membership)
    return plan(membership.action, membership.progress, membership.base ?? current, membership.events);
  if (needsPdb(state)) return plan({ kind: 'ensure-pdb' }, done);
  return plan({ kind: 'none' }, done);
}

type PlanFn = (
  action: ClusterAction,
  progress: Progress,
  base?: EtcdClusterStatus,
  events?: ClusterEvent[],
) => ClusterPlan;

function planBootstrap(state: ClusterState, plan: PlanFn): ClusterPlan {
  const current = state.cluster.status ?? {};
  const desired = current.observed!.replicas;
  if (desired === 0)
    return plan({ kind: 'none' }, { active: false, reason: 'Paused', message: 'paused before bootstrap' });
  const seed = activeMembers(state).find(m => m.spec.bootstrap === true);
  if (!seed) {
    const claim = newMemberClaim(state, true);
    return plan(
      { kind: 'claim', operation: claim.operation },
      working('Bootstrapping', claim.why),
      claim.base,
    );
  }
  const name = seed.metadata.name ?? '';
  const etcd = state.etcd;
  if (etcd?.reachable) {
    const only = etcd.members.length === 1 ? etcd.members[0] : undefined;
    if (only && (only.name === name || only.peerURLs.includes(memberUrls(state.cluster, name).peer))) {
      const base = { ...current, clusterID: etcd.clusterId };
      const message = `etcd cluster ${etcd.clusterId} formed with seed member ${name}`;
      return plan({ kind: 'none' }, working('Bootstrapped', message), base, [
        { type: 'Normal', reason: 'ClusterFormed', message },
      ]);
    }
  }
  const why = !isMemberReady(state, seed)
    ? `waiting for the seed member ${name} to start${podTrouble(state, seed)}`
    : `waiting for the seed member ${name} to answer: ${etcd && !etcd.reachable ? etcd.error : 'no answer yet'}`;
  return plan({ kind: 'wait', reason: why }, working('WaitingForSeed', why));
}

interface MembershipStep {
  action: ClusterAction;
  progress: Progress;
  base?: EtcdClusterStatus;
  events?: ClusterEvent[];
}

function planMembership(state: ClusterState, desired: number): MembershipStep | undefined {
  const deleting = state.members.find(isDeleting);
  if (deleting) {
    const why = `removing member ${deleting.metadata.name} from etcd`;
    return { action: { kind: 'wait', reason: why }, progress: working('ScalingDown', why) };
  }
  const etcd = state.etcd?.reachable ? state.etcd : undefined;
  if (etcd) {
    const orphan = etcd.members.find(e => !state.members.some(m => membershipOf(state.cluster, m, [e])));
    if (orphan) {
      const why = `removing etcd member ${orphan.id} (${orphan.peerURLs[0] ?? 'no peer URL'}), which no EtcdMember stands for`;
      const peerURL = orphan.peerURLs[0] ?? '';
      return {
        action: { kind: 'remove-orphan', id: orphan.id, peerURL },
        progress: working('RemovingOrphan', why),
      };
    }
    const learnerStep = planLearner(state, etcd.members);
    if (learnerStep) return learnerStep;
    // A promotion whose follow-up status patch was lost (a crash between the two): repair it now,
    // or the voters-only client Service and the PDB would leave this voter out until a tick.
    const unmarked = runningMembers(state).find(m => {
      const e = membershipOf(state.cluster, m, etcd.members);
      return e !== undefined && !e.isLearner && m.status?.isVoter !== true;
    });
    if (unmarked) {
      const name = unmarked.metadata.name ?? '';
      return {
        action: { kind: 'mark-voter', member: name },
        progress: working('ScalingUp', `recording ${name} as a voter`),
      };
    }
  }
  const running = runningMembers(state);
  if (running.length < desired) return planScaleUp(state, running);
  if (running.length > desired) return planScaleDown(state, running, desired);
  return planUpgrade(state, running);
}

/** Members whose spec is still on an older release than the target. */
function outdatedMembers(state: ClusterState, running: EtcdMember[]): EtcdMember[] {
  const target = state.cluster.status?.observed?.version;
  return running.filter(m => m.spec.version !== target);
}

/**
 * Members set to the target whose etcd has not reported running it yet. `strict`: a member that
 * has reported no version yet (a new Pod) counts too — for pacing; completion only waits for
 * members known to run another release.
 */
function upgradingMembers(state: ClusterState, running: EtcdMember[], strict = false): EtcdMember[] {
  const target = state.cluster.status?.observed?.version;
  return running.filter(
    m =>
      m.spec.version === target &&
      m.status?.version !== target &&
      (strict || m.status?.version !== undefined),
  );
}

/**
 * Rolling upgrade (patch releases, or one minor forward as the CRD allows): one member at a time,
 * only while every member is ready and the previous one runs the new release; followers first, the
 * leader last once leadership has moved to an upgraded member.
 */
function planUpgrade(state: ClusterState, running: EtcdMember[]): MembershipStep | undefined {
  const target = state.cluster.status?.observed?.version ?? '';
  const outdated = outdatedMembers(state, running);
  const upgrading = upgradingMembers(state, running, outdated.length > 0);
  if (outdated.length === 0 && upgrading.length === 0) return undefined;
  const done = running.length - outdated.length - upgrading.length;
  const tally = `${done}/${running.length} members on ${target}`;
  const waitFor = (why: string): MembershipStep => ({
    action: { kind: 'wait', reason: why },
    progress: working('Upgrading', `${why} (${tally})`),
  });
  if (isMemoryMedium(state.cluster.spec.storage) && running.length < 3) {
    return waitFor(
      `a Memory-medium cluster of ${running.length} member${running.length === 1 ? '' : 's'} cannot be upgraded without losing its data (each member is replaced); scale it to 3 first, or set spec.version back to ${outdated[0]?.spec.version ?? 'the running version'}`,
    );
  }
  const inFlight = upgrading[0];
  if (inFlight)
    return waitFor(
      `waiting for ${inFlight.metadata.name} to run etcd ${target}${podTrouble(state, inFlight)}`,
    );
  const unready = running.find(m => !isMemberReady(state, m));
  if (unready)
    return waitFor(
      `waiting for member ${unready.metadata.name} to be ready before upgrading the next one${podTrouble(state, unready)}`,
    );
  const victim = newestFirst(outdated).find(m => !isLeader(state, m)) ?? outdated[0];
  const name = victim.metadata.name ?? '';
  const successor = leaderSuccessor(
    state,
    victim,
    running.filter(m => m !== victim && m.spec.version === target),
  );
  if (successor) {
    return {
      action: { kind: 'move-leader', from: name, toId: successor },
      progress: working('Upgrading', `moving leadership off ${name} before upgrading it (${tally})`),
    };
  }
  const from = victim.spec.version;
  const why = `upgrading member ${name} from etcd ${from} to ${target}`;
  return {
    action: { kind: 'upgrade-member', member: name, from, version: target },
    progress: working('Upgrading', `${why} (${tally})`),
    events: [{ type: 'Normal', reason: 'UpgradingMember', message: why }],
  };
}

function isLeader(state: ClusterState, member: EtcdMember): boolean {
  const etcd = state.etcd?.reachable ? state.etcd : undefined;
  if (!etcd?.leaderId) return false;
  return membershipOf(state.cluster, member, etcd.members)?.id === etcd.leaderId;
}

/**
 * When `member` leads, the etcd ID of a started voter to hand leadership to, one of `candidates`;
 * undefined when `member` does not lead or no candidate is a started voter.
 */
function leaderSuccessor(
  state: ClusterState,
  member: EtcdMember,
  candidates: EtcdMember[],
): string | undefined {
  const etcd = state.etcd?.reachable ? state.etcd : undefined;
  if (!etcd || !isLeader(state, member)) return undefined;
  return etcd.members.find(
    e =>
      !e.isLearner &&
      e.started &&
      e.id !== etcd.leaderId &&
      candidates.some(m => membershipOf(state.cluster, m, [e])),
  )?.id;
}

function planLearner(
  state: ClusterState,
  etcdMembers: NonNullable<Extract<ClusterState['etcd'], { reachable: true }>>['members'],
): MembershipStep | undefined {
  const learner = etcdMembers.find(e => e.isLearner);
  if (!learner) return undefined;
  const member = state.members.find(m => membershipOf(state.cluster, m, [learner]));
  const name = member?.metadata.name ?? learner.name;
  if (member && learner.started && isMemberReady(state, member)) {
    const why = `promoting learner ${name} to voter`;
    return { action: { kind: 'promote', member: name, id: learner.id }, progress: working('ScalingUp', why) };
  }
  const why = `waiting for learner ${name} to start and catch up${member ? podTrouble(state, member) : ''}`;
  return { action: { kind: 'wait', reason: why }, progress: working('ScalingUp', why) };
}

function planScaleUp(state: ClusterState, running: EtcdMember[]): MembershipStep {
  const dormant = activeMembers(state).find(m => m.spec.dormant === true);
  if (dormant) {
    const name = dormant.metadata.name ?? '';
    const why = `resuming: starting member ${name} again on its kept data`;
    return {
      action: { kind: 'set-dormant', member: name, dormant: false },
      progress: working('Resuming', why),
      events: [{ type: 'Normal', reason: 'Resuming', message: why }],
    };
  }
  const unready = running.find(m => !isMemberReady(state, m));
  if (unready) {
    const why = `waiting for member ${unready.metadata.name} to be ready before adding the next one${podTrouble(state, unready)}`;
    return { action: { kind: 'wait', reason: why }, progress: working('ScalingUp', why) };
  }
  const claim = newMemberClaim(state, false);
  return {
    action: { kind: 'claim', operation: claim.operation },
    progress: working('ScalingUp', claim.why),
    base: claim.base,
  };
}

function planScaleDown(state: ClusterState, running: EtcdMember[], desired: number): MembershipStep {
  const [victim] = newestFirst(running);
  const name = victim?.metadata.name ?? '';
  if (desired === 0 && running.length === 1) {
    const why = `pausing: stopping member ${name} and keeping its data`;
    return {
      action: { kind: 'set-dormant', member: name, dormant: true },
      progress: working('Pausing', why),
      events: [{ type: 'Normal', reason: 'Pausing', message: why }],
    };
  }
  const successor =
    victim &&
    leaderSuccessor(
      state,
      victim,
      running.filter(m => m !== victim && isMemberReady(state, m)),
    );
  if (successor) {
    const why = `moving leadership off ${name} before removing it`;
    return {
      action: { kind: 'move-leader', from: name, toId: successor },
      progress: working('ScalingDown', why),
    };
  }
  const why = `removing member ${name} (${running.length} → ${desired})`;
  return {
    action: { kind: 'delete-member', member: name },
    progress: working('ScalingDown', why),
    events: [{ type: 'Normal', reason: 'ScalingDown', message: why }],
  };
}

/** The next member's name comes from a counter in status, so a name is never used twice. */
function newMemberClaim(
  state: ClusterState,
  bootstrap: boolean,
): { operation: AddMemberOperation; base: EtcdClusterStatus; why: string } {
  const current = state.cluster.status ?? {};
  const ordinal = current.nextMemberOrdinal ?? 0;
  const operation: AddMemberOperation = {
    type: 'add-member',
    member: memberName(state.cluster.metadata.name ?? '', ordinal),
    bootstrap,
    startedAt: state.now.toISOString(),
  };
  const base: EtcdClusterStatus = {
    ...current,
    nextMemberOrdinal: ordinal + 1,
    operation: operation as unknown as Record<string, unknown>,
  };
  const why = bootstrap
    ? `creating the seed member ${operation.member}`
    : `adding member ${operation.member}`;
  return { operation, base, why };
}

/** The locked target is reached: the members etcd has are the members asked for, all ready. */
export function isComplete(state: ClusterState): boolean {
  const current = state.cluster.status ?? {};
  const desired = current.observed?.replicas ?? -1;
  const running = runningMembers(state);
  if (current.operation || running.length !== desired) return false;
  if (state.members.some(isDeleting)) return false;
  if (desired === 0) return true;
  if (!current.clusterID || !running.every(m => isMemberReady(state, m))) return false;
  const etcd = state.etcd;
  if (!etcd?.reachable) return false;
  if (outdatedMembers(state, running).length > 0 || upgradingMembers(state, running).length > 0) return false;
  return etcd.members.length === desired && etcd.members.every(e => !e.isLearner);
}

function needsServices(state: ClusterState): boolean {
  const { headless, client } = state.services;
  if (!headless || !client) return true;
  return (
    serviceDrift(headless, buildHeadlessService(state.cluster)) !== undefined ||
    serviceDrift(client, buildClientService(state.cluster)) !== undefined
  );
}

/** Voters as etcd counts them; as the members last recorded when etcd did not answer. */
export function voterCount(state: ClusterState): number {
  if (state.etcd?.reachable) return state.etcd.members.filter(e => !e.isLearner).length;
  return runningMembers(state).filter(m => m.status?.isVoter === true).length;
}

export function desiredPdb(state: ClusterState): V1PodDisruptionBudget | undefined {
  return buildPdb(state.cluster, { voters: voterCount(state) });
}

export function desiredNetworkPolicy(state: ClusterState): V1NetworkPolicy | undefined {
  return buildNetworkPolicy(state.cluster, { operatorNamespace: state.operatorNamespace });
}

function needsNetworkPolicy(state: ClusterState): boolean {
  const desired = desiredNetworkPolicy(state);
  if (!desired) return state.networkPolicy !== undefined;
  return !state.networkPolicy || networkPolicyDrift(state.networkPolicy, desired) !== undefined;
}

function needsPdb(state: ClusterState): boolean {
  const desired = desiredPdb(state);
  if (!desired) return state.pdb !== undefined;
  return !state.pdb || pdbDrift(state.pdb, desired) !== undefined;
}

/** What keeps a member's Pod from running, and what a person can do about it. */
function podTrouble(state: ClusterState, member: EtcdMember): string {
  const problem = podOf(state, member)?.problem;
  if (!problem) return '';
  const hint = /Image|image/.test(problem)
    ? 'check spec.version (a released etcd 3.4, 3.5 or 3.6) and that the etcd image can be pulled'
    : "see the Pod's logs";
  return `: its Pod cannot run (${problem}); ${hint}`;
}

function working(reason: string, message: string): Progress {
  return { active: true, reason, message };
}

function targetMessage(replicas: number, version: string): string {
  return replicas === 0
    ? 'pause the cluster (0 members)'
    : `${replicas} member${replicas === 1 ? '' : 's'} of etcd ${version}`;
}
