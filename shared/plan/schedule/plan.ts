// run-snapshot's decision for an EtcdSnapshotSchedule: given the schedule, its cluster, the
// EtcdSnapshots it owns and the time, which snapshot to create (if one is due), which old ones to
// delete, and the schedule's status. Pure: no I/O, no clock; the cron is read by plan/schedule/cadence.ts.
//
// When a run is due: the most recent time the cron names (in spec.timeZone) that is not later than
// `now` and later than the last run, the schedule's creation and the moment it was last resumed. Only
// that one run is ever considered: older times that were not taken are not caught up. It is taken
// when it is at most `startingDeadlineMs` late, the cluster exists, the schedule is not suspended and
// no snapshot of the schedule is still unfinished; after the deadline it is recorded as missed.
//
// The snapshot of a run is named <schedule>-<yyyymmddhhmm> (the run's time in UTC), so every
// invocation that decides on the same run creates the same object (AlreadyExists = done). The run is
// claimed first: status.lastScheduleTime and status.active name it (a compare-and-swap status write),
// then the snapshot is created; a crash in between is repaired by the next invocation, which sees the
// claim without its snapshot and creates it.
//
// Only verified snapshots (Complete with Verified True: read back from the store and checked) count
// as successes. Retention (also while suspended): of the verified snapshots the newest keepLast stay
// (so the newest verified one always stays), older ones are deleted together with their S3 object,
// but only an object whose recorded URI is the snapshot's key and whose ETag was recorded: the
// deletion checks both against the store; on a PVC, a Job removes the file only if its owner file
// names the snapshot and its SHA-256 is the recorded one. A Failed snapshot is deleted once a later run has
// succeeded (its object, if verification failed, is kept); of the failures since the last success
// the newest FAILED_KEPT stay, so a person can read why, without a broken schedule piling up one
// object a minute. Unfinished snapshots, and Complete ones without a Verified condition (made before
// verification existed), are never deleted.
import type { Condition } from '../../api/common.ts';
import type { EtcdSnapshot } from '../../api/etcd-snapshot.ts';
import type { EtcdSnapshotSchedule, EtcdSnapshotScheduleStatus } from '../../api/etcd-snapshot-schedule.ts';
import type { EventContent } from '../../builders/k8s-event.ts';
import { findCondition, setCondition, toKubeTime } from '../../conditions.ts';
import { ownerOf, snapshotTarget } from '../../s3/location.ts';
import { pvcUri, snapshotFilePath } from '../../snapshot-file/result.ts';
import { isFinished } from '../snapshot/plan.ts';
import { parseCadence } from './cadence.ts';
import { runSnapshot, runSnapshotName, scheduledTimeOf } from './run.ts';
import { DEFAULT_TIME_ZONE } from '../../api/defaults.ts';
import { SNAPSHOT_VERIFIED } from '../snapshot/types.ts';
import {
  type ScheduleState,
  type ScheduleDeletion,
  type SchedulePlan,
  SCHEDULE_READY,
  SCHEDULE_SUSPENDED,
  SCHEDULE_RETENTION,
  FAILED_KEPT,
  DEFAULT_KEEP_LAST,
  MAX_SCHEDULE_NAME,
} from './types.ts';

