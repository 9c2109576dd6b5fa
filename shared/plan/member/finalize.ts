// finalize-member's decision: an EtcdMember is being deleted and still holds our finalizer; what
// must happen before it may go. Pure: no I/O, so every branch is a row in a table test.
//
// The rule: while the cluster lives, a member leaves Kubernetes only after it has left etcd.
// Dropping the finalizer of a member etcd still counts would leave a ghost voter behind, one that
// can never answer and counts against the quorum forever. So when etcd cannot be asked, the answer
// is "try again", never "go ahead" — with one exception: the last member, which has nobody to be
// removed from. And when the whole cluster is being deleted, etcd goes with it: no removal.
import type { EtcdCluster } from '../../api/etcd-cluster.ts';
import type { EtcdMember } from '../../api/etcd-member.ts';
import type { EtcdMember as EtcdMembership } from '../../etcd/members.ts';
import { isMemoryMedium } from '../../builders/storage.ts';
import { MEMBER_FINALIZER, pvcName } from '../../names.ts';
import { isBeingDeleted } from './pod.ts';
import { findInEtcd, ownUrls } from './status.ts';
import { isResumeSeed, ownMembers } from '../cluster/members.ts';

/** etcd's membership as another member answered it. */
export interface FinalizeView {
  members: EtcdMembership[];
  clusterId: string;
  /** The endpoint that answered. */
  endpoint: string;
  /** The leader (hex ID) as reported by the answering member and the member itself; undefined if none said. */
  leaderId?: string;
}

export interface FinalizeState {
  member: EtcdMember;
  /** The owning EtcdCluster; undefined when it does not exist. */
  cluster?: EtcdCluster;
  /** The cluster's other EtcdMembers, in any state. */
  others: EtcdMember[];
  /** The client URLs etcd was asked through (see peerEndpoints), in order. */
  tried: string[];
  /** etcd's answer through those; undefined when none answered or none was asked. */
  etcd?: FinalizeView;
  /** Why none answered. */
  etcdError?: string;
}

export interface FinalizeEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export type FinalizeAction =
  /** Not ours to finalize (not being deleted, or our finalizer is gone already). */
  | { kind: 'none'; reason: string }
  /** The member may go: remove our finalizer (compare-and-swap on its resourceVersion). */
  | { kind: 'remove-finalizer'; reason: string }
  /** The member leads etcd: hand leadership to `toId` first, so its removal costs no election. */
  | {
      kind: 'move-leader';
      fromId: string;
      toId: string;
      toName: string;
      reason: string;
      event: FinalizeEvent;
    }
  /** Remove the member from etcd (member-not-found counts as done); the finalizer goes next. */
  | { kind: 'remove-from-etcd'; id: string; reason: string; event: FinalizeEvent }
  /**
   * The member holds the cluster's only data (a paused cluster's dormant member, or the only
   * running one): its finalizer stays, so it and its PVC survive until the cluster is deleted.
   */
  | { kind: 'keep'; reason: string; event: FinalizeEvent }
  /** Cannot decide safely now: answer 503 so the event is redelivered. */
  | { kind: 'retry'; reason: string };

/** Whether planFinalize will want etcd's view: the adapter asks etcd only then. */
export function needsEtcd(state: Pick<FinalizeState, 'member' | 'cluster' | 'others'>): boolean {
  const { member } = state;
  const cluster = clusterOf(state.cluster, member);
  return (
    isBeingDeleted(member) &&
    hasFinalizer(member) &&
    cluster !== undefined &&
    !isBeingDeleted(cluster) &&
    state.others.length > 0 &&
    cluster.status?.inPlaceRestore?.step !== 'Stopping' &&
    !discardedByBootstrapRetry(cluster, member)
  );
}

export const hasFinalizer = (member: EtcdMember): boolean =>
  (member.metadata.finalizers ?? []).includes(MEMBER_FINALIZER);

