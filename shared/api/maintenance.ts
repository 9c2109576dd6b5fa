// spec.maintenance: housekeeping the operator does on its own, within the limits given here.
import type { IntOrString } from './common.ts';

/**
 * A member is due for defragmentation when the space its database file holds but does not use
 * (dbSize - dbSizeInUse) is above both: the share of the file and the byte count.
 */
export interface DefragThreshold {
  /** A share of dbSize: "0.5" or "50%". Default "0.5". */
  unusedFraction?: string;
  /** Bytes, or a quantity such as 100Mi. Default 100Mi. */
  minUnusedBytes?: IntOrString;
}

export interface DefragPolicy {
  threshold?: DefragThreshold;
  /**
   * Cron (five fields, a macro, or "@every <h>h<m>m"): at each run every member is defragmented
   * once, followers first, the leader last, whatever its unused space.
   */
  schedule?: string;
  /** IANA time zone of the schedule. Default UTC. */
  timeZone?: string;
}

/** status.defragSchedule: the scheduled runs' memory (shared/plan/space/defrag-schedule.ts). */
export interface DefragScheduleStatus {
  /** The schedule (and time zone) nextRun was computed from: "<schedule> <timeZone>". */
  schedule?: string;
  /** RFC 3339: when the next run is due. */
  nextRun?: string;
  /** RFC 3339: the due time of the run under way or last run. */
  lastRun?: string;
  /** Members defragmented in lastRun, in order (never defragmented twice in one run). */
  defragmented?: string[];
  /** RFC 3339: when lastRun finished every member; absent while it runs. */
  completedAt?: string;
  /** Why a due run does not start (empty while it can). */
  waiting?: string;
}

export interface MaintenanceSpec {
  /** Defragment members whose unused space passes the threshold, one at a time, the leader last. */
  defrag?: DefragPolicy;
}
