// Per-member status: what one member says about itself and about the leader. Always asked of one
// endpoint with its own client, so an answer is known to come from that member.
import type { IStatusResponse } from 'etcd3';
import type { CallFailure } from './errors.ts';
import { callEndpoint, callFailure } from './connection.ts';
import type { EtcdConnectionOptions } from './connection.ts';
import { toHexId } from './ids.ts';

/**
 * etcd's uint64 counters as numbers: exact up to 2^53, far beyond any raft index or database size
 * a member reaches, and they serialise to JSON (for status and Events) where bigint does not.
 */
export interface MemberStatus {
  endpoint: string;
  /** The answering member (hex). */
  memberId: string;
  clusterId: string;
  /** The leader this member knows of (hex), undefined while it knows none. */
  leaderId: string | undefined;
  isLeader: boolean;
  isLearner: boolean;
  /** etcd server version, e.g. "3.5.16". */
  version: string;
  raftTerm: number;
  raftIndex: number;
  raftAppliedIndex: number;
  /** Bytes allocated by the backend database file. */
  dbSize: number;
  /** Bytes actually in use; the difference is what a defragmentation would give back. */
  dbSizeInUse: number;
  /** Errors the member reports, e.g. an active NOSPACE alarm. */
  errors: string[];
}

export type MemberStatusResult = { kind: 'ok'; status: MemberStatus } | CallFailure;

/** A status answer (or failure) labelled with the endpoint asked. */
export type EndpointStatus = MemberStatusResult & { endpoint: string };

export function toMemberStatus(endpoint: string, s: IStatusResponse): MemberStatus {
  const memberId = toHexId(s.header.member_id);
  const leaderId = s.leader && s.leader !== '0' ? toHexId(s.leader) : undefined;
  return {
    endpoint,
    memberId,
    clusterId: toHexId(s.header.cluster_id),
    leaderId,
    isLeader: leaderId === memberId,
    isLearner: s.isLearner === true,
    version: s.version,
    raftTerm: Number(s.raftTerm),
    raftIndex: Number(s.raftIndex),
    raftAppliedIndex: Number(s.raftAppliedIndex),
    dbSize: Number(s.dbSize),
    dbSizeInUse: Number(s.dbSizeInUse),
    errors: [...(s.errors ?? [])],
  };
}

/** Status of the member behind one endpoint. Learners answer too. */
export async function memberStatus(
  endpoint: string,
  options: EtcdConnectionOptions = {},
): Promise<MemberStatusResult> {
  const result = await callEndpoint(endpoint, options, client => client.maintenance.status());
  if (result.kind !== 'ok') return callFailure(result);
  return { kind: 'ok', status: toMemberStatus(endpoint, result.value) };
}

/**
 * Status of every endpoint, asked in parallel, in the order given. An endpoint that fails keeps
 * its place with its failure; nothing is thrown.
 */
export async function clusterStatus(
  endpoints: readonly string[],
  options: EtcdConnectionOptions = {},
): Promise<EndpointStatus[]> {
  return Promise.all(
    endpoints.map(async endpoint => ({ ...(await memberStatus(endpoint, options)), endpoint })),
  );
}

/**
 * The leader known to the answering member with the highest raft term (hex), or undefined when
 * none reports one. A member cut off from the others may still name an old leader of an old term.
 */
export function reportedLeader(statuses: readonly EndpointStatus[]): string | undefined {
  let best: MemberStatus | undefined;
  for (const s of statuses) {
    if (s.kind !== 'ok' || s.status.leaderId === undefined) continue;
    if (best === undefined || s.status.raftTerm > best.raftTerm) best = s.status;
  }
  return best?.leaderId;
}