/**
 * The client URLs to ask etcd through: the other members that can have a running Pod (wired, not
 * dormant), ready voters first (learners refuse membership changes), members being deleted last.
 */
export function peerEndpoints(others: readonly EtcdMember[]): string[] {
  const candidates = others.filter(m => (m.spec.initialCluster ?? '') !== '' && m.spec.dormant !== true);
  const rank = (m: EtcdMember): number => {
    if (isBeingDeleted(m)) return 3;
    const ready = m.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True') === true;
    const voter = m.status?.isVoter === true || m.spec.bootstrap === true;
    return voter && ready ? 0 : voter ? 1 : 2;
  };
  return [...candidates]
    .sort((a, b) => rank(a) - rank(b) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))
    .map(m => ownUrls(m).client);
}

/**
 * The member's own EtcdCluster: the one read by its name, unless that is a newer cluster of the same
 * name (another UID than the member's owner), created after the member's own was deleted.
 */
function clusterOf(cluster: EtcdCluster | undefined, member: EtcdMember): EtcdCluster | undefined {
  return cluster && ownMembers(cluster, [member]).length === 1 ? cluster : undefined;
}

export function planFinalize(state: FinalizeState): FinalizeAction {
  // Over 80 lines: the finalizer's ordered safety checks, each returning early; the order is the rule
  // (a member leaves Kubernetes only after it has left etcd) that plan-finalize tests pin.
  const { member } = state;
  const cluster = clusterOf(state.cluster, member);
  const name = member.metadata.name ?? '';
  if (!isBeingDeleted(member)) return { kind: 'none', reason: `${name} is not being deleted` };
  if (!hasFinalizer(member))
    return { kind: 'none', reason: `${name} has no ${MEMBER_FINALIZER} finalizer left` };
  if (!cluster) {
    const newer = state.cluster !== undefined;
    return {
      kind: 'remove-finalizer',
      reason: newer
        ? `the EtcdCluster ${member.spec.clusterName} ${name} belonged to is gone (the one of that name now is a newer cluster): ${name} goes without an etcd removal`
        : `EtcdCluster ${member.spec.clusterName} is gone: ${name} goes without an etcd removal`,
    };
  }
  if (isBeingDeleted(cluster)) {
    return {
      kind: 'remove-finalizer',
      reason: `EtcdCluster ${member.spec.clusterName} is being deleted: etcd goes with it, no removal needed`,
    };
  }
  const restoring = cluster.status?.inPlaceRestore;
  if (restoring?.step === 'Stopping' && restoring.members.includes(name)) {
    return {
      kind: 'remove-finalizer',
      reason: `EtcdCluster ${member.spec.clusterName} is being restored in place from EtcdSnapshot ${restoring.snapshot}: ${name}'s data is discarded with the old etcd cluster, no removal needed`,
    };
  }
  if (discardedByBootstrapRetry(cluster, member)) {
    return {
      kind: 'remove-finalizer',
      reason: `EtcdCluster ${member.spec.clusterName} never formed; bootstrap attempt ${cluster.status?.bootstrapRetry?.attempt} starts over without ${name}: its data is discarded, no removal needed`,
    };
  }
  if (isResumeSeed(member)) {
    const message = `deletion of ${name} is held: it runs as the seed of EtcdCluster ${cluster.metadata.name ?? member.spec.clusterName}'s resume (it had the only copy of the data); it is removed from etcd once the other members have joined it`;
    return { kind: 'keep', reason: message, event: { type: 'Normal', reason: 'DeletionHeld', message } };
  }
  const kept = onlyDataHolder(state);
  if (kept) return kept;
  if (state.others.length === 0) {
    return {
      kind: 'remove-finalizer',
      reason: `${name} is the cluster's last member: nobody to remove it from`,
    };
  }
  const view = state.etcd;
  if (!view) return unreachable(state);
  const recorded = cluster.status?.clusterID;
  if (recorded && view.clusterId !== recorded) {
    return {
      kind: 'retry',
      reason: `${view.endpoint} answered for etcd cluster ${view.clusterId}, not ${recorded}: not removing ${name} through it`,
    };
  }
  const self = findInEtcd(member, view.members);
  if (!self) return { kind: 'remove-finalizer', reason: `${name} is not (or no longer) a member of etcd` };

  if (view.leaderId === self.id) {
    const successor = successorOf(self, view);
    if (successor) {
      const toName = successor.name || successor.id;
      return {
        kind: 'move-leader',
        fromId: self.id,
        toId: successor.id,
        toName,
        reason: `${name} leads etcd: moving leadership to ${toName} before removing it`,
        event: {
          type: 'Normal',
          reason: 'LeaderMoved',
          message: `leadership moved from ${name} to ${toName} before removing ${name}`,
        },
      };
    }
  }
  const role = self.isLearner ? 'learner' : 'voter';
  return {
    kind: 'remove-from-etcd',
    id: self.id,
    reason: `removing ${name} (${self.id}) from etcd`,
    event: {
      type: 'Normal',
      reason: 'MemberRemoved',
      message: `member ${name} (${role} ${self.id}) removed from etcd; ${view.members.length - 1} member${view.members.length === 2 ? '' : 's'} left`,
    },
  };
}

