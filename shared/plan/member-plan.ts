// reconcile-member's decision: given one EtcdMember and what surrounds it (its cluster, Pod, PVC and
// etcd's view), the single next step for the member's Pod and PVC, and the member status that
// describes the world after deciding it. Pure: no I/O, no clock (the time is part of the state), so
// every branch is a row in a table test.
//
// What this function does not do: change etcd's membership (reconcile-cluster adds and promotes,
// finalize-member removes) or touch a member being deleted (finalize-member's job).
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import type { EtcdMember, EtcdMemberStatus } from '../api/etcd-member.ts';
import type { ConditionInput } from '../conditions.ts';
import { buildMemberPod } from '../builders/pod.ts';
import { buildMemberPvc } from '../builders/pvc.ts';
import { isMemoryMedium } from '../builders/storage.ts';
import type { EtcdMember as EtcdMembership } from '../etcd/members.ts';
import type { MemberStatus as SelfReport } from '../etcd/status.ts';
import { pvcName, ROLE_LABEL, type MemberRole } from '../names.ts';
import {
  isBeingDeleted,
  isPodReady,
  isPodTerminal,
  ownershipOf,
  podEtcdVersion,
  podNotReadyMessage,
  type Ownership,
} from './member-pod.ts';
import {
  desiredRole,
  findInEtcd,
  memberStatus,
  READY,
  statusDiffers,
  type StatusInputs,
} from './member-status.ts';

/** etcd's membership as one member answered it. */
export interface MembershipView {
  members: EtcdMembership[];
  /** Hex cluster ID of the answering member. */
  clusterId: string;
}

export interface MemberState {
  now: Date;
  member: EtcdMember;
  /** The owning EtcdCluster; undefined when it does not exist (any more). */
  cluster?: EtcdCluster;
  /** The Pod named like the member, whoever owns it. */
  pod?: V1Pod;
  /** The PVC `data-<member>`, whoever owns it. */
  pvc?: V1PersistentVolumeClaim;
  /**
   * etcd's membership through the cluster's ready voters and the member itself; undefined when
   * nobody answered (or nobody was asked).
   */
  etcd?: MembershipView;
  /** What the member's own endpoint says about itself (best effort; undefined when it did not answer). */
  self?: SelfReport;
  /** Repository of etcd images for the whole operator (settings). */
  etcdImageRepository?: string;
  /** The operator's image (settings): runs a restoring seed's fetch and commit steps. */
  operatorImage?: string;
}

export type MemberAction =
  /** Nothing to do; `reason` says why (the summary of the invocation). */
  | { kind: 'none'; reason: string }
  /**
   * Waiting for something outside this invocation. `retry` when nothing this function receives an
   * event for will end the wait, so the event system must redeliver with back-off.
   */
  | { kind: 'wait'; reason: string; retry: boolean }
  | { kind: 'create-pvc'; pvc: V1PersistentVolumeClaim }
  | { kind: 'create-pod'; pod: V1Pod; clusterFormed: boolean; isVoter: boolean }
  /** Delete the Pod with this uid (it is recreated by the next invocation unless the member is dormant). */
  | { kind: 'delete-pod'; name: string; uid: string; reason: string }
  | { kind: 'patch-pod-labels'; name: string; labels: Record<string, string>; reason: string }
  /**
   * A Memory-medium member lost its data with its Pod: the member is deleted, finalize-member removes
   * it from etcd and reconcile-cluster adds a fresh member in its place.
   */
  | { kind: 'delete-member'; reason: string };

export interface MemberEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface MemberPlan {
  action: MemberAction;
  /** The status to hold after this step. */
  status: EtcdMemberStatus;
  /** Write `status` (compare-and-swap on the member's resourceVersion); false in a steady state. */
  statusChanged: boolean;
  /** Events about the member, emitted once the action succeeded. */
  events: MemberEvent[];
}

/**
 * Whether planMember could learn anything from etcd: the adapter asks etcd only then. A voter whose
 * ID is recorded has nothing left to learn (a voter stays a voter, an ID never changes) except the
 * version its current Pod runs, asked once per Pod.
 */
