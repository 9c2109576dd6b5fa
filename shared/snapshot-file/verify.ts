// Reading a stored snapshot back before it may be called Complete: the size and SHA-256 are
// recomputed from the bytes the store returns (not from the upload stream), and etcd's own
// integrity hash is checked. A snapshot from etcd's Maintenance.Snapshot API is the bbolt database
// (a whole number of 512-byte sectors) followed by 32 bytes: the SHA-256 of everything before them.
// `etcdutl snapshot restore` refuses a file whose trailer does not match; this is the same check.
import { createHash, type Hash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { BboltScan, type ScanResult } from './bbolt-scan.ts';
import { createS3Client, endpointVerdict, loadS3Sdk } from '../s3/client.ts';
import type { AllowedEndpoint } from '../s3/endpoint-policy.ts';
import { classifyS3Error, type UploadResult } from '../s3/upload.ts';
import type { S3Credentials, S3Target } from '../s3/location.ts';

export const TRAILER_BYTES = 32;
const SECTOR = 512;

/** What reading a snapshot's bytes found. */
export interface SnapshotDigestResult {
  sizeBytes: number;
  /** Hex SHA-256 of every byte. */
  sha256: string;
  /**
   * etcd's integrity hash: `ok` when the last 32 bytes are the SHA-256 of the rest, `mismatch` when
   * they are not, `absent` when the size says the file has no trailer (not a Maintenance snapshot).
   */
  integrity: 'ok' | 'mismatch' | 'absent';
}

/**
 * Streaming digest of a snapshot: hashes every byte, and separately every byte but the last 32,
 * which it keeps to compare with at the end. Memory: 32 bytes beyond the chunk in hand.
 */
export class SnapshotDigest {
  private readonly all: Hash = createHash('sha256');
  private readonly body: Hash = createHash('sha256');
  private tail = Buffer.alloc(0);
  private size = 0;

  update(chunk: Buffer): void {
    this.all.update(chunk);
    this.size += chunk.length;
    const joined = this.tail.length === 0 ? chunk : Buffer.concat([this.tail, chunk]);
    const keep = Math.min(TRAILER_BYTES, joined.length);
    const release = joined.length - keep;
    if (release > 0) this.body.update(joined.subarray(0, release));
    this.tail = Buffer.from(joined.subarray(release));
  }

  digest(): SnapshotDigestResult {
    const sha256 = this.all.digest('hex');
    const hasTrailer = this.size % SECTOR === TRAILER_BYTES && this.size > TRAILER_BYTES;
    if (!hasTrailer) return { sizeBytes: this.size, sha256, integrity: 'absent' };
    const expected = this.body.digest();
    return { sizeBytes: this.size, sha256, integrity: expected.equals(this.tail) ? 'ok' : 'mismatch' };
  }
}

export type ReadBackResult =
  /** `contents`: what etcdutl snapshot status would report, from the same bytes. */
  | ({ kind: 'read'; etag?: string; contents: ScanResult } & SnapshotDigestResult)
  /** The object is gone, or another object replaced it (its ETag changed). */
  | { kind: 'changed'; message: string }
  | Extract<UploadResult, { kind: 'refused' | 'unavailable' | 'endpoint-refused' }>;

/** Reads the object back and digests it; `etag` is what the upload stored (a different one = changed). */
export async function readBack(
  target: S3Target,
  credentials: S3Credentials,
  etag: string,
  options: { allowList?: readonly AllowedEndpoint[]; signal?: AbortSignal } = {},
): Promise<ReadBackResult> {
  const allowList = options.allowList ?? [];
  const verdict = await endpointVerdict(target.endpoint, allowList);
  if (!verdict.allowed) return { kind: 'endpoint-refused', reason: verdict.reason, message: verdict.message };
  const secrets = [credentials.accessKeyId, credentials.secretAccessKey];
  const client = await createS3Client(target, credentials, allowList);
  const { GetObjectCommand } = await loadS3Sdk();
  try {
    const got = await client.send(
      new GetObjectCommand({ Bucket: target.bucket, Key: target.key, ...(etag && { IfMatch: etag }) }),
      options.signal ? { abortSignal: options.signal } : {},
    );
    if (etag && got.ETag && got.ETag !== etag) {
      (got.Body as Readable | undefined)?.destroy();
      return {
        kind: 'changed',
        message: `${target.uri} was replaced after the upload (ETag ${got.ETag}, not ${etag})`,
      };
    }
    const digest = new SnapshotDigest();
    const scan = new BboltScan();
    for await (const chunk of got.Body as Readable) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      digest.update(bytes);
      scan.update(bytes);
    }
    return {
      kind: 'read',
      ...(got.ETag && { etag: got.ETag }),
      ...digest.digest(),
      contents: scan.result(),
    };
  } catch (err) {
    const classified = classifyS3Error(err, secrets);
    if (classified.kind === 'refused' && (classified.status === 404 || classified.status === 412)) {
      return {
        kind: 'changed',
        message: `${target.uri} is gone or was replaced after the upload (${classified.code})`,
      };
    }
    return classified as Extract<ReadBackResult, { kind: 'refused' | 'unavailable' }>;
  } finally {
    client.destroy();
  }
}
