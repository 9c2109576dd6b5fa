// The S3 adapter: streams bytes to one object with @aws-sdk/lib-storage (multipart above one part,
// so memory stays at queueSize × partSize whatever the snapshot's size), computing the sha256 and
// the size of exactly the bytes sent, then asks the store for the object's size to confirm it holds
// them all. Every expected outcome is a value: the caller decides what is final and what is retried.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
// The SDK is imported when an object is first written or deleted: it is the heaviest module the
// functions have, and most events never touch S3.
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Credentials, S3Target } from './location.ts';

export type { S3Credentials };

export interface UploadOptions {
  /** Aborts the upload (the multipart upload is aborted in the store too). */
  signal?: AbortSignal;
  /** Bytes per part; S3 needs at least 5 MiB for all parts but the last. */
  partSizeBytes?: number;
  /** Parts in flight at once. */
  queueSize?: number;
}

export interface StoredObject {
  uri: string;
  sizeBytes: number;
  /** Hex sha256 of the bytes sent. */
  sha256: string;
}

export type UploadResult =
  | ({ kind: 'uploaded' } & StoredObject)
  /** The store refused the request (4xx: no such bucket, bad credentials, access denied...): a person must act. */
  | { kind: 'refused'; code: string; status: number; message: string }
  /** The store could not be reached or failed (network, 5xx, throttling): worth another attempt. */
  | { kind: 'unavailable'; message: string }
  /** The source stream failed before its end (etcd went away mid-snapshot). */
  | { kind: 'source-failed'; message: string }
  | { kind: 'aborted'; message: string };

const DEFAULT_PART_SIZE = 8 * 1024 * 1024;
const DEFAULT_QUEUE_SIZE = 2;

export async function createS3Client(target: S3Target, credentials: S3Credentials): Promise<S3Client> {
  const { S3Client } = await import('@aws-sdk/client-s3');
  return new S3Client({
    endpoint: target.endpoint,
    region: target.region,
    forcePathStyle: target.forcePathStyle,
    credentials,
    // Checksums only where S3 requires them: several S3-compatible stores (older MinIO, Ceph RGW,
    // s3rver) refuse the aws-chunked encoding the SDK uses for its default CRC32 checksums.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // A failed attempt is retried by the caller with its state in status, not hidden in here.
    maxAttempts: 2,
  });
}

/** Streams `body` to the target object, overwriting it. Never throws for an expected failure. */
export async function uploadStream(
  target: S3Target,
  credentials: S3Credentials,
  body: Readable,
  options: UploadOptions = {},
): Promise<UploadResult> {
  const { Upload } = await import('@aws-sdk/lib-storage');
  const client = await createS3Client(target, credentials);
  const hash = createHash('sha256');
  let size = 0;
  let sourceError: unknown;
  async function* measured(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of body) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
        hash.update(buffer);
        size += buffer.length;
        yield buffer;
      }
    } catch (err) {
      sourceError = err;
      throw err;
    }
  }
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const upload = new Upload({
      client,
      params: {
        Bucket: target.bucket,
        Key: target.key,
        Body: Readable.from(measured()),
        ContentType: 'application/octet-stream',
      },
      partSize: options.partSizeBytes ?? DEFAULT_PART_SIZE,
      queueSize: options.queueSize ?? DEFAULT_QUEUE_SIZE,
      leavePartsOnError: false,
      abortController: controller,
    });
    await upload.done();
    return await confirmStored(client, target, {
      uri: target.uri,
      sizeBytes: size,
      sha256: hash.digest('hex'),
    });
  } catch (err) {
    if (sourceError !== undefined) return { kind: 'source-failed', message: messageOf(sourceError) };
    if (controller.signal.aborted) {
      return {
        kind: 'aborted',
        message: `upload to ${target.uri} aborted: ${messageOf(controller.signal.reason)}`,
      };
    }
    return classifyS3Error(err);
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    body.destroy();
    client.destroy();
  }
}

/** Asks the store for the object's size: a store that lost bytes on the way is not a snapshot. */
async function confirmStored(client: S3Client, target: S3Target, sent: StoredObject): Promise<UploadResult> {
  const { HeadObjectCommand } = await import('@aws-sdk/client-s3');
  const head = await client.send(new HeadObjectCommand({ Bucket: target.bucket, Key: target.key }));
  if (head.ContentLength !== undefined && head.ContentLength !== sent.sizeBytes) {
    return {
      kind: 'unavailable',
      message: `${target.uri} holds ${head.ContentLength} bytes after ${sent.sizeBytes} were sent`,
    };
  }
  return { kind: 'uploaded', ...sent };
}

interface AwsError {
  name?: string;
  Code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

/** 4xx (but timeouts and throttling) is the store's final answer; the rest is worth another try. */
export function classifyS3Error(err: unknown): UploadResult {
  const e = (err ?? {}) as AwsError;
  const status = e.$metadata?.httpStatusCode;
  const code = e.Code ?? e.name ?? 'Error';
  const message = messageOf(err);
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
    return { kind: 'refused', code, status, message };
  }
  return {
    kind: 'unavailable',
    message: status ? `${code} (HTTP ${status}): ${message}` : `${code}: ${message}`,
  };
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
