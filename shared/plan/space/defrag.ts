// The defragmentation policy (spec.maintenance.defrag): a member whose database file holds more
// unused space than the threshold allows is defragmented, one member per step, followers first by
// name and the leader last, and only on a healthy, idle cluster (a defragmentation stops the member
// it runs on for as long as it rewrites the file, so it must never take out one of too few).
//
// Memory across a crash: the member being defragmented is claimed in status.operation (written
// with resourceVersion before the defragmentation starts), so no other member is started while it
// is there. Whether the claimed member is done is re-derived from etcd: once defragmented, its
// unused space is below the threshold, so it is not defragmented again. A claim still due after
// DEFRAG_LEASE_MS was left by an invocation that died: it is taken over (or dropped, if the
// cluster is no longer fit for it).
import type { EtcdClusterStatus } from '../../api/etcd-cluster.ts';
import type { EtcdCluster } from '../../api/etcd-cluster.ts';
import { parseQuantity, quantityToNumber } from '../../quantity.ts';
import type { ClusterState } from '../cluster/types.ts';
import type { ClusterEvent, MembershipStep } from '../cluster/step.ts';
import { isMemberReady, memberUrls, membershipOf, runningMembers } from '../cluster/members.ts';
import { specDiffersFromObserved } from '../cluster/target.ts';
import { scheduledRun, statusWithoutClaim } from './defrag-schedule.ts';
import type { MemberSpace } from './types.ts';
import type { DefragOperation } from '../../api/cluster-operation.ts';

export interface Threshold {
  /** Share of dbSize, 0..1. */
  fraction: number;
  minBytes: number;
}

/** How long a claim protects its member from a second defragmentation by another invocation. */
export const DEFRAG_LEASE_MS = 60_000;
export const DEFAULT_UNUSED_FRACTION = 0.5;
export const DEFAULT_MIN_UNUSED_BYTES = 100 * 1024 * 1024;

export type DefragDecision =
  /** No policy. */
  | { step: 'off' }
  /** A policy, but the cluster is not fit for a defragmentation now. */
  | { step: 'hold'; why: string }
  | { step: 'nothing-due' }
  /** Claim `member` (again, when `retake`) and defragment it. */
  | {
      step: 'defragment';
      member: string;
      endpoint: string;
      why: string;
      retake: boolean;
      run?: string;
      dbSizeBefore?: number;
    }
  /** The claimed member's defragmentation is (or may be) still running. */
  | { step: 'await'; member: string; why: string }
  /** Drop the claim: the member is done, gone, or the claim expired on an unfit cluster. */
  | { step: 'finish'; member: string; why: string; done?: boolean };

export function thresholdOf(cluster: EtcdCluster): Threshold | undefined {
  const policy = cluster.spec.maintenance?.defrag;
  if (!policy) return undefined;
  const t = policy.threshold ?? {};
  return {
    fraction: t.unusedFraction === undefined ? DEFAULT_UNUSED_FRACTION : parseFraction(t.unusedFraction),
    minBytes:
      t.minUnusedBytes === undefined
        ? DEFAULT_MIN_UNUSED_BYTES
        : typeof t.minUnusedBytes === 'number'
          ? t.minUnusedBytes
          : quantityToNumber(parseQuantity(t.minUnusedBytes)),
  };
}

/** "0.5" → 0.5, "50%" → 0.5 (the CRD's pattern admits only these two forms). */
export function parseFraction(text: string): number {
  const percent = text.endsWith('%');
  const value = Number(percent ? text.slice(0, -1) : text);
  return percent ? value / 100 : value;
}

export const unusedOf = (s: MemberSpace): number => Math.max(0, s.dbSize - s.dbSizeInUse);

export function isDue(space: MemberSpace, t: Threshold): boolean {
  const unused = unusedOf(space);
  return unused > t.minBytes && unused > t.fraction * space.dbSize;
}

export function dueReason(space: MemberSpace, t: Threshold): string {
  const share = space.dbSize > 0 ? Math.round((unusedOf(space) / space.dbSize) * 100) : 0;
  return `${size(unusedOf(space))} of its ${size(space.dbSize)} database unused (${share} %), above the policy's ${Math.round(t.fraction * 100)} % and ${size(t.minBytes)}`;
}

