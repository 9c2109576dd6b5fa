// The guard before etcd 3.7 on a cluster that ran 3.5. etcd 3.5 proposes some raft entries as bare
// v2 requests (etcdserverpb.Request): each member's publish of its attributes at every start, the
// cluster version, v2 SYNC. etcd 3.6 still reads them (applyEntryNormal falls back to
// pb.Request); etcd 3.7 does not (apply.Apply unmarshals every normal entry as an
// InternalRaftRequest and panics: "unmarshal should never fail"). A member replays, at every start,
// the entries of its write-ahead log above its last raft snapshot, so a member whose log still
// holds such an entry above that snapshot crash-loops on 3.7 (verified with etcd 3.5.35, 3.6.16
// and 3.7.3). 3.6 never writes them. Pure: reconcile-cluster observes, this decides.
//
// The evidence, and why it is this one. etcd 3.6 checks after every batch it applies whether
// applied − lastSnapshot > snapshotCount and, if so, saves a snapshot at the applied index before
// the next batch (snapshotIfNeededAndCompactRaftLog, synchronously in the apply job, which a
// graceful stop lets finish). So a member that reports applied index A has a snapshot at A − S or
// later (S: the --snapshot-count its process runs with, read from its Pod). Entries of 3.5 lie at
// or below H, the highest raft index any member reports once every member is seen running 3.6: a
// 3.5 process is gone by then, and what it proposed was committed or dropped. Hence a member with
// A ≥ H + S replays nothing of 3.5. H is one index for the whole cluster, not each member's index
// when it was first seen on 3.6: a member still on 3.5 (restarting, say) writes 3.5 entries into
// every member's log after the first one moved to 3.6. etcd's snapshot metrics
// (etcd_debugging_snap_save_total_duration_seconds_count) were the other candidate: a per-process
// counter, reset by every restart and silent on the index the snapshot was taken at, served on a
// port the operator does not otherwise dial.
import type { LegacyRaftEntries } from '../../api/etcd-cluster.ts';
import type { EtcdMember } from '../../api/etcd-member.ts';
import type { ClusterState } from '../cluster/types.ts';
import { activeMembers, podOf, runningMembers } from '../cluster/members.ts';
import { minorNumber } from './version-moves.ts';

const MINOR_3_6 = 3006;
const MINOR_3_7 = 3007;

/** The Progressing reason while an upgrade to 3.7 waits for the members' raft snapshots. */
export const WAITING_FOR_RAFT_SNAPSHOT = 'WaitingForRaftSnapshot';

const below = (version: string | undefined, minor: number): boolean => {
  const n = minorNumber(version);
  return n !== undefined && n < minor;
};

const nameOf = (m: EtcdMember): string => m.metadata.name ?? '';

/**
 * status.legacyRaftEntries after this observation. Absent while any member (even one being deleted)
 * is set to or reports a release before 3.6; 0 when the cluster forms now on 3.6 or later (its logs
 * are new); otherwise kept once recorded, and recorded as the highest raft index any member reports
 * once every running member reports 3.6 or later and has answered.
 */
export function legacyRaftEntries(state: ClusterState, formsNow = false): LegacyRaftEntries | undefined {
  if (anyBefore36(state)) return undefined;
  if (formsNow) return { upToIndex: 0 };
  const current = state.cluster.status?.legacyRaftEntries;
  if (current) return current;
  const running = runningMembers(state);
  if (running.length === 0 || !running.every(m => minorNumber(m.status?.version) !== undefined))
    return undefined;
  const reports = running.map(m => state.raftIndexes?.[nameOf(m)]);
  if (reports.some(r => r === undefined)) return undefined;
  return { upToIndex: Math.max(...reports.map(r => Math.max(r!.raftIndex, r!.applied))) };
}

/** Members that would be rolled to 3.7: any not yet reporting 3.7 or later, paused ones too. */
function toRoll(state: ClusterState): EtcdMember[] {
  return activeMembers(state).filter(m => {
    const minor = minorNumber(m.status?.version);
    return minor === undefined || minor < MINOR_3_7;
  });
}

const anyBefore36 = (state: ClusterState): boolean =>
  state.members.some(m => below(m.spec.version, MINOR_3_6) || below(m.status?.version, MINOR_3_6));

/** Whether reconcile-cluster should read each member's raft indexes (to record H, or to judge). */
export function needsRaftIndexes(state: ClusterState): boolean {
  if (!state.etcd?.reachable || runningMembers(state).length === 0) return false;
  const record = state.cluster.status?.legacyRaftEntries;
  if (!record) return !anyBefore36(state);
  return record.upToIndex > 0 && guardApplies(state);
}

/** spec.version is 3.7 or later and some member does not run it yet. */
function guardApplies(state: ClusterState): boolean {
  return !below(state.cluster.spec.version, MINOR_3_7) && toRoll(state).length > 0;
}

/**
 * Why spec.version (3.7 or later) cannot be taken yet, or undefined when it can: some member may
 * still replay raft entries written under 3.5. Conservative: no record, no answer or no
 * --snapshot-count on a member's Pod all wait.
 */
export function raftSnapshotWait(
  state: ClusterState,
  record: LegacyRaftEntries | undefined,
): string | undefined {
  const wanted = state.cluster.spec.version;
  if (!guardApplies(state) || record?.upToIndex === 0) return undefined;
  const before = `waiting before the upgrade to etcd ${wanted}`;
  const cannot = 'which etcd 3.7 cannot read (it would crash at start)';
  const members = toRoll(state);
  if (!record) {
    const missing = members.find(m => minorNumber(m.status?.version) === undefined);
    return `${before}: the members' raft logs may still hold entries written under etcd 3.5, ${cannot}; etcdfn tells once every member runs 3.6 and answers${missing ? ` (member ${nameOf(missing)} has not reported its release yet)` : ''}`;
  }
  const h = record.upToIndex;
  const behind: string[] = [];
  for (const m of members) {
    const name = nameOf(m);
    const report = state.raftIndexes?.[name];
    const s = podOf(state, m)?.snapshotCount;
    if (m.spec.dormant === true)
      behind.push(
        `member ${name} is paused and its raft log may still hold entries written under etcd 3.5 (raft index ${h} and below), ${cannot}; resume the cluster on 3.6 first`,
      );
    else if (!report)
      behind.push(
        `member ${name} did not answer with its raft index, and its raft log may still hold entries written under etcd 3.5 (raft index ${h} and below), ${cannot}`,
      );
    else if (!s)
      behind.push(
        `member ${name} may still replay raft entries written under etcd 3.5 (raft index ${h} and below), ${cannot}, and its Pod does not say its --snapshot-count`,
      );
    else if (report.applied < h + s)
      behind.push(
        `member ${name} may still replay raft entries written under etcd 3.5 (raft index ${h} and below), ${cannot}; etcd has saved a raft snapshot past them once the member's applied raft index reaches ${h + s} (its snapshotCount is ${s}; etcdctl endpoint status shows the index), and the upgrade then starts by itself: writes to the cluster bring that sooner`,
      );
  }
  const first = behind[0];
  if (!first) return undefined;
  const more = behind.length - 1;
  return `${before}: ${first}${more > 0 ? ` (${more} more member${more === 1 ? '' : 's'} likewise)` : ''}`;
}
