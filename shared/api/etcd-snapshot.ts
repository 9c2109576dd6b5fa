// EtcdSnapshot (crds/etcdfn.io_etcdsnapshots.yaml): one backup; the spec never changes.
import type {
  Condition,
  EtcdfnObject,
  LocalObjectReference,
  ObjectList,
  SnapshotLocation,
} from './common.ts';

export interface EtcdSnapshotSpec {
  clusterRef: LocalObjectReference;
  destination: SnapshotLocation;
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
