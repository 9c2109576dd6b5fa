// reconcile-cluster's decision once etcd has a cluster ID: membership first (members being deleted,
// orphans, learners, unrecorded voters), then scaling toward the target, then upgrading.
import type { EtcdMember } from '../api/etcd-member.ts';
import type { ClusterState } from './cluster-state.ts';
import { newMemberClaim } from './cluster-bootstrap.ts';
import { leaderSuccessor, planUpgrade } from './cluster-upgrade.ts';
import { podTrouble, working, type MembershipStep } from './cluster-step.ts';
import {
  activeMembers,
  isDeleting,
  isMemberReady,
  membershipOf,
  newestFirst,
  runningMembers,
} from './members.ts';

export function planMembership(state: ClusterState, desired: number): MembershipStep | undefined {
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
