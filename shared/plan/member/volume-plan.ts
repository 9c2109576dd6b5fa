// reconcile-member's decision about a running member's volume: a Memory-medium member whose Pod is
// gone lost its data; a PVC member whose PVC is gone, replaced or being deleted lost it too (either
// way never restarted under its member ID on an empty volume: reconcile-cluster replaces it under its
// quorum guard, with the MemberReplacement condition); otherwise a PVC
// member needs its own PVC before its Pod can start.
import { buildMemberPvc } from '../../builders/pvc.ts';
import { isMemoryMedium } from '../../builders/storage.ts';
import { pvcName } from '../../names.ts';
import { isBeingDeleted, ownershipOf } from './pod.ts';
import type { MemberDataLoss } from '../../api/etcd-member.ts';
import { toKubeTime } from '../../conditions.ts';
import { startFailure } from './failure.ts';
import { NODE_LOST, nodeLoss } from './node-loss.ts';
import { notReady, ownPod, plan, type MemberAction, type MemberPlan, type MemberState } from './step.ts';

/**
 * A Memory-medium member's data lives and dies with its Pod. Once the Pod it ran in is gone (or
 * replaced), the member's etcd data is lost; restarting it under the same member ID would crash
 * (raft: "tocommit is out of range") or worse. The evidence, like a PVC member's, goes through
 * reconcile-cluster's quorum-guarded replacement (dataLost below).
 */
function memoryLoss(state: MemberState): Omit<MemberDataLoss, 'detectedAt'> | undefined {
  const { member, pod } = state;
  const recorded = member.status?.podUID;
  if (!isMemoryMedium(member.spec.storage) || !recorded) return undefined;
  if (pod && ownershipOf(pod, member) === 'ours' && pod.metadata?.uid === recorded) return undefined;
  const name = member.metadata.name ?? '';
  return {
    reason: 'MemoryLost',
    message: `${name} kept its data in memory and its Pod ${pod ? 'was replaced' : 'is gone'}`,
  };
}

export function planVolume(state: MemberState): MemberPlan | undefined {
  const { member, pvc } = state;
  if (isMemoryMedium(member.spec.storage)) return undefined;
  const name = member.metadata.name ?? '';
  const claim = pvcName(name);
  if (!pvc) {
    const built = buildMemberPvc(member, member.metadata.namespace ?? '');
    if (!built) return undefined;
    const ready = notReady('PodNotReady', `Pod ${name} not created yet`);
    return plan(state, { kind: 'create-pvc', pvc: built }, { pod: ownPod(state), ready });
  }
  if (isBeingDeleted(pvc)) {
    const message = `PVC ${claim} is being deleted; a new one is created once it is gone`;
    return plan(
      state,
      { kind: 'wait', reason: message, retry: false },
      { pod: ownPod(state), ready: notReady('PodNotReady', message) },
    );
  }
  const owner = ownershipOf(pvc, member);
  if (owner === 'ours') return undefined;
  // Never delete a volume that is not ours: it may hold the only copy of someone's data.
  const message =
    `PVC ${claim} exists but does not belong to ${name}` +
    (owner === 'stale' ? ' (left by an earlier member of the same name?)' : '') +
    '; delete it to let the member start';
  return plan(
    state,
    { kind: 'wait', reason: message, retry: owner === 'foreign' },
    { pod: ownPod(state), ready: notReady('VolumeConflict', message) },
  );
}

/**
 * The member's data is gone or unusable: the node that held it is gone (plan/member/node-loss.ts), etcd
 * said so when it exited (plan/member/failure.ts), the Pod that held a Memory member's data is gone, or
 * the volume that held it is gone, replaced or going. Restarting the member under
 * its etcd member ID on a fresh, empty volume would put an empty member among the voters (it could
 * vote for a leader missing acknowledged writes): instead the evidence is recorded (sticky), the
 * member's Pod is stopped, and reconcile-cluster replaces the member with a new one (new ID) when
 * quorum allows. A PVC is known to have held data once its UID was recorded (it was seen attached
 * to the member).
 */
