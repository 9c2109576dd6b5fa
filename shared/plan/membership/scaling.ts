// reconcile-cluster's decision once etcd has a cluster ID: membership first (members being deleted,
// orphans, learners, unrecorded voters), then scaling toward the target, then upgrading.
import type { EtcdMember } from '../../api/etcd-member.ts';
import type { ClusterState } from '../cluster/types.ts';
import { newMemberClaim } from './bootstrap.ts';
import { planReplacement, staleCrashLoop } from './replacement.ts';
import { leaderSuccessor, planUpgrade } from '../upgrade/upgrade.ts';
import { planHeldMember, planSeedRelease, scaleTarget } from './resume.ts';
import { podTrouble, working, type MembershipStep } from '../cluster/step.ts';
import {
  activeMembers,
  isDeleting,
  isMemberReady,
  isResumeSeed,
  membershipOf,
  newestFirst,
  podOf,
  runningMembers,
} from '../cluster/members.ts';

export function planMembership(state: ClusterState, desired: number): MembershipStep | undefined {
  const held = planHeldMember(state, desired);
  if (held) return held;
  const deleting = state.members.find(m => isDeleting(m) && !isResumeSeed(m));
  if (deleting) {
    const held = !runningMembers(state).some(m => m !== deleting);
    const why = held
      ? `member ${deleting.metadata.name} was deleted but holds the only copy of the cluster's data, so its deletion is held (its PVC is kept); delete the EtcdCluster to delete the data`
      : `removing member ${deleting.metadata.name} from etcd`;
    return { action: { kind: 'wait', reason: why }, progress: working('ScalingDown', why) };
  }
  const etcd = state.etcd?.reachable ? state.etcd : undefined;
  if (etcd) {
    const orphan = findOrphan(state, etcd);
    if (orphan) {
      const why = `removing etcd member ${orphan.id} (${orphan.peerURLs[0] ?? 'no peer URL'}), which no EtcdMember stands for`;
      const peerURL = orphan.peerURLs[0] ?? '';
      return {
        action: { kind: 'remove-orphan', id: orphan.id, peerURL },
        progress: working('RemovingOrphan', why),
      };
    }
    // A learner crash-looping with settings the target no longer has never catches up: it is
    // replaced (below) rather than waited for.
    const staleLoop = runningMembers(state).some(m => staleCrashLoop(state, m) !== undefined);
    const learnerStep = staleLoop ? undefined : planLearner(state, etcd.members);
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
  const replacing = planReplacement(state);
  if (replacing) return replacing;
  const running = runningMembers(state);
  const target = scaleTarget(state, desired);
  if (running.length < target) return planScaleUp(state, running);
  if (running.length > target) return planScaleDown(state, running, desired);
  return planSeedRelease(state, desired) ?? planUpgrade(state, running);
}

type ReachableView = Extract<NonNullable<ClusterState['etcd']>, { reachable: true }>;

/**
 * An etcd member no EtcdMember of this cluster stands for. Only when etcd answered as this cluster
 * (the recorded cluster ID): a view from another cluster reachable under the same DNS names (one
 * deleted and recreated under the same name) must never lose members to this one. The EtcdMembers
 * are this cluster's own (ownerReference UID; see ownMembers).
 */
function findOrphan(state: ClusterState, etcd: ReachableView): ReachableView['members'][number] | undefined {
  if (etcd.clusterId !== state.cluster.status?.clusterID) return undefined;
  return etcd.members.find(e => !state.members.some(m => membershipOf(state.cluster, m, [e])));
}

function planLearner(
  state: ClusterState,
  etcdMembers: NonNullable<Extract<ClusterState['etcd'], { reachable: true }>>['members'],
): MembershipStep | undefined {
  const learner = etcdMembers.find(e => e.isLearner);
  if (!learner) return undefined;
  const member = state.members.find(m => membershipOf(state.cluster, m, [learner]));
  const name = member?.metadata.name ?? learner.name;
  // Not waiting for etcd to list the learner as started (its client URLs published): nothing on the
  // Kubernetes side changes when it does, so no event would come; the promotion's own retry covers it.
  if (member && learnerRunning(state, member)) {
    const why = `promoting learner ${name} to voter`;
    return { action: { kind: 'promote', member: name, id: learner.id }, progress: working('ScalingUp', why) };
  }
  const why = `waiting for learner ${name} to start and catch up${member ? podTrouble(state, member) : ''}`;
  return { action: { kind: 'wait', reason: why }, progress: working('ScalingUp', why) };
}

/**
 * The learner's etcd runs: its Pod is ready, or running with nothing wrong before its readiness
 * probe has passed. Whether it has started and caught up is etcd's own check: a promotion of a
 * learner that is not in sync is refused (learner-not-in-sync), and the promotion retries briefly
 * in the request. Waiting for the readiness probe too would add up to a probe period to every
 * member of a scale-up.
 */
function learnerRunning(state: ClusterState, member: EtcdMember): boolean {
  const pod = podOf(state, member);
  if (!pod || pod.deleting) return false;
  return pod.ready || (pod.phase === 'Running' && pod.problem === undefined);
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
  if (running.length === 0) {
    // A new member joins through a running one; with none, it could only start an empty cluster.
    const why =
      'no member of this cluster is left to add a new one through: its data is gone with its members; delete the EtcdCluster, or create a new one restoring a snapshot';
    return { action: { kind: 'wait', reason: why }, progress: working('NoMemberLeft', why) };
  }
  const unready = running.find(m => !isMemberReady(state, m));
  if (unready) {
    const why = `waiting for member ${unready.metadata.name} to be ready before adding the next one${podTrouble(state, unready)}`;
    return { action: { kind: 'wait', reason: why }, progress: working('ScalingUp', why) };
  }
  const claim = newMemberClaim(state, false);
  const replacement = claim.base.replacement;
  // The member added after a lost one was removed is its replacement: recorded in the same claim.
  const base =
    replacement && !replacement.newMember
      ? { ...claim.base, replacement: { ...replacement, newMember: claim.operation.member } }
      : claim.base;
  return {
    action: { kind: 'claim', operation: claim.operation },
    progress: working(replacement ? 'ReplacingMember' : 'ScalingUp', claim.why),
    base,
  };
}

function planScaleDown(state: ClusterState, running: EtcdMember[], desired: number): MembershipStep {
  // A member that is not ready goes first (removing it cannot cost quorum); otherwise the newest.
  const [victim] = [...newestFirst(running.filter(m => !isMemberReady(state, m))), ...newestFirst(running)];
  const name = victim?.metadata.name ?? '';
  const unsafe = victim && scaleDownRisk(state, running, victim);
  if (unsafe) return { action: { kind: 'wait', reason: unsafe }, progress: working('ScalingDown', unsafe) };
  if (desired === 0 && running.length === 1) {
    const why = `pausing: stopping member ${name} and keeping its data`;
    return {
      action: { kind: 'set-dormant', member: name, dormant: true },
      progress: working('Pausing', why),
      events: [{ type: 'Normal', reason: 'Pausing', message: why }],
    };
  }
  // Every member that stays is ready (scaleDownRisk), and leaderSuccessor never picks the leader
  // itself, so every running member is a candidate.
  const successor = victim && leaderSuccessor(state, victim, running);
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

/**
 * Why removing `victim` now could cost the cluster its quorum, or undefined when it cannot: every
 * member that stays must be ready and, when etcd answers, started in etcd's membership, so the
 * remaining voters form a majority of the smaller cluster on their own.
 */
function scaleDownRisk(state: ClusterState, running: EtcdMember[], victim: EtcdMember): string | undefined {
  const name = victim.metadata.name ?? '';
  const remaining = running.filter(m => m !== victim);
  if (remaining.length === 0) return undefined;
  const unready = remaining.find(m => !isMemberReady(state, m));
  if (unready) {
    return `not removing member ${name} yet: member ${unready.metadata.name}, which stays, is not ready${podTrouble(state, unready)}; removing a member while another is down could cost the cluster its quorum`;
  }
  const etcd = state.etcd;
  if (!etcd?.reachable) {
    return `not removing member ${name} yet: etcd does not answer (${etcd ? etcd.error : 'no member to ask'}), so the health of the members that stay is unknown`;
  }
  const unstarted = remaining.find(m => !membershipOf(state.cluster, m, etcd.members)?.started);
  if (unstarted) {
    return `not removing member ${name} yet: member ${unstarted.metadata.name}, which stays, has not started in etcd`;
  }
  return undefined;
}
