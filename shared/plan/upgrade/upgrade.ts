// reconcile-cluster's decision for a rolling upgrade: one member at a time, leadership moved off a
// member before it is replaced.
import type { EtcdMember } from '../../api/etcd-member.ts';
import { isMemoryMedium } from '../../builders/storage.ts';
import type { ClusterState } from '../cluster/types.ts';
import { isMemberReady, membershipOf, newestFirst, podOf } from '../cluster/members.ts';
import { podTrouble, working, type MembershipStep, type Progress } from '../cluster/step.ts';
import { downgradeInPlay, downgradeStep } from './downgrade.ts';
import { isMinorDowngrade } from './version-moves.ts';

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
  const verb = downgradeInPlay(state) ? 'Downgrading' : 'Upgrading';
  const waitFor = (why: string): MembershipStep => ({
    action: { kind: 'wait', reason: why },
    progress: working(verb, `${why} (${tally})`),
  });
  if (isMemoryMedium(state.cluster.spec.storage) && running.length < 3) {
    return waitFor(
      `a Memory-medium cluster of ${running.length} member${running.length === 1 ? '' : 's'} cannot be upgraded without losing its data (each member is replaced); scale it to 3 first, or set spec.version back to ${outdated[0]?.spec.version ?? 'the running version'}`,
    );
  }
  const unpulled = upgrading.find(m => isPullFailure(podOf(state, m)?.problem));
  if (unpulled) return { action: { kind: 'none' }, progress: versionNotPulled(state, unpulled, running) };
  const inFlight = upgrading[0];
  if (inFlight)
    return waitFor(
      `waiting for ${inFlight.metadata.name} to run etcd ${target}${podTrouble(state, inFlight)}`,
    );
  // A member set to a release its Pod cannot pull (the previous target) is down already: rolling it
  // to the new target first costs nothing more, and it is the only way it comes back.
  const stuck = outdated.find(m => !isMemberReady(state, m) && isPullFailure(podOf(state, m)?.problem));
  if (stuck) return upgradeStep(stuck, target, tally);
  const unready = running.find(m => !isMemberReady(state, m));
  if (unready)
    return waitFor(
      `waiting for member ${unready.metadata.name} to be ready before upgrading the next one${podTrouble(state, unready)}`,
    );
  const victim = newestFirst(outdated).find(m => !isLeader(state, m)) ?? outdated[0];
  const name = victim.metadata.name ?? '';
  const downgrade = downgradeStep(state, victim, target, tally);
  if (downgrade) return downgrade;
  const successor = leaderSuccessor(
    state,
    victim,
    running.filter(m => m !== victim && m.spec.version === target),
  );
  if (successor) {
    return {
      action: { kind: 'move-leader', from: name, toId: successor },
      progress: working(
        verb,
        `moving leadership off ${name} before ${verb === 'Upgrading' ? 'upgrading' : 'downgrading'} it (${tally})`,
      ),
    };
  }
  return upgradeStep(victim, target, tally);
}

function upgradeStep(victim: EtcdMember, target: string, tally: string): MembershipStep {
  const name = victim.metadata.name ?? '';
  const from = victim.spec.version;
  const down = isMinorDowngrade(victim.status?.version ?? from, target);
  const why = `${down ? 'downgrading' : 'upgrading'} member ${name} from etcd ${from} to ${target}`;
  return {
    action: { kind: 'upgrade-member', member: name, from, version: target },
    progress: working(down ? 'Downgrading' : 'Upgrading', `${why} (${tally})`),
    events: [{ type: 'Normal', reason: down ? 'DowngradingMember' : 'UpgradingMember', message: why }],
  };
}

/** A kubelet's words for an image it cannot pull (the tag does not exist, or no access to it). */
export function isPullFailure(problem: string | undefined): boolean {
  return /^(ErrImagePull|ImagePullBackOff|InvalidImageName)\b/.test(problem ?? '');
}

/**
 * The roll-out stops on a member whose Pod cannot pull the target's image: most often a version
 * that was never released. Nothing else is changed; a new spec.version is taken at once
 * (upgradeStalledOnPull) and rolls that member first.
 */
function versionNotPulled(state: ClusterState, member: EtcdMember, running: EtcdMember[]): Progress {
  const target = targetOf(state) ?? '';
  const others = [
    ...new Set(running.filter(m => m !== member).map(m => m.status?.version ?? m.spec.version)),
  ];
  const back = others.length > 0 ? ` (the other members run ${others.join(', ')})` : '';
  return {
    active: false,
    reason: 'VersionNotPulled',
    message: `stopped: the Pod of member ${member.metadata.name} cannot pull etcd ${target} (${podOf(state, member)?.problem}); check that ${target} is a released etcd version and that its image can be pulled, then set spec.version to a released version${back}; the other members are left as they are`,
  };
}

/** Whether the roll-out is stopped on an image that cannot be pulled (a new spec is taken at once). */
export function upgradeStalledOnPull(state: ClusterState, running: EtcdMember[]): boolean {
  return upgradingMembers(state, running, true).some(m => isPullFailure(podOf(state, m)?.problem));
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