export function dataLost(state: MemberState): MemberPlan | undefined {
  const { member, pvc } = state;
  const name = member.metadata.name ?? '';
  const claim = pvcName(name);
  const recorded = member.status?.pvcUID;
  const known = member.status?.dataLoss;
  let found: Omit<MemberDataLoss, 'detectedAt'> | undefined;
  const lostNode = known ? undefined : nodeLoss(state);
  // The node went with the data: said first, as the cause of whatever else is seen (a Pod gone).
  if (lostNode?.kind === 'data') found = { reason: NODE_LOST, message: lostNode.message };
  if (!known && !found) {
    // etcd itself says the data is gone or unusable (any medium).
    const failure = startFailure(member, ownPod(state));
    if (failure?.kind === 'data') found = { reason: failure.reason, message: failure.message };
  }
  if (!known && !found) found = memoryLoss(state);
  if (!known && !found && recorded && !isMemoryMedium(member.spec.storage)) {
    if (!pvc) {
      found = { reason: 'PVCMissing', message: `PVC ${claim}, which held ${name}'s data, is gone` };
    } else if (ownershipOf(pvc, member) === 'ours' && pvc.metadata?.uid !== recorded) {
      found = {
        reason: 'PVCReplaced',
        message: `PVC ${claim} was replaced (UID ${pvc.metadata?.uid}, recorded ${recorded}): ${name}'s data is not on it`,
      };
    } else if (isBeingDeleted(pvc) && ownershipOf(pvc, member) === 'ours') {
      found = { reason: 'PVCDeleted', message: `PVC ${claim}, which holds ${name}'s data, is being deleted` };
    }
  }
  if (!known && !found) return undefined;
  const loss: MemberDataLoss = known ?? { ...found!, detectedAt: toKubeTime(state.now) };
  const message = `${loss.message}; ${name} is not restarted under its member ID${member.status?.memberID ? ` ${member.status.memberID}` : ''} and is replaced by a new member once the others keep quorum`;
  const own = ownPod(state);
  const action: MemberAction =
    own && !isBeingDeleted(own)
      ? {
          kind: 'delete-pod',
          name,
          uid: own.metadata?.uid ?? '',
          reason: `${loss.message}: stopping ${name}`,
          // Nothing on a gone node would confirm a graceful stop.
          ...(loss.reason === NODE_LOST && { force: true }),
        }
      : { kind: 'wait', reason: `${name}: ${message}`, retry: false };
  const planned = plan(
    state,
    action,
    { pod: own, ready: notReady('DataLost', message) },
    known
      ? []
      : [{ type: 'Warning', reason: loss.reason === NODE_LOST ? NODE_LOST : 'MemberDataLost', message }],
  );
  const status = { ...planned.status, dataLoss: loss };
  return { ...planned, status, statusChanged: planned.statusChanged || !known };
}

/**
 * The member's Pod was on a node that is gone, and its volume can follow it elsewhere
 * (plan/member/node-loss.ts): the Pod is deleted with no grace, and the next invocation creates it
 * again, to be scheduled on a node that is left.
 */
export function podOnLostNode(state: MemberState): MemberPlan | undefined {
  const lost = nodeLoss(state);
  if (lost?.kind !== 'move-pod') return undefined;
  const name = state.member.metadata.name ?? '';
  const action: MemberAction = {
    kind: 'delete-pod',
    name: lost.podName,
    uid: lost.uid,
    reason: `${lost.message}: deleting Pod ${lost.podName} with no grace period`,
    force: true,
  };
  return plan(state, action, { pod: ownPod(state), ready: notReady(NODE_LOST, lost.message) }, [
    { type: 'Warning', reason: NODE_LOST, message: `${name}: ${lost.message}` },
  ]);
}
