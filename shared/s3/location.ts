// Where a snapshot goes in S3, from an EtcdSnapshot's destination. Pure: the planner and the upload
// adapter share it, so the key recorded in status is exactly the key written.
import type { S3Location } from '../api/common.ts';

export const DEFAULT_REGION = 'us-east-1';
/** The keys the credentials Secret must hold (non-empty). */
export const ACCESS_KEY_ID = 'AWS_ACCESS_KEY_ID';
export const SECRET_ACCESS_KEY = 'AWS_SECRET_ACCESS_KEY';
export const CREDENTIAL_KEYS = [ACCESS_KEY_ID, SECRET_ACCESS_KEY] as const;

/** An access key pair for the store. */
export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** The key pair in a credentials Secret's values; undefined when either key is missing or empty. */
export function credentialsIn(values: Record<string, string>): S3Credentials | undefined {
  const accessKeyId = values[ACCESS_KEY_ID];
  const secretAccessKey = values[SECRET_ACCESS_KEY];
  return accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined;
}

/** One object in an S3-compatible store, and how to reach it. */
export interface S3Target {
  endpoint: string;
  bucket: string;
  key: string;
  region: string;
  forcePathStyle: boolean;
  /** Secret (same namespace) with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. */
  secretName: string;
  /** s3://<bucket>/<key>, as status.artifact.uri says it. */
  uri: string;
  /** UID of the EtcdSnapshot that owns the object (stored as object metadata). */
  ownerUid: string;
}

/** Who a snapshot object belongs to: the EtcdSnapshot that writes it. */
export interface SnapshotOwner {
  namespace: string;
  cluster: string;
  name: string;
  uid: string;
}

/** The object metadata (x-amz-meta-etcdfn-snapshot-uid) naming the EtcdSnapshot that wrote an object. */
export const OWNER_METADATA = 'etcdfn-snapshot-uid';

/**
 * The object a snapshot is written to: `<prefix><namespace>/<cluster>/<name>-<uid8>.db`, uid8 being
 * the first 8 characters of the EtcdSnapshot's UID. The prefix is used as given (write `backups/`
 * for a folder). Namespace and cluster keep tenants sharing a bucket apart; the UID keeps a
 * snapshot deleted and re-created under its name from reaching the old one's object. Deterministic,
 * so every attempt of one snapshot aims at the same key and the key can be recorded before upload.
 */
export function snapshotObjectKey(prefix: string | undefined, owner: SnapshotOwner): string {
  return `${prefix ?? ''}${owner.namespace}/${owner.cluster}/${owner.name}-${owner.uid.slice(0, 8)}.db`;
}

export function s3Uri(bucket: string, key: string): string {
  return `s3://${bucket}/${key}`;
}

/**
 * Path-style URLs (endpoint/bucket/key) unless the spec says otherwise: AWS itself serves both, but
 * MinIO, Ceph RGW and most self-hosted stores only serve path style. Virtual-hosted style is the
 * default only for AWS's own endpoints.
 */
export function usePathStyle(location: Pick<S3Location, 'endpoint' | 'forcePathStyle'>): boolean {
  if (location.forcePathStyle !== undefined) return location.forcePathStyle;
  return !isAwsEndpoint(location.endpoint);
}

export function isAwsEndpoint(endpoint: string): boolean {
  try {
    const host = new URL(endpoint).hostname;
    return host === 'amazonaws.com' || host.endsWith('.amazonaws.com');
  } catch {
    return false;
  }
}

export function snapshotTarget(location: S3Location, owner: SnapshotOwner): S3Target {
  const key = snapshotObjectKey(location.key, owner);
  return {
    endpoint: location.endpoint,
    bucket: location.bucket,
    key,
    region: location.region || DEFAULT_REGION,
    forcePathStyle: usePathStyle(location),
    secretName: location.credentialsSecretRef.name,
    uri: s3Uri(location.bucket, key),
    ownerUid: owner.uid,
  };
}

/** The owner of an EtcdSnapshot's object, from the EtcdSnapshot. */
export function ownerOf(snapshot: {
  metadata: { namespace?: string; name?: string; uid?: string };
  spec: { clusterRef: { name: string } };
}): SnapshotOwner {
  return {
    namespace: snapshot.metadata.namespace ?? '',
    cluster: snapshot.spec.clusterRef.name,
    name: snapshot.metadata.name ?? '',
    uid: snapshot.metadata.uid ?? '',
  };
}
