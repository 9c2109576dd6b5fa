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
}

export interface MaintenanceSpec {
  /** Defragment members whose unused space passes the threshold, one at a time, the leader last. */
  defrag?: DefragPolicy;
}
