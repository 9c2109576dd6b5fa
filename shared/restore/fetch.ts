// The restore's fetch step (run by the agent in the member Pod's first init container): brings the
// snapshot into the data volume, streaming (flat memory whatever its size), and checks everything
// that can be checked before etcd's restore writes a byte: room on the volume (2x the snapshot),
// the SHA-256 (recorded by an EtcdSnapshot, or given by the user), the etcd release that wrote it.
// Runs once: when the marker of a complete restore is present it changes nothing.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, rename, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { createS3Client, endpointVerdict } from '../s3/client.ts';
import { reduceS3Error, s3ErrorText } from '../s3/errors.ts';
import { ALLOWED_ENDPOINTS_ENV, parseAllowList } from '../s3/endpoint-policy.ts';
import { DEFAULT_REGION, s3Uri, usePathStyle, type S3Credentials } from '../s3/location.ts';
import { emptySnapshot } from './empty-snapshot.ts';
import { containedPath } from '../snapshot-file/contained.ts';
import { RestoreFailure } from './layout.ts';
import { SnapshotVersionScanner, minorOf } from './snapshot-version.ts';

export interface FetchPaths {
  /** The member's data directory (host path of /var/lib/etcd). */
  dataDir: string;
  workDir: string;
  snapshotFile: string;
  skipFile: string;
  marker: string;
}

export type FetchSource =
  | {
      kind: 's3';
      endpoint: string;
      bucket: string;
      key: string;
      region?: string;
      forcePathStyle?: boolean;
      /** undefined: the Secret or its keys were missing (the env vars came from an optional secretKeyRef) */
      credentials?: S3Credentials;
      secretName: string;
    }
  /** A file on a mounted claim: `path` must resolve inside `mount` (shared/snapshot-file/contained.ts). */
  | { kind: 'file'; mount: string; path: string; display: string };

export interface FetchRequest {
  paths: FetchPaths;
  source: FetchSource;
  /** hex sha256 the bytes must have */
  sha256?: string;
  /** the member's etcd release, e.g. 3.5.16 */
  etcdVersion: string;
  /** free bytes on the data volume; statfs by default (tests pass their own) */
  freeBytes?: (dir: string) => Promise<number>;
}

export type FetchResult =
  | { kind: 'already-restored' }
  | { kind: 'fetched'; sizeBytes: number; sha256: string; snapshotMinor: string };

