// The S3 adapter: streams bytes to one object with @aws-sdk/lib-storage (multipart above one part,
// so memory stays at queueSize × partSize whatever the snapshot's size), computing the sha256 and
// the size of exactly the bytes sent.
//
// Nothing is ever overwritten: the key is first checked with a HEAD (an object written by another
// EtcdSnapshot is refused; one this EtcdSnapshot left behind in an attempt that crashed is deleted,
// ETag-checked, and written again), and the upload itself is a conditional create
// (If-None-Match: *), which closes the race between the HEAD and the write on every store that
// honours it (AWS S3 documents it); on a store that ignores it (s3rver) the HEAD is the guard.
// Every expected outcome is a value: the caller decides what is final and what is retried.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { createS3Client, endpointVerdict, loadS3Sdk, loadS3Upload } from './client.ts';
import type { AllowedEndpoint } from './endpoint-policy.ts';
import { reduceS3Error, s3ErrorText } from './errors.ts';
import { OWNER_METADATA, type S3Credentials, type S3Target } from './location.ts';

export type { S3Credentials };

export interface UploadOptions {
  /** Endpoints allowed despite plain http or a loopback address (the operator's configuration). */
  allowList?: readonly AllowedEndpoint[];
  /** Aborts the upload (the multipart upload is aborted in the store too). */
  signal?: AbortSignal;
  /** Bytes per part; S3 needs at least 5 MiB for all parts but the last. */
  partSizeBytes?: number;
  /** Parts in flight at once. */
  queueSize?: number;
  /** Called once the first bytes have gone to the uploader (the run-snapshot crash point). */
  onStreaming?: () => Promise<void>;
}

export interface StoredObject {
  uri: string;
  sizeBytes: number;
  /** Hex sha256 of the bytes sent. */
  sha256: string;
  /** The store's ETag of the object written, quotes included, as HEAD returns it. */
  etag: string;
}

export type UploadResult =
  | ({ kind: 'uploaded' } & StoredObject)
  /** The store refused the request (4xx: no such bucket, bad credentials, access denied...): a person must act. */
  | { kind: 'refused'; code: string; status: number; message: string }
  /** The store could not be reached or failed (network, 5xx, throttling): worth another attempt. */
  | { kind: 'unavailable'; message: string }
  /** The source stream failed before its end (etcd went away mid-snapshot). */
  | { kind: 'source-failed'; message: string }
  | { kind: 'aborted'; message: string }
  /** The endpoint is refused by policy (plain http, link-local, loopback): nothing was sent. */
  | { kind: 'endpoint-refused'; reason: string; message: string }
  /** Another object (not written by this EtcdSnapshot) is at the key: it is left as it is. */
  | { kind: 'object-exists'; message: string };

const DEFAULT_PART_SIZE = 8 * 1024 * 1024;
const DEFAULT_QUEUE_SIZE = 2;

/**
 * Streams `body` to the target object, which must not exist yet (or be this EtcdSnapshot's own
 * leftover). Never throws for an expected failure.
 */
