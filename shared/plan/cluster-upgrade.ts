// reconcile-cluster's decision for a rolling upgrade: one member at a time, leadership moved off a
// member before it is replaced.
import type { EtcdMember } from '../api/etcd-member.ts';
import { isMemoryMedium } from '../builders/storage.ts';
import type { ClusterState } from './cluster-state.ts';
import { activeMembers, isMemberReady, membershipOf, newestFirst } from './members.ts';
import { podTrouble, working, type MembershipStep } from './cluster-step.ts';

/** The locked target release. */
const targetOf = (state: ClusterState): string | undefined => state.cluster.status?.observed?.version;

/** Members whose spec is still on an older release than the target. */
export function outdatedMembers(state: ClusterState, running: EtcdMember[]): EtcdMember[] {
  const target = targetOf(state);
  return running.filter(m => m.spec.version !== target);
}

/**
 * Members set to the target whose etcd has not reported running it yet. `strict`: a member that
 * has reported no version yet (a new Pod) counts too — for pacing; completion only waits for
 * members known to run another release.
 */
export function upgradingMembers(state: ClusterState, running: EtcdMember[], strict = false): EtcdMember[] {
  const target = targetOf(state);
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
export function planUpgrade(state: ClusterState, running: EtcdMember[]): MembershipStep | undefined {
  const target = targetOf(state) ?? '';
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

export function isLeader(state: ClusterState, member: EtcdMember): boolean {
  const etcd = state.etcd?.reachable ? state.etcd : undefined;
  if (!etcd?.leaderId) return false;
  return membershipOf(state.cluster, member, etcd.members)?.id === etcd.leaderId;
}

/**
 * When `member` leads, the etcd ID of a started voter to hand leadership to, one of `candidates`;
 * undefined when `member` does not lead or no candidate is a started voter.
 */
export function leaderSuccessor(
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

/** 3.5.16 → 3005: a number whose difference counts minor releases (within one major). */
function minorOf(version: string | undefined): number | undefined {
  const match = /^(\d+)\.(\d+)\./.exec(version ?? '');
  return match ? Number(match[1]) * 1000 + Number(match[2]) : undefined;
}

/**
 * etcd upgrades one minor release at a time. The CRD refuses a spec edit that skips a minor, but two
 * edits in a row (3.4 → 3.5 while the cluster still runs 3.4, then 3.5 → 3.6) pass it: a target is
 * adopted only when no member (running or paused) would skip a minor to reach it, whether the
 * previous target was reached or its deadline passed. Returns why not, or undefined.
 */
export function minorSkip(state: ClusterState): string | undefined {
  const wanted = state.cluster.spec.version;
  const target = minorOf(wanted);
  if (target === undefined) return undefined;
  for (const member of activeMembers(state)) {
    for (const version of [member.spec.version, member.status?.version]) {
      const have = minorOf(version);
      if (have !== undefined && target > have + 1) {
        return `spec.version ${wanted} is more than one minor release ahead of member ${member.metadata.name}, which runs etcd ${version}; etcd upgrades one minor release at a time: set spec.version to a release of the next minor first`;
      }
    }
  }
  return undefined;
}
