// Cluster membership: list, add a learner, promote, remove.
//
// Every change is sent exactly once, to one endpoint chosen by first listing the members there
// (an idempotent call that may try endpoint after endpoint; learners, which refuse membership
// calls, and the member being removed are passed over when another member answers). A change
// whose reply is lost comes back as `unavailable`, and repeating it is safe because etcd answers a
// repeat with a distinct, typed refusal: a repeated add → `peer-url-exists` (with the member to
// adopt), a repeated promote → `not-a-learner`, a repeated remove → `member-not-found`.
import type { IMember } from 'etcd3';
import { CALL_FAILURES, narrowFailure } from './errors.ts';
import type { CallFailure, FailureOf } from './errors.ts';
import { callEndpoint, callFailure, callFirstAvailable, sameURL } from './connection.ts';
import type { EtcdConnectionOptions } from './connection.ts';
import { toDecimalId, toHexId } from './ids.ts';
import { clusterStatus } from './status.ts';

export interface EtcdMember {
  /** 16 lowercase hex digits. */
  id: string;
  /**
   * Empty until a learner has started; a member of a static bootstrap is listed with its name from
   * --initial-cluster even before its process first runs.
   */
  name: string;
  peerURLs: string[];
  /** Empty until the member has started (it publishes them itself). */
  clientURLs: string[];
  isLearner: boolean;
  /**
   * The member's process has run in the cluster at least once: it published its client URLs. Not
   * its name: a static bootstrap's member never started is listed with one.
   */
  started: boolean;
}

export type ListMembersResult =
  { kind: 'ok'; members: EtcdMember[]; clusterId: string; endpoint: string } | CallFailure;

export type AddLearnerResult =
  | { kind: 'ok'; member: EtcdMember; members: EtcdMember[] }
  /** A member with this peer URL exists (most likely our own earlier add): adopt `member`. */
  | { kind: 'peer-url-exists'; message: string; member: EtcdMember | undefined }
  | FailureOf<'too-many-learners' | 'unhealthy-cluster'>
  | CallFailure;

export type PromoteResult =
  | { kind: 'ok'; member: EtcdMember | undefined; members: EtcdMember[] }
  | FailureOf<'learner-not-in-sync' | 'not-a-learner' | 'member-not-found' | 'not-enough-started-members'>
  | CallFailure;

export type RemoveResult =
  | { kind: 'ok'; members: EtcdMember[] }
  | FailureOf<'member-not-found' | 'unhealthy-cluster' | 'not-enough-started-members'>
  | CallFailure;

export function toMember(m: IMember): EtcdMember {
  return {
    id: toHexId(m.ID),
    name: m.name,
    peerURLs: [...m.peerURLs],
    clientURLs: [...m.clientURLs],
    isLearner: m.isLearner === true,
    started: m.clientURLs.length > 0,
  };
}

/** The member list (linearizable), from the first endpoint that answers. */
export async function listMembers(
  endpoints: readonly string[],
  options: EtcdConnectionOptions = {},
): Promise<ListMembersResult> {
  const result = await callFirstAvailable(endpoints, options, client =>
    client.cluster.memberList({ linearizable: true }),
  );
  if (result.kind !== 'ok') return callFailure(result);
  return {
    kind: 'ok',
    members: result.value.members.map(toMember),
    clusterId: toHexId(result.value.header.cluster_id),
    endpoint: result.endpoint,
  };
}

/**
 * Adds a learner with one peer URL. Never retried: see the module comment. On `peer-url-exists` the
 * existing member is looked up and returned, so the caller can adopt it.
 */
export async function addLearner(
  endpoints: readonly string[],
  peerURL: string,
  options: EtcdConnectionOptions = {},
): Promise<AddLearnerResult> {
  const listed = await chooseEndpoint(endpoints, options, m => m.isLearner);
  if (listed.kind !== 'ok') return listed;
  const result = await callEndpoint(listed.endpoint, options, client =>
    client.cluster.memberAdd({ peerURLs: [peerURL], isLearner: true }),
  );
  if (result.kind === 'ok') {
    return { kind: 'ok', member: toMember(result.value.member), members: result.value.members.map(toMember) };
  }
  if (result.kind === 'peer-url-exists') {
    return {
      kind: 'peer-url-exists',
      message: result.message,
      member: await memberByPeerURL(endpoints, peerURL, options, listed.members),
    };
  }
  return narrowFailure(result, ['too-many-learners', 'unhealthy-cluster', ...CALL_FAILURES]);
}

