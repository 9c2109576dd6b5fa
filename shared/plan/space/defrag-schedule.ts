// spec.maintenance.defrag.schedule: at each run every running member is defragmented once,
// followers first, the leader last (the member order and the fitness checks are the threshold
// path's, shared/plan/space/defrag.ts). The runs' memory is status.defragSchedule: when the next
// run is due, and which members the run under way has done. A member joins `defragmented` in the
// same status write that drops its claim in status.operation, so a crash mid-run continues the same
// run and never starts a member it has done again. Pure.
import type { EtcdCluster, EtcdClusterStatus } from '../../api/etcd-cluster.ts';
import type { DefragScheduleStatus } from '../../api/maintenance.ts';
import { parseCadence } from '../schedule/cadence.ts';
import { DEFAULT_TIME_ZONE } from '../../api/defaults.ts';

export type ScheduledRun =
  /** No schedule. */
  | { step: 'off' }
  /** The schedule does not parse (the CRD's CEL keeps most such strings out). */
  | { step: 'invalid'; why: string; record: DefragScheduleStatus }
  /** No run is due: the record to keep (nextRun set). */
  | { step: 'idle'; record: DefragScheduleStatus }
  /** A run is due or under way: the members it has left, in order. */
  | { step: 'run'; record: DefragScheduleStatus; remaining: string[] };

/** The schedule and its time zone as one string: a change of either recomputes nextRun. */
export function scheduleKey(cluster: EtcdCluster): string | undefined {
  const policy = cluster.spec.maintenance?.defrag;
  if (!policy?.schedule) return undefined;
  return `${policy.schedule} ${policy.timeZone ?? DEFAULT_TIME_ZONE}`;
}

/**
 * Where the schedule stands at `now`. `order`: the running members, followers first, the leader
 * last. A run due while another is unfinished waits for it; runs missed meanwhile are not made up
 * (the next run is the schedule's first time after the last one completed).
 */
export function scheduledRun(cluster: EtcdCluster, order: string[], now: Date): ScheduledRun {
  const key = scheduleKey(cluster);
  if (!key) return { step: 'off' };
  const policy = cluster.spec.maintenance!.defrag!;
  const cadence = parseCadence(policy.schedule!, policy.timeZone ?? DEFAULT_TIME_ZONE);
  const current = cluster.status?.defragSchedule ?? {};
  if (typeof cadence === 'string')
    return { step: 'invalid', why: cadence, record: { ...current, schedule: key, waiting: cadence } };
  const nextAfter = (at: Date) => cadence.next(at)?.toISOString();
  let record: DefragScheduleStatus = { ...current };
  if (record.schedule !== key || !record.nextRun) {
    record = { ...record, schedule: key };
    const next = nextAfter(now);
    if (next) record.nextRun = next;
    else delete record.nextRun;
  }
  const underWay = record.lastRun !== undefined && record.completedAt === undefined;
  if (!underWay && record.nextRun && now.getTime() >= Date.parse(record.nextRun)) {
    // A new run starts: due at nextRun; the next due time is set once it completes.
    record = { schedule: key, lastRun: record.nextRun, defragmented: [] };
  }
  if (record.lastRun === undefined || record.completedAt !== undefined) return { step: 'idle', record };
  const done = record.defragmented ?? [];
  const remaining = order.filter(name => !done.includes(name));
  if (remaining.length > 0) return { step: 'run', record, remaining };
  const { waiting: _cleared, ...finished } = record;
  const next = nextAfter(now);
  return {
    step: 'idle',
    record: { ...finished, completedAt: now.toISOString(), ...(next && { nextRun: next }) },
  };
}

/**
 * The status once `member`'s claim is dropped: without status.operation, and with the member
 * recorded as done in the scheduled run the claim was for (when `done` and that run still stands).
 */
export function statusWithoutClaim(
  status: EtcdClusterStatus,
  member: string,
  run: string | undefined,
  done: boolean,
): EtcdClusterStatus {
  const { operation: _dropped, ...rest } = status;
  const record = rest.defragSchedule;
  if (!done || run === undefined || record?.lastRun !== run || record.completedAt !== undefined) return rest;
  const defragmented = record.defragmented ?? [];
  if (defragmented.includes(member)) return rest;
  return { ...rest, defragSchedule: { ...record, defragmented: [...defragmented, member] } };
}
