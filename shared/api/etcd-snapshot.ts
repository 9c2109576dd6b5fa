// EtcdSnapshot (crds/etcdfn.io_etcdsnapshots.yaml): one backup; the spec never changes.
import type {
  Condition,
  EtcdfnObject,
  LocalObjectReference,
  ObjectList,
  SnapshotLocation,
} from './common.ts';

/** What happens to the stored object when the EtcdSnapshot is deleted. */
export type SnapshotDeletionPolicy = 'Retain' | 'Delete';

export interface EtcdSnapshotSpec {
  clusterRef: LocalObjectReference;
  destination: SnapshotLocation;
  /** Retain (the default) keeps the object; Delete deletes it (only the object this snapshot wrote). */
  deletionPolicy?: SnapshotDeletionPolicy;
}

export type SnapshotPhase = 'Pending' | 'Started' | 'Complete' | 'Failed';

export interface SnapshotArtifact {
  /** s3://bucket/key or pvc://claim/path. */
  uri: string;
  sizeBytes?: number;
  /** sha256:<64 hex>. */
  checksum?: string;
  /** etcd revision the snapshot was taken at. */
  revision?: number;
  /** The store's ETag of the object this snapshot wrote (retention and deletion check it). */
  etag?: string;
}

export interface EtcdSnapshotStatus {
  phase?: SnapshotPhase;
  /** RFC 3339 times. */
  startTime?: string;
  completionTime?: string;
  artifact?: SnapshotArtifact;
  conditions?: Condition[];
}

export type EtcdSnapshot = EtcdfnObject<'EtcdSnapshot', EtcdSnapshotSpec, EtcdSnapshotStatus>;
export type EtcdSnapshotList = ObjectList<EtcdSnapshot>;