export function needsEtcd(state: Pick<MemberState, 'member' | 'cluster' | 'pod'>): boolean {
  const { member, cluster, pod } = state;
  const active =
    !isBeingDeleted(member) &&
    cluster !== undefined &&
    !isBeingDeleted(cluster) &&
    isWired(member) &&
    member.spec.dormant !== true;
  if (!active) return false;
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
  if (isBeingDeleted(member))
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
  if (member.spec.dormant === true) return planDormant(state);
  return planRunning(state);
}

/** Bundles an action with the status computed for it. */
function plan(
  state: MemberState,
  action: MemberAction,
  inputs: Omit<StatusInputs, 'now' | 'member' | 'membership' | 'self'>,
  events: MemberEvent[] = [],
): MemberPlan {
  const status = memberStatus({
    ...inputs,
    now: state.now,
    member: state.member,
    membership: membershipOf(state),
    self: state.self,
  });
  return { action, status, statusChanged: statusDiffers(state.member.status, status), events };
}

/**
 * This member as etcd lists it. A view from another cluster (a different ID than the one recorded)
 * is not this member's cluster and is ignored.
 */
function membershipOf(state: MemberState): EtcdMembership | undefined {
  const view = state.etcd;
  if (!view) return undefined;
  const recorded = state.cluster?.status?.clusterID;
  if (recorded && view.clusterId !== recorded) return undefined;
  return findInEtcd(state.member, view.members);
}

const notReady = (reason: string, message: string): ConditionInput => ({
  type: READY,
  status: 'False',
  reason,
  message,
});

/** Not added to etcd yet: a Pod started now would not be let in, so there is none. */
function planUnwired(state: MemberState): MemberPlan {
  const name = state.member.metadata.name ?? '';
  const why = `${name} is not yet added to etcd; reconcile-cluster wires it`;
  return plan(
    state,
    { kind: 'none', reason: why },
    { pod: ownPod(state), ready: notReady('WaitingToJoin', 'not yet added to etcd') },
  );
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
  const lost = memoryDataLost(state);
  if (lost) return lost;
  const volume = planVolume(state);
  if (volume) return volume;
  return planPod(state);
}

/**
 * A Memory-medium member's data lives and dies with its Pod. Once the Pod it ran in is gone (or
 * replaced), the member's etcd data is lost; restarting it under the same member ID would crash
 * (raft: "tocommit is out of range") or worse. The member is replaced instead.
 */
function memoryDataLost(state: MemberState): MemberPlan | undefined {
  const { member, pod } = state;
  const recorded = member.status?.podUID;
  if (!isMemoryMedium(member.spec.storage) || !recorded) return undefined;
  if (pod && ownershipOf(pod, member) === 'ours' && pod.metadata?.uid === recorded) return undefined;
  const name = member.metadata.name ?? '';
  const message = `${name} kept its data in memory and its Pod ${pod ? 'was replaced' : 'is gone'}: replacing the member`;
  return plan(state, { kind: 'delete-member', reason: message }, { ready: notReady('DataLost', message) }, [
    { type: 'Warning', reason: 'MemberDataLost', message },
  ]);
}