/**
 * Promotes a learner (hex ID) to a voter. etcd refuses until the learner has caught up. Throws only
 * for an ID that is not hex, which is a bug in the caller, not an outcome.
 */
export async function promote(
  endpoints: readonly string[],
  id: string,
  options: EtcdConnectionOptions = {},
): Promise<PromoteResult> {
  const ID = toDecimalId(id);
  const listed = await chooseEndpoint(endpoints, options, m => m.isLearner);
  if (listed.kind !== 'ok') return listed;
  const target = options.auth
    ? ((await leaderEndpoint(endpoints, options)) ?? listed.endpoint)
    : listed.endpoint;
  const result = await callEndpoint(target, options, client => client.cluster.memberPromote({ ID }));
  if (result.kind === 'ok') {
    const members = result.value.members.map(toMember);
    return { kind: 'ok', member: members.find(m => m.id === toHexId(ID)), members };
  }
  return narrowFailure(result, [
    'learner-not-in-sync',
    'not-a-learner',
    'member-not-found',
    'not-enough-started-members',
    ...CALL_FAILURES,
  ]);
}

/**
 * Removes a member (hex ID). The request goes to another member than the one being removed when
 * one answers, so the reply is not lost to the removed member shutting down. Removing the leader
 * works, but costs an election: move the leadership away first (`moveLeader`). Throws only for an
 * ID that is not hex.
 */
export async function remove(
  endpoints: readonly string[],
  id: string,
  options: EtcdConnectionOptions = {},
): Promise<RemoveResult> {
  const ID = toDecimalId(id);
  const hexId = toHexId(ID);
  const listed = await chooseEndpoint(endpoints, options, m => m.isLearner || m.id === hexId);
  if (listed.kind !== 'ok') return listed;
  const result = await callEndpoint(listed.endpoint, options, client => client.cluster.memberRemove({ ID }));
  if (result.kind === 'ok') return { kind: 'ok', members: result.value.members.map(toMember) };
  return narrowFailure(result, [
    'member-not-found',
    'unhealthy-cluster',
    'not-enough-started-members',
    ...CALL_FAILURES,
  ]);
}

/**
 * Lists the members and picks the endpoint a change goes to: the first that answers and does not
 * belong to a member `avoid` names (learners refuse membership calls; a member being removed may
 * shut down before its reply is out), else the first that answered at all.
 */
async function chooseEndpoint(
  endpoints: readonly string[],
  options: EtcdConnectionOptions,
  avoid: (member: EtcdMember) => boolean,
): Promise<ListMembersResult> {
  let fallback: ListMembersResult | undefined;
  let remaining = [...endpoints];
  for (;;) {
    const listed = await listMembers(remaining, options);
    if (listed.kind !== 'ok') return fallback ?? listed;
    const owner = listed.members.find(m => m.clientURLs.some(url => sameURL(url, listed.endpoint)));
    if (owner === undefined || !avoid(owner)) return listed;
    fallback ??= listed;
    remaining = remaining.slice(remaining.indexOf(listed.endpoint) + 1);
    if (remaining.length === 0) return fallback;
  }
}

/**
 * With auth on, a follower forwards a promote to the leader without the caller's token and the
 * leader refuses it ("user name is empty"), so the call runs out its deadline: etcd bug #20757,
 * unfixed in 3.4.23 and 3.5.16. The promote then goes to the leader itself.
 */
async function leaderEndpoint(
  endpoints: readonly string[],
  options: EtcdConnectionOptions,
): Promise<string | undefined> {
  const statuses = await clusterStatus(endpoints, options);
  return statuses.find(s => s.kind === 'ok' && s.status.isLeader)?.endpoint;
}

async function memberByPeerURL(
  endpoints: readonly string[],
  peerURL: string,
  options: EtcdConnectionOptions,
  known: EtcdMember[],
): Promise<EtcdMember | undefined> {
  const has = (m: EtcdMember): boolean => m.peerURLs.some(url => sameURL(url, peerURL));
  const found = known.find(has);
  if (found) return found;
  const fresh = await listMembers(endpoints, options);
  return fresh.kind === 'ok' ? fresh.members.find(has) : undefined;
}
