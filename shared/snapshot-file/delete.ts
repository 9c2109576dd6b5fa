// The agent's `snapshot-delete` step (in a Job that mounts the claim): remove a snapshot file that
// a schedule's retention let go, but only the file this EtcdSnapshot wrote, unchanged. The owner
// file must hold the snapshot's UID and the file's SHA-256 must be the one its status records; a
// file anyone else wrote, or one changed since, is left as it is and the step says why. The report
// is one line in the termination message, read back by run-snapshot (shared/reconcile/snapshot-prune.ts).
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { containedPath } from './contained.ts';
import { digestFile } from './save.ts';
import { OWNER_SUFFIX, type DeleteReport } from './result.ts';

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

async function readIfThere(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (err) {
    if (errno(err) === 'ENOENT') return undefined;
    throw err;
  }
}

export async function deleteSnapshotFile(o: {
  /** Where the claim is mounted: `dir/file` must resolve inside it (shared/snapshot-file/contained.ts). */
  mount: string;
  dir: string;
  file: string;
  /** The path the status records, for messages. */
  recordedPath: string;
  ownerUid: string;
  /** Hex SHA-256 the status records. */
  sha256: string;
}): Promise<DeleteReport> {
  const target = await containedPath(o.mount, join(o.dir, o.file));
  if (target.kind === 'outside') return { kind: 'kept', message: target.message };
  const path = target.path;
  const ownerPath = path + OWNER_SUFFIX;
  const owner = await readIfThere(ownerPath);
  const digest = await digestFile(path).catch((err: unknown) => {
    if (errno(err) === 'ENOENT') return undefined;
    throw err;
  });
  if (owner === undefined) {
    return digest
      ? {
          kind: 'kept',
          message: `${o.recordedPath} has no owner file: this snapshot did not write it; left as it is`,
        }
      : { kind: 'gone', message: `${o.recordedPath} was not there` };
  }
  if (owner !== o.ownerUid) {
    return {
      kind: 'kept',
      message: `${o.recordedPath} belongs to another EtcdSnapshot (${owner}); left as it is`,
    };
  }
  if (digest && digest.sha256 !== o.sha256) {
    return {
      kind: 'kept',
      message: `${o.recordedPath} changed since it was written (sha256:${digest.sha256}, not sha256:${o.sha256}); left as it is`,
    };
  }
  // The file first, then its owner file: a crash in between leaves an owner file alone, which
  // the next attempt removes (the file is gone, the owner is ours).
  if (digest) await rm(path);
  await rm(ownerPath, { force: true });
  return digest
    ? {
        kind: 'deleted',
        message: `deleted ${o.recordedPath} (${digest.sizeBytes} bytes, sha256:${o.sha256})`,
      }
    : { kind: 'gone', message: `${o.recordedPath} was not there; its owner file is removed` };
}
