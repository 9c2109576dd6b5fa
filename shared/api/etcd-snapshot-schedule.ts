// EtcdSnapshotSchedule (crds/etcdfn.io_etcdsnapshotschedules.yaml): snapshots on a cron schedule.
import type {
  Condition,
  EtcdfnObject,
  LocalObjectReference,
  ObjectList,
  SnapshotLocation,
} from './common.ts';

export interface SnapshotRetention {
  keepLast?: number;
}

/** Fields with a schema default are optional here; see defaults.ts for their values. */
export interface EtcdSnapshotScheduleSpec {
  clusterRef: LocalObjectReference;
  /** Five cron fields, a macro such as @daily, or "@every 6h". */
  schedule: string;
  /** IANA name; UTC when unset. */
  timeZone?: string;
  suspend?: boolean;
  retention?: SnapshotRetention;
  destination: SnapshotLocation;
}

export interface EtcdSnapshotScheduleStatus {
  /** RFC 3339 times. */
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
  nextScheduleTime?: string;
  /** Names of unfinished EtcdSnapshots made by the schedule. */
  active?: string[];
  observedGeneration?: number;
  conditions?: Condition[];
}

export type EtcdSnapshotSchedule = EtcdfnObject<
  'EtcdSnapshotSchedule',
  EtcdSnapshotScheduleSpec,
  EtcdSnapshotScheduleStatus
>;
export type EtcdSnapshotScheduleList = ObjectList<EtcdSnapshotSchedule>;
