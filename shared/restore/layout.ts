import { DATA_DIR } from '../names.ts';
// How a restore lays out its files in the member's data volume, and the names the Pod builder,
// the agent's restore steps and the status code share. Pure constants and parsing, no I/O.
//
//   <data>/.etcdfn-restore/snapshot.db   the fetched, verified snapshot (fetch step)
//   <data>/.etcdfn-restore/data/member   etcd's restored data (the etcd image's restore step)
//   <data>/member                        moved here by the commit step, then
//   <data>/.etcdfn-restored              the marker: written last, only after a complete restore
// The marker is the commit point. Without it no etcd has ever run on the directory (the main
// container starts only after the commit step), so a restart wipes the work and starts over;
// with it, every step is a no-op and live data is never restored over.

/** The restore's files under a data directory (a container path or, in the agent, the real one). */
export function restorePaths(dataDir: string) {
  const workDir = `${dataDir}/.etcdfn-restore`;
  return {
    dataDir,
    workDir,
    snapshotFile: `${workDir}/snapshot.db`,
    /** etcd's restore writes here (it holds member/) */
    restoredDir: `${workDir}/data`,
    /** written by the fetch step when the marker is found: the later steps then change nothing */
    skipFile: `${workDir}/skip`,
    marker: `${dataDir}/.etcdfn-restored`,
  };
}

/** The paths inside the member Pod. */
export const POD_RESTORE_PATHS = restorePaths(DATA_DIR);
/** Where a PVC source is mounted (read-only) in the fetch container. */
export const RESTORE_SOURCE_MOUNT = '/restore-source';

/** The init containers of a restoring member, in order. */
export const FETCH_CONTAINER = 'restore-fetch';
export const RESTORE_CONTAINER = 'restore';
export const COMMIT_CONTAINER = 'restore-commit';
export const RESTORE_CONTAINERS = [FETCH_CONTAINER, RESTORE_CONTAINER, COMMIT_CONTAINER] as const;

/** Why a restore step failed; the first word of its termination message. */
export type RestoreFailureReason =
  | 'SecretNotFound'
  | 'CredentialsMissing'
  | 'AccessDenied'
  | 'SnapshotNotFound'
  | 'PathOutsideVolume'
  | 'StoreUnreachable'
  | 'EndpointRefused'
  | 'ChecksumMismatch'
  | 'SnapshotTooNew'
  | 'InsufficientSpace'
  | 'SnapshotTruncated'
  | 'SnapshotCorrupt'
  | 'RestoreFailed';

const REASONS = new Set<string>([
  'SecretNotFound',
  'CredentialsMissing',
  'AccessDenied',
  'SnapshotNotFound',
  'PathOutsideVolume',
  'StoreUnreachable',
  'EndpointRefused',
  'ChecksumMismatch',
  'SnapshotTooNew',
  'InsufficientSpace',
  'SnapshotTruncated',
  'SnapshotCorrupt',
  'RestoreFailed',
]);

export class RestoreFailure extends Error {
  readonly reason: RestoreFailureReason;

  constructor(reason: RestoreFailureReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** The termination message a failed step leaves: `<Reason>: <message>`. */
export function failureMessage(f: { reason: RestoreFailureReason; message: string }): string {
  return `${f.reason}: ${f.message}`;
}

/** Reads a step's termination message back; anything else (etcdutl's own log tail) is RestoreFailed. */
export function parseFailure(text: string): { reason: RestoreFailureReason; message: string } {
  const m = /^([A-Za-z]+): ([\s\S]*)$/.exec(text.trim());
  if (m && REASONS.has(m[1])) return { reason: m[1] as RestoreFailureReason, message: m[2].trim() };
  // etcd's restore checks the SHA-256 `snapshot save` appends to the file.
  if (/expected sha256|snapshot file integrity check failed/i.test(text)) {
    return {
      reason: 'SnapshotCorrupt',
      message:
        "the snapshot fails etcd's own integrity check (the hash stored in the file does not match its content): " +
        'it is damaged or truncated; restore from another snapshot',
    };
  }
  return { reason: 'RestoreFailed', message: lastLines(text, 3) };
}

function lastLines(text: string, n: number): string {
  return text.trim().split('\n').slice(-n).join(' ').slice(0, 600);
}
