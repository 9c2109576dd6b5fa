// The vocabulary of reconcile-cluster's decision, shared by the files that decide one concern each
// (membership/, upgrade/, space/..., ordered in ./concerns.ts): the closed union of steps, the plan
// they return, and the wording helpers every concern uses.
import type { EtcdClusterStatus } from '../../api/etcd-cluster.ts';
import type { EtcdMember } from '../../api/etcd-member.ts';
import type { ClusterState } from './types.ts';
import { podOf } from './members.ts';
import { CLAIMING_STEPS, type AddMemberOperation } from '../../api/cluster-operation.ts';
import type { OwnedChanges } from '../owned/types.ts';

/** Whether a step's status write is a claim (CLAIMING_STEPS, beside status.operation's type). */
export function isClaimingStep(action: ClusterAction): boolean {
  const claiming: readonly ClusterAction['kind'][] = CLAIMING_STEPS;
  return claiming.includes(action.kind);
}

export type ClusterAction =
  /** Nothing to do but (maybe) write the status. */
  | { kind: 'none' }
  /** Waiting for something outside this invocation (a Pod to start, a finalizer to run). */
  | { kind: 'wait'; reason: string }
  | { kind: 'ensure-services' }
  | { kind: 'ensure-pdb' }
  | { kind: 'ensure-network-policy' }
  /** Write status (with the operation) first; only the winner of that write runs it. */
  | { kind: 'claim'; operation: AddMemberOperation }
  /** An operation is recorded in status: carry it on (every part of it is idempotent). */
  | { kind: 'resume'; operation: AddMemberOperation }
  /** `seed`: also mark the member as a resume's seed (a held member run again; see cluster-resume). */
  | { kind: 'set-dormant'; member: string; dormant: boolean; seed?: boolean }
  /** The resume's seed is no longer needed: unmark it, and its held deletion finishes. */
  | { kind: 'release-seed'; member: string }
  | { kind: 'promote'; member: string; id: string }
  /** etcd says voter but the EtcdMember does not know yet. */
  | { kind: 'mark-voter'; member: string }
  | { kind: 'move-leader'; from: string; toId: string }
  /** etcd's downgrade validate + enable to `version`'s minor (safe to repeat). */
  | { kind: 'enable-downgrade'; version: string }
  /** Set one member's version; reconcile-member then replaces its Pod on the same volume. */
  | { kind: 'upgrade-member'; member: string; from: string; version: string }
  | { kind: 'delete-member'; member: string }
  /** In-place restore: delete the members whose data is discarded (finalize-member lets them go). */
  | { kind: 'delete-members'; members: string[] }
  | { kind: 'remove-orphan'; id: string; peerURL: string }
  /** Raise these members' spec.storage.size to `size`; each then grows its own PVC. */
  | { kind: 'grow-volumes'; members: string[]; size: string }
  /** NOSPACE: compact, defragment the members in this order (leader last), then disarm. */
  | { kind: 'recover-space'; members: { name: string; endpoint: string }[]; quotaBytes: number }
  /** ForceNewCluster recovery: set or unset a member's spec.forceNewCluster (reconcile-member restarts its Pod). */
  | { kind: 'force-new-cluster'; member: string; on: boolean }
  /** Nothing to do yet, but no event will say when: answered as a retry, so the event comes back with back-off. */
  | { kind: 'recheck'; reason: string }
  /** The defragmentation policy: claimed in status.operation first, then one member defragmented. */
  | { kind: 'defragment'; member: string; endpoint: string; why: string };

export interface ClusterEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface ClusterPlan {
  action: ClusterAction;
  /** The status to hold after this step; written only if it differs from the current one. */
  status: EtcdClusterStatus;
  events: ClusterEvent[];
  /** An ensure-* step's payload: the owned objects' changes, applied as they are. */
  owned?: OwnedChanges;
}

export type PlanFn = (
  action: ClusterAction,
  progress: Progress,
  base?: EtcdClusterStatus,
  events?: ClusterEvent[],
) => ClusterPlan;

export interface MembershipStep {
  action: ClusterAction;
  progress: Progress;
  base?: EtcdClusterStatus;
  events?: ClusterEvent[];
}

/** What keeps a member's Pod from running, and what a person can do about it. */
export function podTrouble(state: ClusterState, member: EtcdMember): string {
  const problem = podOf(state, member)?.problem;
  if (!problem) return '';
  const hint = /Image|image/.test(problem)
    ? 'check spec.version (a released etcd 3.5, 3.6 or 3.7 version) and that the etcd image can be pulled'
    : "see the Pod's logs";
  return `: its Pod cannot run (${problem}); ${hint}`;
}

export function working(reason: string, message: string): Progress {
  return { active: true, reason, message };
}

export function targetMessage(replicas: number, version: string): string {
  return replicas === 0
    ? 'pause the cluster (0 members)'
    : `${replicas} member${replicas === 1 ? '' : 's'} of etcd ${version}`;
}

export interface Progress {
  /** True while the operator still has work toward the locked target. */
  active: boolean;
  reason: string;
  message: string;
}