export function planSchedule(state: ScheduleState): SchedulePlan {
  // Over 80 lines: one ordered pass over a schedule's rules (name, cluster, suspension, the due run,
  // a missed run, retention, status), each returning early; the order is what plan-schedule*.test.ts
  // pins. Splitting it by rule, as reconcile-cluster's concerns are, is left open (issue 31).
  const { schedule, now, timings } = state;
  const name = schedule.metadata.name ?? '';
  const ns = schedule.metadata.namespace ?? '';
  const old = schedule.status ?? {};
  if (schedule.metadata.deletionTimestamp) {
    return unchanged(schedule, `EtcdSnapshotSchedule ${ns}/${name} is being deleted`);
  }

  const live = state.snapshots.filter(s => !s.metadata.deletionTimestamp);
  const byRunDesc = [...live].sort(newestFirst);
  const unfinished = byRunDesc.filter(s => !isFinished(s));
  const complete = byRunDesc.filter(isVerified);
  const failed = byRunDesc.filter(s => s.status?.phase === 'Failed');

  // What the snapshots themselves say beats status, which may lag after a crash.
  const lastRun = latest(
    timeOf(old.lastScheduleTime),
    ...state.snapshots.map(s => scheduledTimeOf(s)).filter(t => t > 0),
  );
  const lastSuccess = latest(
    timeOf(old.lastSuccessfulTime),
    ...complete.map(s => timeOf(s.status?.completionTime) ?? 0).filter(t => t > 0),
  );

  let conditions = old.conditions;
  const events: EventContent[] = [];
  const setReady = (status: 'True' | 'False', reason: string, message: string) => {
    conditions = setCondition(conditions, { type: SCHEDULE_READY, status, reason, message }, now);
  };

  const spec = schedule.spec;
  const keepLast = spec.retention?.keepLast ?? DEFAULT_KEEP_LAST;
  const suspended = spec.suspend === true;
  const zone = spec.timeZone || DEFAULT_TIME_ZONE;
  const cadence = name.length > MAX_SCHEDULE_NAME ? nameTooLong(name) : parseCadence(spec.schedule, zone);

  // Suspension: remembered in a condition, so runs that fell due while suspended are not caught up.
  const wasSuspended = findCondition(conditions, SCHEDULE_SUSPENDED);
  if (suspended) {
    conditions = setCondition(
      conditions,
      { type: SCHEDULE_SUSPENDED, status: 'True', reason: 'Suspended', message: 'spec.suspend is true' },
      now,
    );
  } else if (wasSuspended) {
    conditions = setCondition(
      conditions,
      {
        type: SCHEDULE_SUSPENDED,
        status: 'False',
        reason: 'Resumed',
        message: 'spec.suspend is false; runs that fell due while suspended were not caught up',
      },
      now,
    );
  }
  const resumedAt =
    !suspended && wasSuspended
      ? timeOf(findCondition(conditions, SCHEDULE_SUSPENDED)?.lastTransitionTime)
      : undefined;

  let create: EtcdSnapshot | undefined;
  let claimed: string | undefined;
  let lastScheduleTime = lastRun;
  let nextScheduleTime: number | undefined;
  const clusterName = spec.clusterRef.name;
  const { cluster } = state;
  const every = `"${spec.schedule}"${zone === DEFAULT_TIME_ZONE ? ` (${DEFAULT_TIME_ZONE})` : ` in ${zone}`}`;

  if (typeof cadence === 'string') {
    setReady('False', 'InvalidSchedule', `${cadence}; no snapshots are taken until it is fixed`);
  } else if (suspended) {
    setReady(
      'False',
      'Suspended',
      'spec.suspend is true: no new snapshots are taken (retention still applies); set it to false to resume',
    );
  } else {
    const next = cadence.next(now);
    nextScheduleTime = next?.getTime();
    const nextText = next ? `the next run is at ${toKubeTime(next)}` : `${every} names no future time`;
    const windowStart = latest(timeOf(schedule.metadata.creationTimestamp), lastRun, resumedAt) ?? 0;
    const due = cadence.previous(now);
    const dueTime = due?.getTime();
    const dueName = due ? runSnapshotName(name, due) : undefined;
    const late = dueTime !== undefined ? now.getTime() - dueTime : 0;
    // A run claimed in status whose snapshot was never created (the invocation stopped in between).
    const orphanClaim =
      dueTime !== undefined &&
      dueName !== undefined &&
      timeOf(old.lastScheduleTime) === dueTime &&
      (old.active ?? []).includes(dueName) &&
      !state.snapshots.some(s => s.metadata.name === dueName) &&
      late <= timings.startingDeadlineMs;
    const isDue = dueTime !== undefined && dueTime > windowStart;

    if (!cluster) {
      setReady(
        'False',
        'ClusterNotFound',
        `EtcdCluster ${clusterName} not found in namespace ${ns}; no snapshots are taken until it exists ` +
          `(runs that fall due meanwhile are skipped); ${nextText}`,
      );
    } else if (cluster.metadata.deletionTimestamp) {
      setReady(
        'False',
        'ClusterDeleted',
        `EtcdCluster ${clusterName} is being deleted; no snapshots are taken`,
      );
    } else if (orphanClaim) {
      create = runSnapshot(schedule, due!);
      claimed = create.metadata.name;
      setReady('True', 'Scheduled', `took the run at ${toKubeTime(due!)}; ${nextText}`);
    } else if (isDue && late > timings.startingDeadlineMs) {
      const because =
        unfinished.length > 0
          ? `EtcdSnapshot ${unfinished[0].metadata.name} was still unfinished`
          : `nothing started it within ${duration(timings.startingDeadlineMs)} of its time (was the operator down, or the tick not delivered?)`;
      const message = `the run at ${toKubeTime(due!)} was skipped: ${because}; ${nextText}`;
      if (readyMessage(conditions) !== message)
        events.push({ type: 'Warning', reason: 'RunMissed', message });
      setReady('False', 'MissedRun', message);
    } else if (isDue && unfinished.length > 0) {
      setReady(
        'True',
        'PreviousRunActive',
        `the run at ${toKubeTime(due!)} waits for EtcdSnapshot ${unfinished[0].metadata.name} to finish ` +
          `(runs never overlap; it is skipped if that takes more than ${duration(timings.startingDeadlineMs)})`,
      );
    } else if (isDue) {
      create = runSnapshot(schedule, due!);
      claimed = create.metadata.name;
      lastScheduleTime = dueTime;
      events.push({
        type: 'Normal',
        reason: 'SnapshotScheduled',
        message: `created EtcdSnapshot ${claimed} for the run at ${toKubeTime(due!)}`,
      });
      setReady('True', 'Scheduled', `took the run at ${toKubeTime(due!)}; ${nextText}`);
    } else {
      const lastFailed = byRunDesc[0]?.status?.phase === 'Failed' ? byRunDesc[0] : undefined;
      const failure = lastFailed
        ? `; the last run, EtcdSnapshot ${lastFailed.metadata.name}, Failed (${
            findCondition(lastFailed.status?.conditions, 'Ready')?.reason ?? 'no reason'
          }): see kubectl describe etcdsnapshot ${lastFailed.metadata.name}`
        : '';
      setReady('True', 'Scheduled', `${every}: ${nextText}${failure}`);
    }
  }

  // Retention.
  const deletions: ScheduleDeletion[] = [];
  // complete[0], the newest verified snapshot, is never in this slice: keepLast is at least 1.
  for (const s of complete.slice(Math.max(1, keepLast))) {
    const etag = ownedObjectEtag(s);
    const fileSha256 = ownedFileSha256(s);
    deletions.push({
      name: s.metadata.name ?? '',
      uid: s.metadata.uid ?? '',
      s3Object: etag !== undefined,
      ...(etag !== undefined && { etag }),
      ...(fileSha256 !== undefined && { pvcFileSha256: fileSha256 }),
      why: `beyond retention.keepLast ${keepLast}`,
    });
  }
  const newestSuccess = complete[0] ? scheduledTimeOf(complete[0]) : undefined;
  const failedSinceSuccess = failed.filter(
    s => newestSuccess === undefined || scheduledTimeOf(s) > newestSuccess,
  );
  for (const s of failed) {
    const since = failedSinceSuccess.indexOf(s);
    if (since >= 0 && since < FAILED_KEPT) continue;
    deletions.push({
      name: s.metadata.name ?? '',
      uid: s.metadata.uid ?? '',
      s3Object: false,
      why:
        since < 0
          ? `Failed, and a later run (EtcdSnapshot ${complete[0]?.metadata.name}) succeeded`
          : `Failed, beyond the ${FAILED_KEPT} newest failures kept`,
    });
  }
  if (deletions.length === 0) conditions = setCondition(conditions, retentionApplied(keepLast), now);

  const active = [...unfinished.map(s => s.metadata.name ?? ''), ...(claimed ? [claimed] : [])].sort();
  const status: EtcdSnapshotScheduleStatus = { ...old };
  setOrDelete(status, 'lastScheduleTime', lastScheduleTime);
  setOrDelete(status, 'lastSuccessfulTime', lastSuccess);
  setOrDelete(status, 'nextScheduleTime', nextScheduleTime);
  if (active.length > 0) status.active = active;
  else delete status.active;
  if (schedule.metadata.generation !== undefined) status.observedGeneration = schedule.metadata.generation;
  if (conditions !== undefined) status.conditions = conditions;
  const statusChanged = canonical(status) !== canonical(old);

  const ready = findCondition(conditions, SCHEDULE_READY);
  const parts = [`EtcdSnapshotSchedule ${ns}/${name}: ${ready?.reason}: ${ready?.message}`];
  if (create) parts.push(`create EtcdSnapshot ${create.metadata.name}`);
  if (deletions.length > 0) parts.push(`delete ${deletions.map(d => d.name).join(', ')}`);
  return {
    ...(create && { create }),
    deletions,
    status: statusChanged ? status : old,
    statusChanged,
    events: statusChanged ? events : [],
    summary: parts.join('; '),
  };
}

