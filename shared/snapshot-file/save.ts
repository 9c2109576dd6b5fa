// The agent's `snapshot-save` step (in a Job that mounts the claim): stream a snapshot from the
// first member that serves one into `<dir>/<file>`, never over a file this snapshot did not write,
// then read the file back from the volume and check its size, SHA-256 and etcd's integrity hash.
//
// Overwrite guard: `<file>.etcdfn-owner` (the snapshot's full UID) is created exclusively before
// any byte is written. A file at the path with no owner file or another UID in it is refused; this
// snapshot's own leftover (a retake after a crash) is replaced. The bytes go to `<file>.partial`
// and are hard-linked into place, which fails rather than replaces if a file appeared meanwhile.
import { createReadStream, createWriteStream } from 'node:fs';
import { link, mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { EtcdAccess } from '../etcd/access.ts';
import { snapshot as openSnapshot } from '../etcd/snapshot.ts';
import { SnapshotDigest } from './verify.ts';
import { bboltStatus } from './bbolt-status.ts';
import { containedPath } from './contained.ts';
import { OWNER_SUFFIX, SaveFailure, type SavedSnapshot } from './result.ts';

export interface SaveOptions {
  /** Where the claim is mounted: `dir/file` must resolve inside it (shared/snapshot-file/contained.ts). */
  mount: string;
  /** The directory (on the mounted claim) the file goes to; created if missing. */
  dir: string;
  file: string;
  /** The path the status records (relative to the claim's root). */
  recordedPath: string;
  ownerUid: string;
  /** Client URLs with the member's name, in order of preference. */
  sources: { member: string; endpoint: string }[];
  /** Client TLS (and later credentials) for a cluster that needs them. */
  access?: EtcdAccess;
}

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

/** File-system errors a user can act on, as SaveFailure; anything else is rethrown. */
function volumeFailure(err: unknown, dir: string): never {
  const code = errno(err);
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    throw new SaveFailure(
      'VolumeFull',
      `the volume has no space left for the snapshot in ${dir}; grow the PVC or free space`,
    );
  }
  if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') {
    throw new SaveFailure(
      'VolumeReadOnly',
      `cannot write to ${dir} (${code}): the volume is read-only or not writable by the Job's user`,
    );
  }
  throw err;
}

async function readOwner(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (err) {
    if (errno(err) === 'ENOENT') return undefined;
    throw err;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if (errno(err) === 'ENOENT') return false;
    throw err;
  }
}

/** Claims the path for this snapshot, or refuses: see the guard above. */
async function claimPath(final: string, ownerUid: string): Promise<void> {
  const ownerFile = final + OWNER_SUFFIX;
  const owner = await readOwner(ownerFile);
  if (owner !== undefined && owner !== ownerUid) {
    throw new SaveFailure(
      'ObjectExists',
      `${final} belongs to another EtcdSnapshot (UID ${owner.slice(0, 36)}): nothing was written`,
    );
  }
  if (owner === undefined) {
    if (await exists(final)) {
      throw new SaveFailure(
        'ObjectExists',
        `a file this snapshot did not write is at ${final}: it is left as it is; move it away or choose another pvc.subPath`,
      );
    }
    try {
      const handle = await open(ownerFile, 'wx', 0o640);
      await handle.writeFile(`${ownerUid}\n`);
      await handle.sync();
      await handle.close();
    } catch (err) {
      if (errno(err) === 'EEXIST') return claimPath(final, ownerUid);
      volumeFailure(err, final);
    }
    return;
  }
  // Ours: a crashed attempt's file and partial file are replaced.
  await rm(final, { force: true });
}