function planVolume(state: MemberState): MemberPlan | undefined {
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

function planPod(state: MemberState): MemberPlan {
  const { member, pod } = state;
  const name = member.metadata.name ?? '';
  if (!pod) return createPod(state);
  const owner = ownershipOf(pod, member);
  if (owner !== 'ours') return otherPod(state, pod, owner);
  if (isBeingDeleted(pod)) {
    const message = `Pod ${name} is being deleted; it is recreated once it is gone`;
    return plan(
      state,
      { kind: 'wait', reason: message, retry: false },
      { pod, ready: notReady('PodNotReady', message) },
    );
  }
  if (isPodTerminal(pod)) {
    const message = `${podNotReadyMessage(pod)}; a kubelet does not restart it, so it is replaced`;
    const action: MemberAction = { kind: 'delete-pod', name, uid: pod.metadata?.uid ?? '', reason: message };
    return plan(state, action, { pod, ready: notReady('PodNotReady', message) }, [
      { type: 'Normal', reason: 'ReplacingPod', message },
    ]);
  }
  const upgrade = planPodUpgrade(state, pod);
  if (upgrade) return upgrade;
  const ready: ConditionInput = isPodReady(pod)
    ? { type: READY, status: 'True', reason: 'PodReady', message: 'etcd member is ready' }
    : notReady('PodNotReady', podNotReadyMessage(pod));
  const base = plan(state, { kind: 'none', reason: `${name}: nothing to do` }, { pod, ready });
  const role = desiredRole(base.status);
  if (role !== undefined && pod.metadata?.labels?.[ROLE_LABEL] !== role) {
    return { ...base, action: roleLabelPatch(name, role) };
  }
  if (isPodReady(pod) && !base.status.memberID) {
    // Nothing this function receives an event for will bring the ID: ask again later.
    const reason = `${name} is ready but etcd did not report its member ID yet`;
    return { ...base, action: { kind: 'wait', reason, retry: true } };
  }
  if (!isPodReady(pod))
    return { ...base, action: { kind: 'none', reason: `${name}: waiting for its Pod to be ready` } };
  return base;
}

/**
 * The member's version moved on (reconcile-cluster changes one member at a time, so that quorum
 * holds): its Pod is replaced by one running the new release on the same volume, with the same
 * member ID.
 */
function planPodUpgrade(state: MemberState, pod: V1Pod): MemberPlan | undefined {
  const { member } = state;
  const running = podEtcdVersion(pod);
  if (!running || running === member.spec.version) return undefined;
  const name = member.metadata.name ?? '';
  const message = `upgrading ${name} from etcd ${running} to ${member.spec.version}: replacing its Pod, keeping its data`;
  const action: MemberAction = { kind: 'delete-pod', name, uid: pod.metadata?.uid ?? '', reason: message };
  return plan(state, action, { pod, ready: notReady('Upgrading', message) }, [
    { type: 'Normal', reason: 'UpgradingMember', message },
  ]);
}

function roleLabelPatch(name: string, role: MemberRole): MemberAction {
  return {
    kind: 'patch-pod-labels',
    name,
    labels: { [ROLE_LABEL]: role },
    reason: `labelling Pod ${name} ${ROLE_LABEL}=${role}, as etcd counts it`,
  };
}

function createPod(state: MemberState): MemberPlan {
  const { member, cluster } = state;
  const name = member.metadata.name ?? '';
  const clusterFormed = (cluster?.status?.clusterID ?? '') !== '';
  const ready = notReady('PodNotReady', `Pod ${name} not created yet`);
  const draft = plan(state, { kind: 'none', reason: '' }, { ready });
  const isVoter = draft.status.isVoter === true;
  let pod: V1Pod;
  try {
    // The Pod is built from the status this step holds, so a member ID etcd just reported is used.
    pod = buildMemberPod(
      { ...member, status: draft.status },
      {
        namespace: member.metadata.namespace ?? '',
        clusterFormed,
        isVoter,
        ...(state.etcdImageRepository && { etcdImageRepository: state.etcdImageRepository }),
        ...(state.operatorImage && { operatorImage: state.operatorImage }),
      },
    );
  } catch (err) {
    // Only a new member (a spec edit on the cluster) can fix this; retrying the same member cannot.
    const message = `cannot build Pod ${name}: ${err instanceof Error ? err.message : String(err)}`;
    return plan(
      state,
      { kind: 'wait', reason: message, retry: false },
      { ready: notReady('PodSpecInvalid', message) },
    );
  }
  return { ...draft, action: { kind: 'create-pod', pod, clusterFormed, isVoter } };
}

/** A Pod with the member's name that this member does not control. */
function otherPod(state: MemberState, pod: V1Pod, owner: Exclude<Ownership, 'ours'>): MemberPlan {
  const name = state.member.metadata.name ?? '';
  if (owner === 'foreign') {
    const message = `a Pod named ${name} exists and is not etcdfn's; delete or rename it to let the member start`;
    return plan(
      state,
      { kind: 'wait', reason: message, retry: true },
      { ready: notReady('PodConflict', message) },
    );
  }
  const message = `Pod ${name} belongs to an earlier member of the same name; it is replaced`;
  if (isBeingDeleted(pod)) {
    return plan(
      state,
      { kind: 'wait', reason: message, retry: false },
      { ready: notReady('PodConflict', message) },
    );
  }
  const action: MemberAction = { kind: 'delete-pod', name, uid: pod.metadata?.uid ?? '', reason: message };
  return plan(state, action, { ready: notReady('PodConflict', message) });
}

/** The member's own Pod, if the one observed is it. */
function ownPod(state: MemberState): V1Pod | undefined {
  return state.pod && ownershipOf(state.pod, state.member) === 'ours' ? state.pod : undefined;
}
