// The vocabulary of a snapshot schedule's decision (plan.ts) and of the act layer that carries it out:
// conditions, limits, what is observed and the plan returned. No decision here, and no import of a
// decider.
import type { EtcdCluster } from '../../api/etcd-cluster.ts';
import type { EtcdSnapshot } from '../../api/etcd-snapshot.ts';
import type { EtcdSnapshotSchedule, EtcdSnapshotScheduleStatus } from '../../api/etcd-snapshot-schedule.ts';
import type { EventContent } from '../../builders/k8s-event.ts';

export const SCHEDULE_READY = 'Ready';

/** Present once the schedule has been suspended; its lastTransitionTime to False is when it resumed. */
export const SCHEDULE_SUSPENDED = 'Suspended';

export const SCHEDULE_RETENTION = 'Retention';

/** Failed snapshots kept since the last successful one. */
export const FAILED_KEPT = 3;

export const DEFAULT_KEEP_LAST = 7;

/** <schedule>-<yyyymmddhhmm> must stay a valid object name (253 characters). */
export const MAX_SCHEDULE_NAME = 253 - 13;

export interface ScheduleTimings {
  /** A run not started this long after its time is skipped and recorded as missed. */
  startingDeadlineMs: number;
}

export interface ScheduleState {
  now: Date;
  schedule: EtcdSnapshotSchedule;
  /** The EtcdCluster named by spec.clusterRef; undefined when it does not exist. */
  cluster?: EtcdCluster;
  /** The EtcdSnapshots whose ownerReferences name this schedule (by uid). */
  snapshots: readonly EtcdSnapshot[];
  timings: ScheduleTimings;
}

/** A snapshot retention removes: first its S3 object (when it has one), then the EtcdSnapshot. */
export interface ScheduleDeletion {
  name: string;
  uid: string;
  /** Delete this object from the store first (verified snapshots with a recorded URI and ETag). */
  s3Object: boolean;
  /** The ETag status recorded for the object; the store's must match. */
  etag?: string;
  /**
   * A verified snapshot on a PVC: remove its file first, by a Job that checks the owner file and
   * this SHA-256 (the one status records) before it deletes anything.
   */
  pvcFileSha256?: string;
  why: string;
}

export interface SchedulePlan {
  /** Create this EtcdSnapshot once the status (the claim) is written. */
  create?: EtcdSnapshot;
  deletions: ScheduleDeletion[];
  status: EtcdSnapshotScheduleStatus;
  statusChanged: boolean;
  /** Kubernetes Events about the schedule, recorded once the status is written. */
  events: EventContent[];
  summary: string;
}
