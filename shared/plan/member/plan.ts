// reconcile-member's decision: given one EtcdMember and what surrounds it (its cluster, Pod, PVC and
// etcd's view), the single next step for the member's Pod and PVC, and the member status that
// describes the world after deciding it. Pure: no I/O, no clock (the time is part of the state), so
// every branch is a row in a table test.
//
// What this function does not do: change etcd's membership (reconcile-cluster adds and promotes,
// finalize-member removes) or touch a member being deleted (finalize-member's job), except a resume's
// seed: a member whose deletion is held because it has the cluster's only data, run again until the
// others have joined it (shared/plan/membership/resume.ts).
import type { EtcdMember } from '../../api/etcd-member.ts';
import { isMemoryMedium } from '../../builders/storage.ts';
import { pvcName } from '../../names.ts';
import { isBeingDeleted, isPodReady, ownershipOf } from './pod.ts';
import { isResumeSeed } from '../cluster/members.ts';
import { upgradePending } from './upgrade.ts';
import { planPod } from './pod-plan.ts';
import { notReady, ownPod, plan, type MemberAction, type MemberPlan, type MemberState } from './step.ts';
import { dataLost, planVolume, podOnLostNode } from './volume-plan.ts';
import { growVolume, withVolume } from './volume-growth.ts';

export type { MemberAction, MemberEvent, MemberPlan, MemberState, MembershipView } from './step.ts';

/**
 * Whether planMember could learn anything from etcd: the adapter asks etcd only then. A voter whose
 * ID is recorded has nothing left to learn (a voter stays a voter, an ID never changes) except the
 * version its current Pod runs, asked once per Pod.
 */
export function needsEtcd(state: Pick<MemberState, 'member' | 'cluster' | 'pod'>): boolean {
  const { member, cluster, pod } = state;
  const active =
    (!isBeingDeleted(member) || isResumeSeed(member)) &&
    cluster !== undefined &&
    !isBeingDeleted(cluster) &&
    isWired(member) &&
    member.spec.dormant !== true;
  if (!active) return false;
  // A Pod about to be replaced for an upgrade: whether the member leads is read fresh, just before.
  if (upgradePending(state)) return true;
  const s = member.status ?? {};
  const known = s.isVoter === true && !!s.memberID;
  const versionKnown = !pod || !isPodReady(pod) || (!!s.version && s.podUID === pod.metadata?.uid);
  return !(known && versionKnown);
}

export const isWired = (member: EtcdMember): boolean => (member.spec.initialCluster ?? '') !== '';

export function planMember(state: MemberState): MemberPlan {
  const { member, cluster } = state;
  const name = member.metadata.name ?? '';
  const unchanged = (action: MemberAction): MemberPlan => ({
    action,
    status: member.status ?? {},
    statusChanged: false,
    events: [],
  });
  if (isBeingDeleted(member) && !isResumeSeed(member))
    return unchanged({ kind: 'none', reason: `${name} is being deleted: finalize-member's job` });
  if (!cluster) {
    return unchanged({
      kind: 'none',
      reason: `EtcdCluster ${member.spec.clusterName} not found: ${name} is garbage-collected with it`,
    });
  }
  if (isBeingDeleted(cluster)) {
    return unchanged({ kind: 'none', reason: `EtcdCluster ${member.spec.clusterName} is being deleted` });
  }
  if (!isWired(member)) return planUnwired(state);
  if (member.spec.dormant === true) return withVolume(state, planDormant(state));
  return withVolume(state, planRunning(state));
}

/**
 * Not added to etcd yet: a Pod started now would not be let in, so there is none. Its PVC is
 * created already: an empty volume with no Pod harms nothing, and its provisioning then overlaps
 * the wait for etcd to let the member in (5 s after the previous one joined), so the Pod follows
 * the wiring at once.
 */
function planUnwired(state: MemberState): MemberPlan {
  const name = state.member.metadata.name ?? '';
  const inputs = { pod: ownPod(state), ready: notReady('WaitingToJoin', 'not yet added to etcd') };
  const volume = planVolume(state);
  if (volume?.action.kind === 'create-pvc') return plan(state, volume.action, inputs);
  const why = `${name} is not yet added to etcd; reconcile-cluster wires it`;
  return plan(state, { kind: 'none', reason: why }, inputs);
}

/** Paused: no Pod, the data stays on the PVC. */
function planDormant(state: MemberState): MemberPlan {
  const { member, pod } = state;
  const name = member.metadata.name ?? '';
  const where = isMemoryMedium(member.spec.storage)
    ? 'its data was in memory and is gone'
    : `data kept on ${pvcName(name)}`;
  const inputs = { clearPod: true, ready: notReady('Paused', `paused; Pod deleted, ${where}`) };
  if (!pod || ownershipOf(pod, member) === 'foreign') {
    return plan(state, { kind: 'none', reason: `${name} is paused` }, inputs);
  }
  if (isBeingDeleted(pod)) {
    return plan(state, { kind: 'wait', reason: `Pod ${name} is being deleted`, retry: false }, inputs);
  }
  const action: MemberAction = {
    kind: 'delete-pod',
    name,
    uid: pod.metadata?.uid ?? '',
    reason: `${name} is paused (spec.dormant): deleting its Pod, keeping its data`,
  };
  return plan(state, action, inputs);
}

function planRunning(state: MemberState): MemberPlan {
  const gone = dataLost(state) ?? podOnLostNode(state);
  if (gone) return gone;
  const volume = planVolume(state);
  if (volume) return volume;
  return growVolume(state, planPod(state));
}