export async function fetchSnapshot(req: FetchRequest): Promise<FetchResult> {
  // Over 80 lines: the fetch's steps (marker, download, checksum, version) in the order a crash must
  // resume them.
  const { paths } = req;
  if (existsSync(paths.marker)) {
    // Live data: never restored over. The restore step still runs (it has no shell to skip with),
    // so it gets an empty snapshot to restore into the work directory, which the commit drops.
    await rm(paths.workDir, { recursive: true, force: true });
    await mkdir(paths.workDir, { recursive: true });
    await writeFile(paths.snapshotFile, emptySnapshot());
    await writeFile(paths.skipFile, 'the data directory was restored before; nothing is restored again\n');
    return { kind: 'already-restored' };
  }
  // No marker: no etcd ever ran here (it starts only after the commit), so a half-done earlier
  // attempt is thrown away whole.
  await rm(paths.workDir, { recursive: true, force: true });
  await rm(join(paths.dataDir, 'member'), { recursive: true, force: true });
  await mkdir(paths.workDir, { recursive: true });
  const opened = await openSource(req.source);
  const free = await (req.freeBytes ?? freeBytesOf)(paths.dataDir);
  if (opened.sizeBytes * 2 > free) {
    opened.body.destroy();
    throw new RestoreFailure(
      'InsufficientSpace',
      `the snapshot ${opened.uri} is ${opened.sizeBytes} bytes and the data volume has ${free} bytes free; ` +
        'a restore needs twice the snapshot (the file and the restored database): raise spec.storage.size and recreate the cluster',
    );
  }
  const hash = createHash('sha256');
  const integrity = new IntegrityHash();
  const scanner = new SnapshotVersionScanner();
  let size = 0;
  const measure = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      integrity.push(chunk);
      scanner.push(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  const partial = `${paths.snapshotFile}.partial`;
  try {
    await pipeline(opened.body, measure, createWriteStream(partial));
  } catch (err) {
    throw new RestoreFailure(
      req.source.kind === 's3' ? 'StoreUnreachable' : 'SnapshotTruncated',
      `reading ${opened.uri} failed after ${size} bytes: ${sourceErrorText(err, req.source)}; the restore is retried`,
    );
  }
  if (size !== opened.sizeBytes) {
    throw new RestoreFailure(
      'SnapshotTruncated',
      `${opened.uri} announced ${opened.sizeBytes} bytes but ${size} arrived; the restore is retried`,
    );
  }
  const sha256 = hash.digest('hex');
  if (req.sha256 && req.sha256.toLowerCase() !== sha256) {
    throw new RestoreFailure(
      'ChecksumMismatch',
      `${opened.uri} has SHA-256 ${sha256}, not the expected ${req.sha256.toLowerCase()}: the file is not the ` +
        'snapshot that was recorded (replaced or damaged); point the restore at an intact snapshot or fix source.sha256',
    );
  }
  // etcd's restore checks this too, but a failed restore step leaves a directory its retry refuses;
  // checked here, a damaged file never reaches it.
  if (!integrity.matches(size)) {
    throw new RestoreFailure(
      'SnapshotCorrupt',
      `${opened.uri} fails etcd's own integrity check (the SHA-256 that snapshot save appends does not ` +
        'match the content, or there is none): the file is damaged, truncated or not an etcd snapshot; restore from another snapshot',
    );
  }
  const snapshotMinor = scanner.minor();
  const memberMinor = minorOf(req.etcdVersion);
  if (compareMinor(snapshotMinor, memberMinor) > 0) {
    throw new RestoreFailure(
      'SnapshotTooNew',
      `${opened.uri} was written by etcd ${snapshotMinor} and this cluster runs etcd ${req.etcdVersion}, which ` +
        `cannot read it; create the cluster with spec.version ${snapshotMinor}.x or newer`,
    );
  }
  await rename(partial, paths.snapshotFile);
  return { kind: 'fetched', sizeBytes: size, sha256, snapshotMinor };
}

interface OpenedSource {
  uri: string;
  sizeBytes: number;
  body: Readable;
}

async function openSource(source: FetchSource): Promise<OpenedSource> {
  if (source.kind === 'file') {
    const target = await containedPath(source.mount, source.path);
    if (target.kind === 'outside') throw new RestoreFailure('PathOutsideVolume', target.message);
    let size: number;
    try {
      const s = await stat(target.path);
      if (!s.isFile()) throw new Error('not a file');
      size = s.size;
    } catch {
      throw new RestoreFailure(
        'SnapshotNotFound',
        `${source.display} does not exist on the volume; check source.pvc.claimName and source.pvc.subPath`,
      );
    }
    return { uri: source.display, sizeBytes: size, body: createReadStream(target.path) };
  }
  const uri = s3Uri(source.bucket, source.key);
  if (!source.credentials) {
    throw new RestoreFailure(
      'CredentialsMissing',
      `the Secret ${source.secretName} is missing or lacks AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; ` +
        'create it in the cluster namespace with both keys',
    );
  }
  const target = {
    endpoint: source.endpoint,
    bucket: source.bucket,
    key: source.key,
    region: source.region || DEFAULT_REGION,
    forcePathStyle: usePathStyle(source),
    secretName: source.secretName,
    uri,
    ownerUid: '', // only read here: ownership matters to writes and deletes
  };
  // The operator's endpoint policy (its allow-list and the cluster's denied ranges), handed to this
  // step by the Pod's environment; checked before anything is contacted, as every S3 caller does.
  const allowList = parseAllowList(process.env[ALLOWED_ENDPOINTS_ENV]).entries;
  const verdict = await endpointVerdict(source.endpoint, allowList);
  if (!verdict.allowed) {
    throw new RestoreFailure(
      'EndpointRefused',
      `${verdict.message.replace('destination.s3.endpoint', 'source.s3.endpoint')}; nothing was contacted`,
    );
  }
  const client = await createS3Client(target, source.credentials, allowList);
  try {
    const head = await client.send(new HeadObjectCommand({ Bucket: source.bucket, Key: source.key }));
    const got = await client.send(new GetObjectCommand({ Bucket: source.bucket, Key: source.key }));
    if (!(got.Body instanceof Readable)) throw new Error('the store answered without a body');
    const body = got.Body;
    body.once('close', () => client.destroy());
    return { uri, sizeBytes: head.ContentLength ?? Number(got.ContentLength ?? 0), body };
  } catch (err) {
    client.destroy();
    throw s3Failure(err, uri, source);
  }
}

export function s3Failure(
  err: unknown,
  uri: string,
  source: Extract<FetchSource, { kind: 's3' }>,
): RestoreFailure {
  const e = (err ?? {}) as { name?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  if (status === 404 || e.name === 'NotFound' || e.name === 'NoSuchKey' || e.name === 'NoSuchBucket') {
    return new RestoreFailure(
      'SnapshotNotFound',
      `${uri} does not exist at ${source.endpoint} (HTTP 404); check source.s3.bucket and source.s3.key (the exact object key)`,
    );
  }
  if (status === 403 || status === 401) {
    return new RestoreFailure(
      'AccessDenied',
      `${source.endpoint} refused to read ${uri} (HTTP ${status}); check the keys in Secret ${source.secretName} ` +
        'and that they may read the bucket',
    );
  }
  return new RestoreFailure(
    'StoreUnreachable',
    `cannot read ${uri} from ${source.endpoint}: ${sourceErrorText(err, source)}; ` +
      'the restore is retried; check source.s3.endpoint and the network',
  );
}

/**
 * What a failed read may say in the termination message, which becomes the cluster's Restored
 * condition: for S3 the reduction every S3 path uses (shared/s3/errors.ts: code, status, one
 * redacted line, the key pair removed), never the SDK's raw text.
 */
export function sourceErrorText(err: unknown, source: FetchSource): string {
  if (source.kind !== 's3') return messageOf(err);
  const secrets = source.credentials
    ? [source.credentials.accessKeyId, source.credentials.secretAccessKey]
    : [];
  return s3ErrorText(reduceS3Error(err, secrets));
}

async function freeBytesOf(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

function compareMinor(a: string, b: string): number {
  const [a1, a2] = a.split('.').map(Number);
  const [b1, b2] = b.split('.').map(Number);
  return a1 - b1 || a2 - b2;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message || err.name : String(err);
}

/**
 * The check `etcdutl snapshot restore` makes: a file written by `snapshot save` ends with the
 * SHA-256 of everything before it, and its size is then 32 more than a multiple of 512.
 */
class IntegrityHash {
  private readonly hash = createHash('sha256');
  private tail = Buffer.alloc(0);

  push(chunk: Buffer): void {
    const all = this.tail.length ? Buffer.concat([this.tail, chunk]) : chunk;
    const keep = Math.min(32, all.length);
    this.hash.update(all.subarray(0, all.length - keep));
    this.tail = Buffer.from(all.subarray(all.length - keep));
  }

  matches(size: number): boolean {
    if (size % 512 !== 32) return false;
    return this.hash.digest().equals(this.tail);
  }
}