/** Streams a snapshot into `partial`, returning what was written; undefined when no member served one. */
async function stream(
  sources: SaveOptions['sources'],
  partial: string,
  dir: string,
  access: EtcdAccess = {},
): Promise<{ member: string; revision: number; digest: ReturnType<SnapshotDigest['digest']> }> {
  const failures: string[] = [];
  for (const source of sources) {
    const opened = await openSnapshot(source.endpoint, access);
    if (opened.kind !== 'ok') {
      failures.push(`${source.member}: ${opened.message}`);
      continue;
    }
    const digest = new SnapshotDigest();
    const tap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        digest.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await rm(partial, { force: true });
      await pipeline(opened.stream, tap, createWriteStream(partial, { flags: 'wx', mode: 0o640 }));
      const handle = await open(partial, 'r+');
      await handle.sync();
      await handle.close();
    } catch (err) {
      await rm(partial, { force: true }).catch(() => undefined);
      if (['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM'].includes(errno(err) ?? ''))
        volumeFailure(err, dir);
      failures.push(
        `${source.member}: the stream broke off: ${err instanceof Error ? err.message : String(err)}`,
      );
      continue;
    }
    return { member: source.member, revision: opened.revision, digest: digest.digest() };
  }
  throw new SaveFailure('EtcdUnavailable', `no member served a snapshot (${failures.join('; ')})`);
}

/** Reads the file back from the volume: size, SHA-256 and etcd's integrity hash. */
export async function digestFile(path: string): Promise<ReturnType<SnapshotDigest['digest']>> {
  const digest = new SnapshotDigest();
  for await (const chunk of createReadStream(path)) digest.update(chunk as Buffer);
  return digest.digest();
}

export async function saveSnapshotFile(given: SaveOptions): Promise<SavedSnapshot> {
  const target = await containedPath(given.mount, join(given.dir, given.file));
  if (target.kind === 'outside') throw new SaveFailure('PathOutsideVolume', target.message);
  // From here on the resolved path: no link named in the given one is followed again.
  const opts = { ...given, dir: dirname(target.path), file: basename(target.path) };
  await mkdir(opts.dir, { recursive: true }).catch(async (err: unknown) => {
    // A recursive mkdir on a read-only file system says ENOENT; a plain one says why.
    if (errno(err) === 'ENOENT') await mkdir(opts.dir).catch((e: unknown) => volumeFailure(e, opts.dir));
    volumeFailure(err, opts.dir);
  });
  const final = join(opts.dir, opts.file);
  await claimPath(final, opts.ownerUid);
  const partial = `${final}.partial`;
  const written = await stream(opts.sources, partial, opts.dir, opts.access);
  try {
    await link(partial, final);
  } catch (err) {
    await rm(partial, { force: true });
    if (errno(err) === 'EEXIST') {
      throw new SaveFailure(
        'ObjectExists',
        `a file appeared at ${final} while the snapshot was written: it is left as it is`,
      );
    }
    volumeFailure(err, opts.dir);
  }
  await rm(partial, { force: true });
  const dirHandle = await open(opts.dir, 'r');
  await dirHandle.sync().catch(() => undefined);
  await dirHandle.close();

  const read = await digestFile(final);
  const sent = written.digest;
  if (read.sizeBytes !== sent.sizeBytes || read.sha256 !== sent.sha256) {
    throw new SaveFailure(
      'ChecksumMismatch',
      `${opts.recordedPath} read back from the volume as ${read.sizeBytes} bytes with sha256:${read.sha256}, but ${sent.sizeBytes} bytes with sha256:${sent.sha256} were written; the file is kept`,
    );
  }
  if (read.integrity !== 'ok') {
    throw new SaveFailure(
      'IntegrityCheckFailed',
      read.integrity === 'absent'
        ? `${opts.recordedPath} (${read.sizeBytes} bytes) does not end with etcd's 32-byte integrity hash; the file is kept`
        : `etcd's integrity hash at the end of ${opts.recordedPath} does not match its contents; the file is kept`,
    );
  }
  // What `etcdutl snapshot status` would report, read from the file's database.
  const db = await bboltStatus(final).catch((err: unknown) => {
    throw new SaveFailure(
      'IntegrityCheckFailed',
      `${opts.recordedPath} passes etcd's hash but its bbolt database cannot be read (${err instanceof Error ? err.message : String(err)}); the file is kept`,
    );
  });
  return {
    path: opts.recordedPath,
    member: written.member,
    revision: written.revision,
    sizeBytes: read.sizeBytes,
    sha256: read.sha256,
    totalKey: db.totalKey,
    dbRevision: db.revision,
  };
}