export function retentionApplied(keepLast: number): RetentionInput {
  return {
    type: SCHEDULE_RETENTION,
    status: 'True',
    reason: 'Applied',
    message:
      `keeping the newest ${keepLast} Complete snapshot${keepLast === 1 ? '' : 's'}, and up to ${FAILED_KEPT} ` +
      'Failed ones since the last success',
  };
}

type RetentionInput = Omit<Condition, 'lastTransitionTime'>;

/** The Retention condition after the deletions a plan asked for: `problem` says what stopped them. */
export function planRetentionResult(
  schedule: EtcdSnapshotSchedule,
  problem: string | undefined,
  now: Date,
): { status: EtcdSnapshotScheduleStatus; statusChanged: boolean } {
  const old = schedule.status ?? {};
  const keepLast = schedule.spec.retention?.keepLast ?? DEFAULT_KEEP_LAST;
  const input: RetentionInput = problem
    ? { type: SCHEDULE_RETENTION, status: 'False', reason: 'DeleteFailed', message: problem }
    : retentionApplied(keepLast);
  const conditions = setCondition(old.conditions, input, now);
  if (conditions === old.conditions) return { status: old, statusChanged: false };
  return { status: { ...old, conditions }, statusChanged: true };
}

/** Complete and verified: read back from the store and checked (Verified True). */
export function isVerified(snapshot: EtcdSnapshot): boolean {
  return (
    snapshot.status?.phase === 'Complete' &&
    findCondition(snapshot.status.conditions, SNAPSHOT_VERIFIED)?.status === 'True'
  );
}

