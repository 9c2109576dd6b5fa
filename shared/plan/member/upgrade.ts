// reconcile-member's decision when its member's version moved on: replace the Pod (same volume, same
// member ID) — but never while the member leads etcd. reconcile-cluster moves leadership off a member
// before it sets the member's new version, yet leadership can come back in between (an election on a
// loaded machine, a transfer the cluster did not make), so the check that matters is the one made
// here, on the member's own word read in this invocation, just before its Pod is stopped: a leader
// hands leadership to another started voter first (an already-upgraded one when etcd's view and the
// cluster's status allow), and the Pod goes only once the member says it follows.
import type { V1Pod } from '@kubernetes/client-node';
import { isPodReady, podEtcdVersion } from './pod.ts';
import { notReady, plan, type MemberPlan, type MemberState } from './step.ts';
import { isMinorDowngrade } from '../upgrade/version-moves.ts';

/** The member's Pod runs another release than its spec asks for. */
export function upgradePending(state: Pick<MemberState, 'member' | 'pod'>): boolean {
  const running = state.pod && podEtcdVersion(state.pod);
  return running !== undefined && running !== state.member.spec.version;
}

export function planPodUpgrade(state: MemberState, pod: V1Pod): MemberPlan | undefined {
  const { member } = state;
  const running = podEtcdVersion(pod);
  if (!running || running === member.spec.version) return undefined;
  const name = member.metadata.name ?? '';
  const target = member.spec.version;
  // Or back one minor, by etcd's downgrade procedure (shared/plan/upgrade/downgrade.ts).
  const down = isMinorDowngrade(running, target);
  const message = `${down ? 'downgrading' : 'upgrading'} ${name} from etcd ${running} to ${target}: replacing its Pod, keeping its data`;
  const inputs = { pod, ready: notReady(down ? 'Downgrading' : 'Upgrading', message) };
  const held = leadershipHold(state, pod);
  if (held) return plan(state, held, inputs);
  const action = { kind: 'delete-pod' as const, name, uid: pod.metadata?.uid ?? '', reason: message };
  const reason = down ? 'DowngradingMember' : 'UpgradingMember';
  return plan(state, action, inputs, [{ type: 'Normal', reason, message }]);
}

/**
 * Why the Pod must not be stopped yet, as the step to take instead; undefined when the member does
 * not lead (its own status, read in this invocation, names another leader), when its Pod does not
 * serve (not ready: it leads nothing), or when no other voter exists to lead (a 1-member cluster).
 */
function leadershipHold(state: MemberState, pod: V1Pod): MemberPlan['action'] | undefined {
  if (!isPodReady(pod)) return undefined;
  const name = state.member.metadata.name ?? '';
  const self = state.self;
  if (!self) {
    return {
      kind: 'wait',
      retry: true,
      reason: `not stopping ${name} for its upgrade yet: its own endpoint did not say whether it leads etcd`,
    };
  }
  if (!self.isLeader) return undefined;
  const voters = (state.etcd?.members ?? []).filter(e => !e.isLearner && e.started && e.id !== self.memberId);
  if (!state.etcd) {
    return {
      kind: 'wait',
      retry: true,
      reason: `not stopping ${name} for its upgrade yet: it leads etcd (term ${self.raftTerm}) and etcd's member list did not answer`,
    };
  }
  if (!state.etcd.members.some(e => !e.isLearner && e.id !== self.memberId)) return undefined;
  if (voters.length === 0) {
    return {
      kind: 'wait',
      retry: true,
      reason: `not stopping ${name} for its upgrade yet: it leads etcd (term ${self.raftTerm}) and no other voter has started to take over`,
    };
  }
  const upgraded = new Set(
    (state.cluster?.status?.members ?? [])
      .filter(m => m.version === state.member.spec.version)
      .map(m => m.name),
  );
  const [to] = [...voters].sort(
    (a, b) => Number(upgraded.has(b.name)) - Number(upgraded.has(a.name)) || a.id.localeCompare(b.id),
  );
  const toName = to.name || to.id;
  return {
    kind: 'move-leader',
    fromId: self.memberId,
    toId: to.id,
    reason: `${name} leads etcd (term ${self.raftTerm}) just before its Pod would be stopped for the upgrade: moving leadership to ${toName} first`,
  };
}
