// An EtcdSnapshotSchedule's own timing: one Knative PingSource per schedule, next to it in its
// namespace, owned by it (deleted with it by the garbage collector), firing on the schedule's cron in
// its time zone. Its event names the schedule, and run-snapshot (which takes every PingSource's
// event) reconciles that schedule at its minute, so a schedule never waits for the resync tick and
// an idle system with no schedules receives only the tick. A suspended schedule has no PingSource.
// In Knative mode Knative's shared ping adapter sends the events (to the Broker, at `sink`); in
// standalone mode the event bridge finds these PingSources in the API server and ticks them itself.
// Pure: run-snapshot's I/O (shared/reconcile/schedule-ping.ts) reads it and has the change applied
// by the generic apply (shared/reconcile/owned-apply.ts).
import type { EtcdSnapshotSchedule } from '../../api/etcd-snapshot-schedule.ts';
import { API_VERSION, ETCD_SNAPSHOT_SCHEDULE } from '../../api/group.ts';
import type { KubeObject } from '../../k8s/objects.ts';
import { CLUSTER_LABEL, MANAGED_BY } from '../../names.ts';
import {
  boundedName,
  ownedBy,
  sameSink,
  sinkSpec,
  type PingSink,
  PING_SOURCE_API_VERSION,
  PING_SOURCE_KIND,
  SCHEDULE_PING_LABEL,
  type PingSource,
} from '../../builders/ping-source.ts';
import { SCHEDULE_LABEL } from './run.ts';
import { controllerRef } from '../../builders/owner.ts';
import type { PingSourceDrift } from '../owned/ping-sources.ts';

export { PING_SOURCE_API_VERSION, PING_SOURCE_KIND, SCHEDULE_PING_LABEL, type PingSource };

const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';

/** What a schedule's PingSource event carries: the schedule it is for. */
export interface SchedulePing {
  etcdSnapshotSchedule: { namespace: string; name: string };
}

/** `etcdfn-schedule-<name>`, shortened with a hash of the name when that is too long for a label. */
export const pingSourceName = (scheduleName: string): string => boundedName('etcdfn-schedule-', scheduleName);

const EVERY = /^@every (?:(\d+)h)?(?:(\d+)m)?$/;
const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * The PingSource's cron and time zone for spec.schedule. A cron or a macro (@daily, ...) is copied
 * with the time zone. `@every <d>` counts from the Unix epoch in UTC (shared/plan/schedule/plan.ts),
 * which a PingSource's own @every (counted from its adapter's start) does not: it becomes the
 * coarsest UTC cron that fires at every such time (@every 6h: minute 0 of every sixth hour,
 * @every 90m: every 30 minutes); the plan then decides which firings are runs.
 */
export function pingSchedule(schedule: string, timeZone?: string): { schedule: string; timezone?: string } {
  const every = EVERY.exec(schedule.trim());
  if (!every) return { schedule, ...(timeZone && { timezone: timeZone }) };
  const minutes = Number(every[1] ?? 0) * 60 + Number(every[2] ?? 0);
  // Runs are the multiples of `minutes` since the epoch; within a day (1440 minutes, a whole number
  // of g) they all fall on multiples of g.
  const g = gcd(Math.max(minutes, 1), 1440);
  if (g % 60 === 0) return { schedule: g === 1440 ? '0 0 * * *' : `0 */${g / 60} * * *` };
  const step = gcd(g, 60);
  return { schedule: step === 1 ? '* * * * *' : `*/${step} * * * *` };
}

/** The schedule a tick's data names, when the tick came from a schedule's PingSource. */
export function scheduleOfPing(data: unknown): { namespace: string; name: string } | undefined {
  let value = data;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  const ref = (value as Partial<SchedulePing> | null)?.etcdSnapshotSchedule;
  if (!ref || typeof ref.namespace !== 'string' || typeof ref.name !== 'string') return undefined;
  if (!ref.namespace || !ref.name) return undefined;
  return { namespace: ref.namespace, name: ref.name };
}

/** The PingSource the schedule should have; undefined while it is suspended (no runs to time). */
export function desiredPingSource(
  schedule: EtcdSnapshotSchedule & KubeObject,
  sink: PingSink,
): PingSource | undefined {
  if (schedule.spec.suspend) return undefined;
  const namespace = schedule.metadata.namespace ?? '';
  const name = schedule.metadata.name ?? '';
  const data: SchedulePing = { etcdSnapshotSchedule: { namespace, name } };
  return {
    apiVersion: PING_SOURCE_API_VERSION,
    kind: PING_SOURCE_KIND,
    metadata: {
      name: pingSourceName(name),
      namespace,
      labels: {
        [CLUSTER_LABEL]: schedule.spec.clusterRef.name,
        [SCHEDULE_LABEL]: name.slice(0, 63),
        [SCHEDULE_PING_LABEL]: 'true',
        [MANAGED_BY_LABEL]: MANAGED_BY,
      },
      ownerReferences: [
        controllerRef({
          apiVersion: API_VERSION,
          kind: ETCD_SNAPSHOT_SCHEDULE.kind,
          metadata: schedule.metadata,
        }),
      ],
    },
    spec: {
      ...pingSchedule(schedule.spec.schedule, schedule.spec.timeZone),
      contentType: 'application/json',
      data: JSON.stringify(data),
      sink: sinkSpec(sink),
    },
  };
}

/** The schedule PingSource's drift, in the shape of every owned PingSource (plan/owned/ping-sources.ts). */
export type PingSourceStep = PingSourceDrift;

/** What to do to bring the existing PingSource (if any) to the desired one. */
export function pingSourceStep(
  schedule: EtcdSnapshotSchedule & KubeObject,
  desired: PingSource | undefined,
  existing: PingSource | undefined,
): PingSourceStep {
  const uid = schedule.metadata.uid;
  if (existing && !ownedBy(existing, uid)) {
    return {
      kind: 'conflict',
      message: `PingSource ${existing.metadata.namespace}/${existing.metadata.name} exists and does not belong to EtcdSnapshotSchedule ${schedule.metadata.name}: left alone, so runs wait for the resync tick`,
    };
  }
  if (!desired) {
    return existing
      ? {
          kind: 'delete',
          name: existing.metadata.name ?? '',
          ...(existing.metadata.uid && { uid: existing.metadata.uid }),
        }
      : { kind: 'none' };
  }
  if (!existing) return { kind: 'create', object: desired };
  // Field by field: the API server (Knative's defaulting) may add fields and order keys its own way.
  const have = existing.spec as Partial<PingSource['spec']> | undefined;
  const want = desired.spec;
  const same =
    have?.schedule === want.schedule &&
    (have.timezone ?? '') === (want.timezone ?? '') &&
    have.contentType === want.contentType &&
    have.data === want.data &&
    sameSink(have.sink, want.sink) &&
    Object.entries(desired.metadata.labels ?? {}).every(([k, v]) => existing.metadata.labels?.[k] === v);
  if (same) return { kind: 'none' };
  return {
    kind: 'update',
    object: {
      ...existing,
      metadata: { ...existing.metadata, labels: { ...existing.metadata.labels, ...desired.metadata.labels } },
      spec: desired.spec,
    },
  };
}
