// Shapes shared by several etcdfn.io resources. They mirror the schemas in crds/ field for field.
import type { V1ListMeta, V1ObjectMeta } from '@kubernetes/client-node';

export type { Condition, ConditionStatus } from '../conditions.ts';

/** A resource.Quantity as it appears in JSON: "1Gi", "500m" or a plain number. */
export type IntOrString = number | string;

/** The name of an object in the same namespace. */
export interface LocalObjectReference {
  name: string;
}

/** An etcdfn.io object: spec and status are those of the kind. */
export interface EtcdfnObject<Kind extends string, Spec, Status> {
  apiVersion: string;
  kind: Kind;
  metadata: V1ObjectMeta;
  spec: Spec;
  status?: Status;
}

export interface ObjectList<T> {
  apiVersion: string;
  kind: string;
  metadata: V1ListMeta;
  items: T[];
}

export type StorageMedium = '' | 'Memory';

/** Where each member keeps its data; defaults in defaults.ts. */
export interface StorageSpec {
  size?: IntOrString;
  medium?: StorageMedium;
  storageClassName?: string;
}

/** core/v1 ResourceRequirements of the etcd container. */
export interface ResourceRequirements {
  limits?: Record<string, IntOrString>;
  requests?: Record<string, IntOrString>;
  claims?: { name: string; request?: string }[];
}

export interface AdditionalMetadata {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export type AutoCompactionMode = 'periodic' | 'revision';

/** The typed subset of etcd flags. */
export interface EtcdOptions {
  quotaBackendBytes?: number;
  autoCompactionMode?: AutoCompactionMode;
  autoCompactionRetention?: string;
  snapshotCount?: number;
}

export interface S3Location {
  endpoint: string;
  bucket: string;
  /** A prefix for a snapshot destination, the exact object key for a restore source. */
  key?: string;
  credentialsSecretRef: LocalObjectReference;
  region?: string;
  forcePathStyle?: boolean;
}

export interface PvcLocation {
  claimName: string;
  /** A directory for a snapshot destination, the snapshot file for a restore source. */
  subPath?: string;
}

/** Exactly one of s3 or pvc. */
export interface SnapshotLocation {
  s3?: S3Location;
  pvc?: PvcLocation;
}

/** Exactly one of s3, pvc or snapshotRef. */
export interface RestoreSource extends SnapshotLocation {
  /** A Complete EtcdSnapshot in the same namespace: its recorded object and checksum are used. */
  snapshotRef?: LocalObjectReference;
  /** Hex SHA-256 the snapshot file must have (optional; a snapshotRef brings its own). */
  sha256?: string;
}

export interface RestoreSpec {
  source: RestoreSource;
}
