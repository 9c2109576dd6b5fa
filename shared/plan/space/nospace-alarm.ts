// NOSPACE: etcd raised its space alarm (the database reached its quota) and refuses every write.
// The way back is etcd's own: compact the history, defragment each member to give the space back,
// then disarm. Only with every member ready and in etcd as a voter (a defragmentation briefly
// stops the member it runs on, so it must never take out the last healthy ones), followers first
// and the leader last (at most one election).
import { defaultQuotaBackendBytes } from '../../builders/etcd-flags.ts';
import type { ClusterState } from '../cluster/types.ts';
import type { MembershipStep } from '../cluster/step.ts';
import { isMemberReady, memberUrls, membershipOf, runningMembers } from '../cluster/members.ts';

/** The recovery step while NOSPACE is raised and the cluster can take it; undefined otherwise. */
export function planSpaceRecovery(state: ClusterState): MembershipStep | undefined {
  const etcd = state.etcd;
  if (!etcd?.reachable || !etcd.alarms?.includes('NOSPACE')) return undefined;
  const cluster = state.cluster;
  const running = runningMembers(state);
  const inEtcd = running.map(m => ({ member: m, membership: membershipOf(cluster, m, etcd.members) }));
  const everyoneReady =
    running.length > 0 &&
    running.length === etcd.members.length &&
    inEtcd.every(
      ({ member, membership }) => isMemberReady(state, member) && membership && !membership.isLearner,
    );
  if (!everyoneReady || etcd.alarms.includes('CORRUPT')) return undefined;
  const ordered = [...inEtcd].sort((a, b) => {
    const leaderA = a.membership?.id === etcd.leaderId ? 1 : 0;
    const leaderB = b.membership?.id === etcd.leaderId ? 1 : 0;
    return leaderA - leaderB || (a.member.metadata.name ?? '').localeCompare(b.member.metadata.name ?? '');
  });
  const members = ordered.map(({ member }) => {
    const name = member.metadata.name ?? '';
    return { name, endpoint: memberUrls(cluster, name).client };
  });
  const quotaBytes = quotaOf(state);
  const message = `etcd raised NOSPACE: the database reached its quota of ${mib(quotaBytes)} and writes are refused; compacting, defragmenting ${members.map(m => m.name).join(', ')} one at a time, then disarming`;
  const already = cluster.status?.conditions?.some(
    c => c.type === 'Progressing' && c.reason === 'RecoveringSpace',
  );
  return {
    action: { kind: 'recover-space', members, quotaBytes },
    progress: { active: true, reason: 'RecoveringSpace', message },
    events: already ? [] : [{ type: 'Warning', reason: 'NoSpace', message }],
  };
}

/** A defragmented database above this share of the quota would raise NOSPACE again at once. */
const LIVE_DATA_LIMIT = 0.9;

/** Why disarming cannot give writes back: the defragmented database (the live data) fills the quota. */
export function liveDataTooLarge(member: string, liveBytes: number, quotaBytes: number): string | undefined {
  if (quotaBytes <= 0 || liveBytes <= quotaBytes * LIVE_DATA_LIMIT) return undefined;
  return `the live data alone (${mib(liveBytes)} on ${member}) fills the ${mib(quotaBytes)} quota: delete keys, or raise spec.options.quotaBackendBytes`;
}

/** The quota etcd runs with: the user's, else what the member builder chose for the volume. */
function quotaOf(state: ClusterState): number {
  const explicit = state.cluster.spec.options?.quotaBackendBytes;
  if (explicit) return explicit;
  const member = runningMembers(state)[0];
  return member ? Number(defaultQuotaBackendBytes(member)) : 0;
}

export const mib = (bytes: number): string => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;
