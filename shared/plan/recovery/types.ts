// The vocabulary of quorum-loss recovery, shared by its deciders and by reconcile-cluster's observed state
// (shared/plan/cluster/types.ts): no decision here, and no import of a decider.
import type { RestoreSpec } from '../../api/common.ts';
import type { EtcdSnapshot } from '../../api/etcd-snapshot.ts';

/** The snapshot a recovery would restore, as cluster-observe-recovery resolved it. */
export interface RecoveryCandidate {
  name: string;
  revision?: number;
  /** RFC 3339 completion time. */
  takenAt?: string;
}

export type RecoverySnapshot =
  /** No verified snapshot of this cluster; `considered`: EtcdSnapshots of the cluster looked at. */
  | { kind: 'none'; considered: number }
  | { kind: 'blocked'; snapshot: RecoveryCandidate; reason: string; message: string }
  | { kind: 'ready'; snapshot: RecoveryCandidate; restore: RestoreSpec; sourceName: string };

/** What observe found: the cluster's snapshots, and for the newest verified one its Secret and claim. */
export interface RecoveryFacts {
  snapshots: EtcdSnapshot[];
  /** The S3 credentials Secret's keys of the chosen snapshot; null = not found; undefined = not asked. */
  secretKeys?: string[] | null;
  /** Whether the chosen snapshot's claim exists; undefined = not asked. */
  claimFound?: boolean;
}