export async function uploadStream(
  target: S3Target,
  credentials: S3Credentials,
  body: Readable,
  options: UploadOptions = {},
): Promise<UploadResult> {
  // Over 80 lines: one multipart upload with its abort, error classification and cleanup together.
  const allowList = options.allowList ?? [];
  const verdict = await endpointVerdict(target.endpoint, allowList);
  if (!verdict.allowed) {
    body.destroy();
    return { kind: 'endpoint-refused', reason: verdict.reason, message: verdict.message };
  }
  const secrets = [credentials.accessKeyId, credentials.secretAccessKey];
  const client = await createS3Client(target, credentials, allowList);
  const { Upload } = await loadS3Upload();
  const hash = createHash('sha256');
  let size = 0;
  let sourceError: unknown;
  let announced = false;
  async function* measured(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of body) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
        hash.update(buffer);
        size += buffer.length;
        yield buffer;
        if (!announced) {
          announced = true;
          await options.onStreaming?.();
        }
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
    const cleared = await clearKey(client, target, secrets);
    if (cleared) return cleared;
    const upload = new Upload({
      client,
      params: {
        Bucket: target.bucket,
        Key: target.key,
        Body: Readable.from(measured()),
        ContentType: 'application/octet-stream',
        Metadata: { [OWNER_METADATA]: target.ownerUid },
        IfNoneMatch: '*',
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
    const reduced = reduceS3Error(err, secrets);
    if (reduced.status === 412 || reduced.code === 'PreconditionFailed') {
      return {
        kind: 'object-exists',
        message: existsMessage(target, 'was created while this snapshot was uploading'),
      };
    }
    return classifyS3Error(err, secrets);
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    body.destroy();
    client.destroy();
  }
}

/**
 * Makes sure nothing is at the key: an object another EtcdSnapshot (or anyone else) wrote is a
 * refusal; this EtcdSnapshot's own leftover from a crashed attempt is deleted, ETag-checked.
 * Undefined when the key is free.
 */
async function clearKey(
  client: S3Client,
  target: S3Target,
  secrets: readonly string[],
): Promise<UploadResult | undefined> {
  const head = await headObject(client, target, secrets);
  if (head.kind === 'absent') return undefined;
  if (head.kind !== 'present') return head.result;
  if (head.owner !== target.ownerUid) {
    return {
      kind: 'object-exists',
      message: existsMessage(target, 'holds an object this EtcdSnapshot did not write'),
    };
  }
  const { DeleteObjectCommand } = await loadS3Sdk();
  await client.send(
    new DeleteObjectCommand({
      Bucket: target.bucket,
      Key: target.key,
      ...(head.etag && { IfMatch: head.etag }),
    }),
  );
  return undefined;
}

export type HeadResult =
  | { kind: 'absent' }
  | { kind: 'present'; etag?: string; sizeBytes?: number; owner?: string }
  | { kind: 'failed'; result: Extract<UploadResult, { kind: 'refused' | 'unavailable' }> };

/** HEAD of the target's key: whether something is there, its ETag, size and owner metadata. */
export async function headObject(
  client: S3Client,
  target: S3Target,
  secrets: readonly string[],
): Promise<HeadResult> {
  const { HeadObjectCommand } = await loadS3Sdk();
  try {
    const head = await client.send(new HeadObjectCommand({ Bucket: target.bucket, Key: target.key }));
    return {
      kind: 'present',
      ...(head.ETag && { etag: head.ETag }),
      ...(head.ContentLength !== undefined && { sizeBytes: head.ContentLength }),
      ...(head.Metadata?.[OWNER_METADATA] && { owner: head.Metadata[OWNER_METADATA] }),
    };
  } catch (err) {
    const reduced = reduceS3Error(err, secrets);
    if (reduced.status === 404 && reduced.code !== 'NoSuchBucket') return { kind: 'absent' };
    const result = classifyS3Error(err, secrets);
    return { kind: 'failed', result: result as Extract<UploadResult, { kind: 'refused' | 'unavailable' }> };
  }
}

function existsMessage(target: S3Target, what: string): string {
  return `${target.uri} ${what}; it is left as it is (nothing is ever overwritten)`;
}

/** Asks the store for the object: it must hold every byte sent and name this EtcdSnapshot as owner. */
async function confirmStored(
  client: S3Client,
  target: S3Target,
  sent: Omit<StoredObject, 'etag'>,
): Promise<UploadResult> {
  const head = await headObject(client, target, []);
  if (head.kind === 'failed') return head.result;
  if (head.kind === 'absent')
    return { kind: 'unavailable', message: `${target.uri} is not there after the upload` };
  if (head.sizeBytes !== undefined && head.sizeBytes !== sent.sizeBytes) {
    return {
      kind: 'unavailable',
      message: `${target.uri} holds ${head.sizeBytes} bytes after ${sent.sizeBytes} were sent`,
    };
  }
  if (head.owner !== target.ownerUid) {
    return {
      kind: 'object-exists',
      message: existsMessage(target, 'was replaced by another writer during the upload'),
    };
  }
  return { kind: 'uploaded', ...sent, etag: head.etag ?? '' };
}

/** 4xx (but timeouts, throttling and conflicts) is the store's final answer; the rest is worth another try. */
export function classifyS3Error(err: unknown, secrets: readonly string[] = []): UploadResult {
  const reduced = reduceS3Error(err, secrets);
  const { status, code } = reduced;
  if (
    status !== undefined &&
    status >= 400 &&
    status < 500 &&
    status !== 408 &&
    status !== 409 &&
    status !== 429
  ) {
    return { kind: 'refused', code, status, message: reduced.message };
  }
  return { kind: 'unavailable', message: s3ErrorText(reduced) };
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
