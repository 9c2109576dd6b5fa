// Leadership transfer. etcd serves MoveLeader on the leader only ("etcdserver: not leader"
// elsewhere), so the leader is found first from the members' own status, and the request is
// sent to that member's endpoint. Needed before removing the leader: the transfer is immediate,
// whereas removing the leader costs an election.
import { CALL_FAILURES, narrowFailure } from './errors.ts';
import type { CallFailure, FailureOf } from './errors.ts';
import { callEndpoint } from './connection.ts';
import type { EtcdConnectionOptions } from './connection.ts';
import { toDecimalId, toHexId } from './ids.ts';
import { listMembers } from './members.ts';
import { clusterStatus, reportedLeader } from './status.ts';

export type MoveLeaderResult =
  /** `toId` leads now (also when it already did: then `previousLeaderId === leaderId`). */
  | { kind: 'ok'; leaderId: string; previousLeaderId: string }
  | FailureOf<'bad-leader-transferee' | 'not-leader'>
  | CallFailure;

/**
 * Makes member `toId` (hex) the leader. `not-leader` means the leader changed meanwhile: ask again.
 * Throws only for an ID that is not hex.
 */
export async function moveLeader(
  endpoints: readonly string[],
  toId: string,
  options: EtcdConnectionOptions = {},
): Promise<MoveLeaderResult> {
  const targetID = toDecimalId(toId);
  const target = toHexId(targetID);
  const statuses = await clusterStatus(endpoints, options);
  const leaderId = reportedLeader(statuses);
  if (leaderId === undefined) {
    const why = statuses.map(s => `${s.endpoint}: ${s.kind === 'ok' ? 'no leader' : s.message}`).join('; ');
    return { kind: 'unavailable', message: `no member reports a leader (${why})` };
  }
  if (leaderId === target) return { kind: 'ok', leaderId, previousLeaderId: leaderId };
  const leaderEndpoint = await endpointOf(leaderId, endpoints, options, statuses);
  if (leaderEndpoint === undefined) {
    return { kind: 'unavailable', message: `no client URL known for the leader ${leaderId}` };
  }
  const result = await callEndpoint(leaderEndpoint, options, client =>
    client.maintenance.moveLeader({ targetID }),
  );
  if (result.kind === 'ok') return { kind: 'ok', leaderId: target, previousLeaderId: leaderId };
  return narrowFailure(result, ['bad-leader-transferee', 'not-leader', ...CALL_FAILURES]);
}

/** The endpoint that answered as `memberId`, else the member's first advertised client URL. */
async function endpointOf(
  memberId: string,
  endpoints: readonly string[],
  options: EtcdConnectionOptions,
  statuses: Awaited<ReturnType<typeof clusterStatus>>,
): Promise<string | undefined> {
  for (const s of statuses) if (s.kind === 'ok' && s.status.memberId === memberId) return s.endpoint;
  const listed = await listMembers(endpoints, options);
  if (listed.kind !== 'ok') return undefined;
  return listed.members.find(m => m.id === memberId)?.clientURLs[0];
}