/** Sizes for people: KiB below one MiB (a defragmented small database is a few pages). */
export const size = (bytes: number): string =>
  bytes < 1024 * 1024
    ? `${Math.round(bytes / 1024)} KiB`
    : `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

export function defragOperation(status: EtcdClusterStatus | undefined): DefragOperation | undefined {
  const op = status?.operation;
  // The member is checked too: status is read back from the API server, not from this code.
  return op?.type === 'defrag' && typeof op.member === 'string' ? op : undefined;
}

/**
 * The policy's next step. `complete`: the locked target is reached (planCluster's isComplete), so
 * no scaling, upgrade or replacement is under way.
 */
export function decideDefrag(state: ClusterState, complete: boolean): DefragDecision {
  const claim = defragOperation(state.cluster.status);
  if (claim)
    return claim.run ? decideScheduledClaim(state, claim, complete) : decideClaimed(state, claim, complete);
  const order = followersThenLeader(state);
  const run = scheduledRun(state.cluster, order, state.now);
  if (run.step === 'run') return decideScheduled(state, complete, run.record.lastRun!, run.remaining[0]);
  const threshold = thresholdOf(state.cluster);
  if (!threshold) return { step: 'off' };
  const unfit = unfitBecause(state, complete);
  if (unfit) return { step: 'hold', why: unfit };
  const silent = order.find(name => !state.space?.[name]);
  if (silent) return { step: 'hold', why: `${silent} did not report its database size` };
  for (const name of order) {
    const space = state.space![name]!;
    if (isDue(space, threshold))
      return {
        step: 'defragment',
        member: name,
        endpoint: memberUrls(state.cluster, name).client,
        why: dueReason(space, threshold),
        retake: false,
      };
  }
  return { step: 'nothing-due' };
}

/** A scheduled run's next member: every member once, whatever its unused space. */
function decideScheduled(
  state: ClusterState,
  complete: boolean,
  run: string,
  member: string,
): DefragDecision {
  const unfit = unfitBecause(state, complete);
  if (unfit) return { step: 'hold', why: unfit };
  const space = state.space?.[member];
  if (!space) return { step: 'hold', why: `${member} did not report its database size` };
  return {
    step: 'defragment',
    member,
    endpoint: memberUrls(state.cluster, member).client,
    why: `the scheduled run due at ${run}`,
    retake: false,
    run,
    dbSizeBefore: space.dbSize,
  };
}

/**
 * A scheduled claim: the member is done once its file shrank below its size when claimed (only a
 * defragmentation shrinks it) and it serves again; a claim left by a crash before that is taken over.
 */
function decideScheduledClaim(
  state: ClusterState,
  claim: DefragOperation,
  complete: boolean,
): DefragDecision {
  const member = runningMembers(state).find(m => m.metadata.name === claim.member);
  if (!member) return { step: 'finish', member: claim.member, why: `${claim.member} is gone` };
  const space = state.space?.[claim.member];
  const shrank = space !== undefined && claim.dbSizeBefore !== undefined && space.dbSize < claim.dbSizeBefore;
  if (shrank && isMemberReady(state, member))
    return {
      step: 'finish',
      member: claim.member,
      why: `${claim.member} is defragmented and serving`,
      done: true,
    };
  const age = state.now.getTime() - Date.parse(claim.startedAt);
  if (age < DEFRAG_LEASE_MS)
    return { step: 'await', member: claim.member, why: `defragmenting ${claim.member} (${claim.why})` };
  const unfit = state.cluster.spec.maintenance?.defrag?.schedule
    ? unfitBecause(state, complete, true)
    : 'the schedule was removed';
  if (unfit) return { step: 'finish', member: claim.member, why: `gave up on ${claim.member}: ${unfit}` };
  if (!space)
    return { step: 'await', member: claim.member, why: `${claim.member} does not report its database size` };
  return {
    step: 'defragment',
    member: claim.member,
    endpoint: memberUrls(state.cluster, claim.member).client,
    why: claim.why,
    retake: true,
    run: claim.run!,
    dbSizeBefore: claim.dbSizeBefore ?? space.dbSize,
  };
}

function decideClaimed(state: ClusterState, claim: DefragOperation, complete: boolean): DefragDecision {
  const member = runningMembers(state).find(m => m.metadata.name === claim.member);
  if (!member) return { step: 'finish', member: claim.member, why: `${claim.member} is gone` };
  const threshold = thresholdOf(state.cluster);
  const space = state.space?.[claim.member];
  const due = threshold !== undefined && space !== undefined && isDue(space, threshold);
  const ready = isMemberReady(state, member);
  if (space && !due && ready)
    return { step: 'finish', member: claim.member, why: `${claim.member} is defragmented and serving` };
  const age = state.now.getTime() - Date.parse(claim.startedAt);
  if (age < DEFRAG_LEASE_MS)
    return { step: 'await', member: claim.member, why: `defragmenting ${claim.member} (${claim.why})` };
  const unfit = threshold ? unfitBecause(state, complete, true) : 'the policy was removed';
  if (unfit) return { step: 'finish', member: claim.member, why: `gave up on ${claim.member}: ${unfit}` };
  if (!due || !space)
    return { step: 'finish', member: claim.member, why: `${claim.member} is no longer due` };
  return {
    step: 'defragment',
    member: claim.member,
    endpoint: memberUrls(state.cluster, claim.member).client,
    why: dueReason(space, threshold),
    retake: true,
  };
}

/** Why the cluster must not lose a member for a while now; undefined when it may. */
export function unfitBecause(state: ClusterState, complete: boolean, ownClaim = false): string | undefined {
  const etcd = state.etcd;
  if (!etcd?.reachable) return 'etcd does not answer';
  if (etcd.alarms?.includes('CORRUPT')) return 'a CORRUPT alarm is raised';
  if (etcd.alarms?.length)
    return `an alarm is raised (${etcd.alarms.join(', ')}): NOSPACE has its own recovery`;
  const status = state.cluster.status ?? {};
  if (status.operation && !ownClaim) return `another operation runs (${status.operation.type})`;
  if (status.replacement) return `member ${status.replacement.member} is being replaced`;
  if (status.inPlaceRestore && status.inPlaceRestore.step !== 'Done') return 'an in-place restore runs';
  if (specDiffersFromObserved(state.cluster)) return 'a new target (scaling or upgrade) is pending';
  const running = runningMembers(state);
  for (const m of running) {
    const name = m.metadata.name ?? '';
    if (!isMemberReady(state, m)) return `the cluster is degraded: ${name} is not ready`;
    const membership = membershipOf(state.cluster, m, etcd.members);
    if (!membership || membership.isLearner) return `${name} is not a voter`;
  }
  if (running.length !== etcd.members.length) return "etcd's members differ from the EtcdMembers";
  if (!complete) return 'the cluster is changing (scaling, upgrade or replacement)';
  return undefined;
}

/** Running members by name, the leader last. */
export function followersThenLeader(state: ClusterState): string[] {
  const etcd = state.etcd?.reachable ? state.etcd : undefined;
  const leaderOf = (name: string) => {
    const m = runningMembers(state).find(x => x.metadata.name === name);
    const id = m && etcd ? membershipOf(state.cluster, m, etcd.members)?.id : undefined;
    return id !== undefined && id === etcd?.leaderId ? 1 : 0;
  };
  return runningMembers(state)
    .map(m => m.metadata.name ?? '')
    .sort((a, b) => leaderOf(a) - leaderOf(b) || a.localeCompare(b, undefined, { numeric: true }));
}

const progressMessage = (member: string, why: string) =>
  `defragmenting ${member} (${why}); one member at a time, followers first, the leader last`;

/**
 * The decision as a step of planCluster; undefined when the policy has nothing to do now (with a
 * claim: when it is to be dropped, and the cluster planned as if there were none).
 */
export function planDefrag(state: ClusterState, complete: boolean): MembershipStep | undefined {
  const decision = decideDefrag(state, complete);
  const current = state.cluster.status ?? {};
  switch (decision.step) {
    case 'defragment': {
      const operation: DefragOperation = {
        type: 'defrag',
        member: decision.member,
        startedAt: state.now.toISOString(),
        why: decision.why,
        ...(decision.run && { run: decision.run }),
        ...(decision.dbSizeBefore !== undefined && { dbSizeBefore: decision.dbSizeBefore }),
      };
      return {
        action: {
          kind: 'defragment',
          member: decision.member,
          endpoint: decision.endpoint,
          why: decision.why,
        },
        progress: {
          active: true,
          reason: 'Defragmenting',
          message: progressMessage(decision.member, decision.why),
        },
        base: { ...current, operation },
      };
    }
    case 'await': {
      const claim = defragOperation(current)!;
      return {
        action: { kind: 'wait', reason: decision.why },
        progress: {
          active: true,
          reason: 'Defragmenting',
          message: progressMessage(claim.member, claim.why),
        },
      };
    }
    default:
      return undefined;
  }
}

/** A Warning when a claim is dropped without its member done (the cluster became unfit, or the policy went). */
export function defragAbandoned(state: ClusterState, complete: boolean): ClusterEvent | undefined {
  const decision = decideDefrag(state, complete);
  if (decision.step !== 'finish' || !decision.why.startsWith('gave up')) return undefined;
  return { type: 'Warning', reason: 'DefragmentationAbandoned', message: decision.why };
}

/** The state with the defragmentation claim dropped (planned on after a 'finish'). */
export function withoutDefragClaim(state: ClusterState): ClusterState {
  const { operation: _dropped, ...status } = state.cluster.status ?? {};
  return { ...state, cluster: { ...state.cluster, status } };
}

/**
 * The state after a 'finish': the claim dropped and, when the member is done, the member recorded
 * in its scheduled run (so the plan that follows goes on to the next member, never back to it).
 */
export function releasedDefragClaim(state: ClusterState, complete: boolean): ClusterState {
  const claim = defragOperation(state.cluster.status);
  const decision = decideDefrag(state, complete);
  if (!claim || decision.step !== 'finish') return withoutDefragClaim(state);
  const status = statusWithoutClaim(
    state.cluster.status ?? {},
    claim.member,
    claim.run,
    decision.done === true,
  );
  return { ...state, cluster: { ...state.cluster, status } };
}
