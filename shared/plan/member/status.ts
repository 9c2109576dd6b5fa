// The EtcdMember status reconcile-member holds: where the member runs, what etcd calls it, and a
// Ready condition a person can act on. Computed from observed state alone, so two invocations that
// see the same world compute the same status, and a steady member is never rewritten.
import { isDeepStrictEqual } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdMember, EtcdMemberStatus } from '../../api/etcd-member.ts';
import { setCondition, type ConditionInput } from '../../conditions.ts';
import { isMemoryMedium } from '../../builders/storage.ts';
import type { EtcdMember as EtcdMembership } from '../../etcd/members.ts';
import { sameURL } from '../../etcd/connection.ts';
import type { MemberStatus as SelfReport } from '../../etcd/status.ts';
import { recordRestarts } from './restarts.ts';
import { clientUrl, peerUrl, pvcName } from '../../names.ts';

export const READY = 'Ready';

export interface MemberUrls {
  peer: string;
  client: string;
}

/** The URLs the member's Pod advertises (the scheme follows the member's own TLS settings). */
export function ownUrls(member: EtcdMember): MemberUrls {
  const where = {
    namespace: member.metadata.namespace ?? '',
    cluster: member.spec.clusterName,
    member: member.metadata.name ?? '',
  };
  return {
    peer: peerUrl({ ...where, tls: member.spec.tls?.peerSecretRef !== undefined }),
    client: clientUrl({ ...where, tls: member.spec.tls?.clientServerSecretRef !== undefined }),
  };
}

/** This member in etcd's list: by its recorded ID, by name once started, by peer URL before. */
export function findInEtcd(
  member: EtcdMember,
  etcdMembers: readonly EtcdMembership[],
): EtcdMembership | undefined {
  const id = member.status?.memberID;
  const name = member.metadata.name ?? '';
  const peer = ownUrls(member).peer;
  return (
    (id ? etcdMembers.find(e => e.id === id) : undefined) ??
    etcdMembers.find(e => (e.name !== '' && e.name === name) || e.peerURLs.some(u => sameURL(u, peer)))
  );
}

export interface StatusInputs {
  now: Date;
  member: EtcdMember;
  /** The member's own Pod (controlled by it); undefined when there is none. */
  pod?: V1Pod;
  /** Clear podName/podUID: the member is paused and has no Pod by design. */
  clearPod?: boolean;
  /** This member as etcd lists it, when etcd answered and knows it. */
  membership?: EtcdMembership;
  /** What the member's own endpoint said about itself. */
  self?: SelfReport;
  ready: ConditionInput;
}

export function memberStatus(input: StatusInputs): EtcdMemberStatus {
  const { member, pod, membership, self } = input;
  const current = member.status ?? {};
  const urls = ownUrls(member);
  const status: EtcdMemberStatus = { ...current, peerURL: urls.peer, clientURL: urls.client };

  if (isMemoryMedium(member.spec.storage)) delete status.pvcName;
  else status.pvcName = pvcName(member.metadata.name ?? '');

  if (input.clearPod) {
    delete status.podName;
    delete status.podUID;
  } else if (pod?.metadata?.name) {
    status.podName = pod.metadata.name;
    // A new Pod may run another release (an upgrade): what the old one reported no longer holds.
    if (pod.metadata.uid && pod.metadata.uid !== current.podUID) delete status.version;
    if (pod.metadata.uid) status.podUID = pod.metadata.uid;
  }

  // Exits are noted as they are seen: the Pod only ever shows the last one (plan/member/restarts.ts).
  const restarts = recordRestarts(current.restarts, input.clearPod ? undefined : pod);
  if (restarts) status.restarts = restarts;
  else delete status.restarts;

  const memberID = membership?.id ?? current.memberID ?? self?.memberId;
  if (memberID) status.memberID = memberID;
  setRole(status, member, membership);
  // The running version, as the member itself reports it; kept when it does not answer.
  const answered = self !== undefined && (!status.memberID || self.memberId === status.memberID);
  if (answered) status.version = self.version;
  // etcd ran as this member, so its volume holds the member's data (sticky: see etcdFlags' guard).
  if ((answered && self.memberId === status.memberID) || membership?.started) status.hasData = true;

  const generation = member.metadata.generation;
  if (generation !== undefined) status.observedGeneration = generation;
  const ready = generation === undefined ? input.ready : { ...input.ready, observedGeneration: generation };
  status.conditions = setCondition(current.conditions, ready, input.now);
  return status;
}

/**
 * Voter or learner. A member only ever goes from learner to voter (etcd cannot demote), so a voter
 * recorded by reconcile-cluster's promotion is never taken back by a stale read; the seed is a voter
 * from the start.
 */
function setRole(status: EtcdMemberStatus, member: EtcdMember, membership: EtcdMembership | undefined): void {
  const voter =
    status.isVoter === true ||
    member.spec.bootstrap === true ||
    (membership !== undefined && !membership.isLearner);
  if (voter) {
    status.isVoter = true;
    status.role = 'voter';
  } else if (membership?.isLearner) {
    status.isVoter = false;
    status.role = 'learner';
  }
}

/** The role label the member's Pod should carry, when the role is known. */
export function desiredRole(status: EtcdMemberStatus): 'voter' | 'learner' | undefined {
  if (status.isVoter === true) return 'voter';
  return status.role === 'learner' ? 'learner' : undefined;
}

/** True when writing `next` would change what the API server holds (undefined fields ignored). */
export function statusDiffers(current: EtcdMemberStatus | undefined, next: EtcdMemberStatus): boolean {
  const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? {}));
  return !isDeepStrictEqual(plain(current), plain(next));
}
