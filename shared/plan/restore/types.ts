// The vocabulary of restores (at bootstrap, in place, and by quorum-loss recovery): what observe found for
// a restore's source and what it resolved to. No decision here, and no import of a decider.
import type { RestoreSpec } from '../../api/common.ts';
import type { EtcdSnapshot } from '../../api/etcd-snapshot.ts';

export type RestoreResolution =
  | { kind: 'ready'; restore: RestoreSpec; sourceName: string }
  | { kind: 'blocked'; reason: string; message: string };

/** What observe found for the restore's source (only while the cluster has not formed). */
export interface RestoreFacts {
  /** The EtcdSnapshot source.snapshotRef names; null = not found. */
  snapshot?: EtcdSnapshot | null;
  /** The credentials Secret of the S3 source (after resolving a snapshotRef); null = not found. */
  secretKeys?: string[] | null;
  /** Whether the PVC of a PVC source exists (after resolving a snapshotRef); undefined = not asked. */
  claimFound?: boolean;
}
