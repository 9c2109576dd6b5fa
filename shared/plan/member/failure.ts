// Why a member's etcd keeps exiting, read from its Pod's status: the termination message (the
// etcd container's last log lines, terminationMessagePolicy FallbackToLogsOnError), the exit and
// the restart count. Pure: reconcile-member's plan and its table tests share it.
//
// Two kinds of answer:
// - data: etcd says its data is gone or unusable (an empty data directory of a member that has run,
//   refused by the guard of etcdFlags, by etcd's own check of --initial-cluster against its peers or
//   as "already bootstrapped", a raft log behind what the cluster committed, the member's ID removed from etcd,
//   corrupt data). Each signature is definitive the first time it is seen: restarting cannot fix
//   it, so the member is replaced (new member ID) under reconcile-cluster's quorum guard.
// - crash loop: etcd exits again and again for another reason (a flag or option etcd refuses, for
//   example) — 5 exits with the same code within 10 minutes, from the member's record of its exits
//   (plan/member/restarts.ts): reported with etcd's own words, never replaced — a new member would get
//   the same configuration and fail the same way.
import type { V1ContainerStateTerminated, V1Pod } from '@kubernetes/client-node';
import type { EtcdMember } from '../../api/etcd-member.ts';
import { ETCD_CONTAINER } from '../../builders/pod.ts';
import { podJoinSettings } from './pod.ts';
import { isCrashLoop, recordRestarts } from './restarts.ts';

export type StartFailure =
  { kind: 'data'; reason: DataFailureReason; message: string } | { kind: 'crash-loop'; message: string };

export type DataFailureReason = 'DataDirEmpty' | 'RaftLogLost' | 'MemberRemoved' | 'DataCorrupt';

interface Signature {
  reason: DataFailureReason;
  test: RegExp;
  /**
   * Only meaningful for a member that has run (status.hasData, or a Pod started with etcdFlags'
   * empty-data guard): etcd asks its peers for the cluster, and checks its --initial-cluster
   * against theirs, only when its data directory has no WAL. A new member fails the same way while
   * its peers do not answer.
   */
  ranBefore?: boolean;
  says: string;
}

/** etcd's own words (3.4 and 3.5) for data it cannot use. */
const DATA_SIGNATURES: readonly Signature[] = [
  {
    reason: 'DataDirEmpty',
    test: /could not retrieve cluster information from the given URLs|error validating peerURLs/,
    ranBefore: true,
    says: 'its data directory is empty (wiped or a new volume), so etcd refused to start under the member ID',
  },
  {
    // etcd's own words for an initial member started `new` on an empty directory after the cluster
    // saw it run (etcd-flags.ts initialClusterState): no need for our record that it ran.
    reason: 'DataDirEmpty',
    test: /member [0-9a-f]+ has already been bootstrapped/,
    says: 'its data directory is empty (wiped or a new volume) while the cluster has seen it run, so etcd refused to start under the member ID',
  },
  {
    reason: 'RaftLogLost',
    test: /tocommit\(\d+\) is out of range \[lastIndex\(\d+\)\]/,
    says: 'its raft log is behind what the cluster committed with it (data directory wiped or rolled back)',
  },
  {
    reason: 'MemberRemoved',
    test: /the member has been permanently removed from the cluster|member [0-9a-f]+ has already been removed/,
    says: 'etcd removed its member ID from the cluster',
  },
  {
    reason: 'DataCorrupt',
    test: /found data inconsistency with peers|checkInitialHashKV failed|database file .* corrupt|invalid database|crc mismatch|failed to (find|recover) (v3 )?(database|snapshot)/i,
    says: 'etcd found its data corrupt',
  },
];

/**
 * What the member's Pod says about why etcd stopped, or undefined when nothing says a problem
 * (running, starting, or exited too few times to call a loop).
 */
export function startFailure(member: EtcdMember, pod: V1Pod | undefined): StartFailure | undefined {
  const status = pod?.status?.containerStatuses?.find(c => c.name === ETCD_CONTAINER);
  if (!pod || !status) return undefined;
  const exits = [status.state?.terminated, status.lastState?.terminated].filter(
    (t): t is V1ContainerStateTerminated => t !== undefined && t.exitCode !== 0,
  );
  const ran = member.status?.hasData === true || guardedPod(pod);
  for (const exit of exits) {
    const text = exit.message ?? '';
    const hit = DATA_SIGNATURES.find(s => s.test.test(text) && (!s.ranBefore || ran));
    if (hit) {
      const id = member.status?.memberID ? ` ${member.status.memberID}` : '';
      return {
        kind: 'data',
        reason: hit.reason,
        message: `etcd in Pod ${pod.metadata?.name} exited (code ${exit.exitCode}): ${hit.says}; member ID${id} cannot be restarted (etcd: ${etcdError(text)})`,
      };
    }
  }
  const last = exits[0];
  const record = recordRestarts(member.status?.restarts, pod);
  if (!last || status.state?.running || !isCrashLoop(record)) return undefined;
  const seen = record?.exits ?? [];
  const minutes = Math.max(1, Math.ceil((Date.parse(seen.at(-1)!.at) - Date.parse(seen[0].at)) / 60_000));
  return {
    kind: 'crash-loop',
    message: `etcd in Pod ${pod.metadata?.name} keeps exiting (${seen.length} exits with code ${last.exitCode} within ${minutes} min, ${status.restartCount} restarts): ${etcdError(last.message ?? '')}; not a data problem, so the member is not replaced while a new one would fail the same way: fix the cause in the EtcdCluster's spec (an option etcd refuses? spec.options, spec.resources), and the member is then replaced by one with the new settings`,
  };
}

/** Whether the Pod starts etcd with the empty-data guard (only itself in --initial-cluster, existing). */
function guardedPod(pod: V1Pod): boolean {
  const join = podJoinSettings(pod);
  const name = pod.metadata?.name ?? '';
  const cluster = join?.initialCluster;
  return (
    cluster !== undefined &&
    !cluster.includes(',') &&
    cluster.startsWith(`${name}=`) &&
    join?.state === 'existing' &&
    !!name
  );
}

/**
 * etcd's error in its own words, from the last log lines: the `error` of its last fatal/warn JSON
 * line, a Go panic line, or a flag parser complaint; else the last line, cut short.
 */
export function etcdError(text: string): string {
  const lines = text
    .split('\n')
    .map(l => l.trim())
    .filter(l => l !== '');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] ?? '';
    if (line.startsWith('panic: ')) return cut(line.slice('panic: '.length));
    if (line.startsWith('{')) {
      try {
        const entry = JSON.parse(line) as { level?: string; msg?: string; error?: string };
        if ((entry.level === 'fatal' || entry.level === 'panic') && (entry.error || entry.msg))
          return cut(entry.error ? `${entry.msg ? `${entry.msg}: ` : ''}${entry.error}` : (entry.msg ?? ''));
      } catch {
        // a cut JSON line: not etcd's error
      }
    }
    if (/flag provided but not defined|invalid (argument|value)|error verifying flags/.test(line))
      return cut(line);
  }
  return cut(lines.at(-1) ?? 'no log output');
}

function cut(s: string): string {
  return s.length > 300 ? `${s.slice(0, 300)}…` : s;
}