/** Another started voter to lead: the one that just answered when it is one, else the first by ID. */
function successorOf(self: EtcdMembership, view: FinalizeView): EtcdMembership | undefined {
  const voters = view.members
    .filter(e => e.id !== self.id && !e.isLearner && e.started)
    .sort((a, b) => a.id.localeCompare(b.id));
  return voters.find(e => e.clientURLs.includes(view.endpoint)) ?? voters[0];
}

/** A member of a static bootstrap attempt that never formed, deleted so the next attempt starts clean. */
function discardedByBootstrapRetry(cluster: EtcdCluster, member: EtcdMember): boolean {
  const discarding = cluster.status?.bootstrapRetry?.discarding ?? [];
  return !cluster.status?.clusterID && discarding.includes(member.metadata.name ?? '');
}

function unreachable(state: FinalizeState): FinalizeAction {
  const name = state.member.metadata.name ?? '';
  const others = state.others.map(m => m.metadata.name ?? '').sort();
  const asked =
    state.tried.length > 0
      ? `asked ${state.tried.join(', ')}${state.etcdError ? `: ${state.etcdError}` : ''}`
      : `none of ${others.join(', ')} has a Pod to ask (dormant or not yet added to etcd)`;
  return {
    kind: 'retry',
    reason: `cannot reach etcd through the other members (${asked}); keeping ${name}'s finalizer so no ghost member is left in etcd`,
  };
}

/**
 * Deleting the member that holds a formed cluster's only copy of its data would lose the cluster
 * (its PVC goes with it): with the cluster paused that is one `kubectl delete etcdmember` away. No
 * other member runs (all others dormant, being deleted or not yet added), so nobody has the data:
 * the deletion is held (the finalizer stays) until the cluster itself is deleted. A Memory-medium
 * member keeps nothing on disk, so it is not held.
 */
function onlyDataHolder(state: FinalizeState): FinalizeAction | undefined {
  const { member, cluster } = state;
  if (!cluster?.status?.clusterID || isMemoryMedium(member.spec.storage)) return undefined;
  const running = state.others.filter(
    m => !isBeingDeleted(m) && m.spec.dormant !== true && (m.spec.initialCluster ?? '') !== '',
  );
  if (running.length > 0) return undefined;
  const name = member.metadata.name ?? '';
  const clusterName = cluster.metadata.name ?? member.spec.clusterName;
  const message = `deletion of ${name} is held: it holds the only copy of EtcdCluster ${clusterName}'s data (on PVC ${pvcName(name)}); it and its data are deleted with the EtcdCluster (kubectl delete etcdcluster ${clusterName})`;
  return {
    kind: 'keep',
    reason: message,
    event: { type: 'Warning', reason: 'DeletionHeld', message },
  };
}
