// The EtcdSnapshot of one scheduled run: its name (fixed by the run's time, so every invocation that
// decides on the run creates the same object), its labels and owner, and how to find the schedule
// and the run again from a snapshot.
import type { EtcdSnapshot } from '../../api/etcd-snapshot.ts';
import type { EtcdSnapshotSchedule } from '../../api/etcd-snapshot-schedule.ts';
import { API_VERSION, ETCD_SNAPSHOT_SCHEDULE } from '../../api/group.ts';
import { toKubeTime } from '../../conditions.ts';
import { CLUSTER_LABEL, MANAGED_BY } from '../../names.ts';
import { controllerRef } from '../../builders/owner.ts';

export const SCHEDULE_LABEL = 'etcdfn.io/schedule';
/** The run (RFC 3339 time) a scheduled snapshot was made for. */
export const SCHEDULED_TIME_ANNOTATION = 'etcdfn.io/scheduled-time';
const MAX_LABEL_VALUE = 63;

/** The name of the snapshot for the run at `time`: <schedule>-<yyyymmddhhmm> in UTC. */
export function runSnapshotName(schedule: string, time: Date): string {
  const stamp = time.toISOString().slice(0, 16).replace(/[-T:]/g, '');
  return `${schedule}-${stamp}`;
}

/** The run a snapshot was made for: its annotation, else its creation time. */
export function scheduledTimeOf(snapshot: EtcdSnapshot): number {
  const annotated = timeOf(snapshot.metadata.annotations?.[SCHEDULED_TIME_ANNOTATION]);
  return annotated ?? timeOf(snapshot.metadata.creationTimestamp) ?? 0;
}

/** The EtcdSnapshot of the run at `time`: owned by the schedule, labelled, spec from the schedule. */
export function runSnapshot(schedule: EtcdSnapshotSchedule, time: Date): EtcdSnapshot {
  const name = schedule.metadata.name ?? '';
  const labels: Record<string, string> = {
    'app.kubernetes.io/managed-by': MANAGED_BY,
    [CLUSTER_LABEL]: schedule.spec.clusterRef.name,
  };
  if (name.length <= MAX_LABEL_VALUE) labels[SCHEDULE_LABEL] = name;
  return {
    apiVersion: API_VERSION,
    kind: 'EtcdSnapshot',
    metadata: {
      name: runSnapshotName(name, time),
      namespace: schedule.metadata.namespace ?? '',
      labels,
      annotations: { [SCHEDULED_TIME_ANNOTATION]: toKubeTime(time) },
      ownerReferences: [
        controllerRef({
          apiVersion: API_VERSION,
          kind: ETCD_SNAPSHOT_SCHEDULE.kind,
          metadata: schedule.metadata,
        }),
      ],
    },
    spec: {
      clusterRef: { name: schedule.spec.clusterRef.name },
      destination: structuredClone(schedule.spec.destination),
    },
  };
}

/** Whether `snapshot` is owned by the schedule with this uid. */
export function isOwnedBy(snapshot: EtcdSnapshot, scheduleUid: string | undefined): boolean {
  return (snapshot.metadata.ownerReferences ?? []).some(
    o => o.kind === ETCD_SNAPSHOT_SCHEDULE.kind && o.uid === scheduleUid && scheduleUid !== undefined,
  );
}

/** The name of the schedule that owns `snapshot`, if one does. */
export function owningSchedule(snapshot: EtcdSnapshot): string | undefined {
  return snapshot.metadata.ownerReferences?.find(
    o => o.kind === ETCD_SNAPSHOT_SCHEDULE.kind && o.apiVersion === API_VERSION,
  )?.name;
}

function timeOf(value: Date | string | undefined): number | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? undefined : ms;
}
