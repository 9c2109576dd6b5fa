// The vocabulary of reconcile-member's decision, shared by the files that decide one concern each
// (member-plan, member-volume-plan, member-pod-plan): what is observed, the closed union of steps,
// the plan returned, and the helper that bundles a step with the status computed for it.
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../api/etcd-cluster.ts';
import type { EtcdMember, EtcdMemberStatus } from '../../api/etcd-member.ts';
import type { ConditionInput } from '../../conditions.ts';
import type { PodIPFamily } from '../../builders/etcd-listen.ts';
import type { EtcdMember as EtcdMembership } from '../../etcd/members.ts';
import type { MemberStatus as SelfReport } from '../../etcd/status.ts';
import { ownershipOf } from './pod.ts';
import { findInEtcd, memberStatus, READY, statusDiffers, type StatusInputs } from './status.ts';
import type { MemberNodes } from './types.ts';

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
  /** The nodes the member depends on and which are gone (read only while its Pod is not running). */
  nodes?: MemberNodes;
  /** Repository of etcd images for the whole operator (settings). */
  etcdImageRepository?: string;
  /** Digests of etcd images by release (settings). */
  etcdImageDigests?: Readonly<Record<string, string>>;
  /** The operator's image (settings): runs a restoring seed's fetch and commit steps. */
  operatorImage?: string;
  /** The family of Pod IPs (settings): IPv6 listen URLs carry the Pod IP in brackets. */
  podIPFamily?: PodIPFamily;
  /** The operator's S3 endpoint allow-list setting (settings). */
  s3AllowedEndpoints?: string;
  /** The operator's denied address ranges for S3 (settings). */
  s3DeniedRanges?: string;
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
  /**
   * Delete the Pod with this uid (it is recreated by the next invocation unless the member is
   * dormant); `force`: with no grace period (its node is gone, nothing would confirm the stop).
   */
  | { kind: 'delete-pod'; name: string; uid: string; reason: string; force?: boolean }
  /**
   * The member leads etcd and its Pod is about to be stopped (an upgrade): hand leadership to `toId`
   * first; the same invocation then plans again on a fresh read.
   */
  | { kind: 'move-leader'; fromId: string; toId: string; reason: string }
  /** Ask the member's PVC (`name`) for `size` (it asks for `from`): the volume grows online. */
  | { kind: 'resize-pvc'; name: string; from: string; size: string }
  /**
   * Merge-patch the Pod's labels (its role) and annotations (the empty-data guard of a member's
   * first Pod, see INITIAL_CLUSTER_ANNOTATION); the running etcd is not touched.
   */
  | {
      kind: 'patch-pod-metadata';
      name: string;
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
      reason: string;
    };

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

/** Bundles an action with the status computed for it. */
export function plan(
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
  // The PVC's identity as first seen: one with another UID later is not where the data is.
  const pvc = state.pvc;
  if (
    !status.pvcUID &&
    pvc?.metadata?.uid &&
    !pvc.metadata.deletionTimestamp &&
    ownershipOf(pvc, state.member) === 'ours'
  )
    status.pvcUID = pvc.metadata.uid;
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

export const notReady = (reason: string, message: string): ConditionInput => ({
  type: READY,
  status: 'False',
  reason,
  message,
});

/** The member's own Pod, if the one observed is it. */
export function ownPod(state: MemberState): V1Pod | undefined {
  return state.pod && ownershipOf(state.pod, state.member) === 'ours' ? state.pod : undefined;
}