/**
 * The recorded ETag of the object a snapshot wrote, when status records one at the snapshot's own
 * key; undefined when there is nothing retention may delete.
 */
function ownedObjectEtag(snapshot: EtcdSnapshot): string | undefined {
  const s3 = snapshot.spec.destination.s3;
  const artifact = snapshot.status?.artifact;
  if (!s3 || !artifact?.etag || !snapshot.metadata.uid) return undefined;
  return artifact.uri === snapshotTarget(s3, ownerOf(snapshot)).uri ? artifact.etag : undefined;
}

/**
 * The recorded SHA-256 of the file a snapshot wrote on a PVC, when status records it at the
 * snapshot's own path; undefined when there is no file retention may remove.
 */
function ownedFileSha256(snapshot: EtcdSnapshot): string | undefined {
  const pvc = snapshot.spec.destination.pvc;
  const artifact = snapshot.status?.artifact;
  const uid = snapshot.metadata.uid;
  if (!pvc || !uid || !artifact?.checksum) return undefined;
  const path = snapshotFilePath(pvc.subPath, { name: snapshot.metadata.name ?? '', uid });
  if (artifact.uri !== pvcUri(pvc.claimName, path)) return undefined;
  return /^sha256:([0-9a-f]{64})$/.exec(artifact.checksum)?.[1];
}

function nameTooLong(name: string): string {
  return `the schedule's name is ${name.length} characters long; at most ${MAX_SCHEDULE_NAME} leave room for the -<yyyymmddhhmm> of its snapshots' names: recreate it with a shorter name`;
}

function unchanged(schedule: EtcdSnapshotSchedule, summary: string): SchedulePlan {
  return { deletions: [], status: schedule.status ?? {}, statusChanged: false, events: [], summary };
}

function readyMessage(conditions: readonly Condition[] | undefined): string | undefined {
  return findCondition(conditions, SCHEDULE_READY)?.message;
}

function newestFirst(a: EtcdSnapshot, b: EtcdSnapshot): number {
  return (
    scheduledTimeOf(b) - scheduledTimeOf(a) ||
    (timeOf(b.metadata.creationTimestamp) ?? 0) - (timeOf(a.metadata.creationTimestamp) ?? 0) ||
    (b.metadata.name ?? '').localeCompare(a.metadata.name ?? '')
  );
}

function latest(...times: (number | undefined)[]): number | undefined {
  const known = times.filter((t): t is number => t !== undefined);
  return known.length > 0 ? Math.max(...known) : undefined;
}

function setOrDelete(
  status: EtcdSnapshotScheduleStatus,
  key: 'lastScheduleTime' | 'lastSuccessfulTime' | 'nextScheduleTime',
  ms: number | undefined,
): void {
  if (ms === undefined) delete status[key];
  else status[key] = toKubeTime(new Date(ms));
}

function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds % 60 !== 0) return `${seconds} s`;
  const minutes = seconds / 60;
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

function timeOf(value: Date | string | undefined): number | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? undefined : ms;
}

/** JSON with sorted keys, to compare two statuses whatever order their fields came in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)),
        )
      : v,
  );
}
