// Snapshots to a PVC: the names the Job builder, the agent's `snapshot-save` step and run-snapshot
// share, and the one line the step leaves in its termination message. Pure, no I/O.
//
//   <claim>/<subPath>/<name>-<uid8>.db                the snapshot
//   <claim>/<subPath>/<name>-<uid8>.db.etcdfn-owner   the full UID of the EtcdSnapshot that owns it
// The owner file is written before the snapshot: a file at the path with no owner file, or another
// UID in it, was not written by this snapshot and is never replaced.

/** Where the Job mounts the claim. */
export const SNAPSHOT_MOUNT = '/snapshots';
export const OWNER_SUFFIX = '.etcdfn-owner';
export const SAVE_CONTAINER = 'save';

/** Why the step failed; the first word of its termination message. */
export type SaveFailureReason =
  | 'ObjectExists'
  | 'VolumeFull'
  | 'VolumeReadOnly'
  | 'PathOutsideVolume'
  | 'EtcdUnavailable'
  | 'ChecksumMismatch'
  | 'IntegrityCheckFailed'
  | 'SaveFailed';

const REASONS = new Set<string>([
  'ObjectExists',
  'VolumeFull',
  'VolumeReadOnly',
  'PathOutsideVolume',
  'EtcdUnavailable',
  'ChecksumMismatch',
  'IntegrityCheckFailed',
  'SaveFailed',
]);

export class SaveFailure extends Error {
  readonly reason: SaveFailureReason;

  constructor(reason: SaveFailureReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** What a successful step reports: the file it wrote and read back. */
export interface SavedSnapshot {
  /** The file's path relative to the claim's root. */
  path: string;
  member: string;
  revision: number;
  sizeBytes: number;
  sha256: string;
  /**
   * From the file's bbolt database, as `etcdutl snapshot status` reports them: keys in every bucket
   * and the highest revision in the key bucket.
   */
  totalKey: number;
  dbRevision: number;
}

/** The file name of a snapshot: the same `<name>-<uid8>.db` as the S3 key's last part. */
export function snapshotFileName(owner: { name: string; uid: string }): string {
  return `${owner.name}-${owner.uid.slice(0, 8)}.db`;
}

/** The file's path relative to the claim's root. */
export function snapshotFilePath(subPath: string | undefined, owner: { name: string; uid: string }): string {
  const dir = (subPath ?? '').replace(/\/+$/, '');
  return dir ? `${dir}/${snapshotFileName(owner)}` : snapshotFileName(owner);
}

export function pvcUri(claimName: string, path: string): string {
  return `pvc://${claimName}/${path}`;
}

const SAVED_PREFIX = 'Saved: ';

export function savedMessage(saved: SavedSnapshot): string {
  return SAVED_PREFIX + JSON.stringify(saved);
}

export function failedMessage(f: { reason: SaveFailureReason; message: string }): string {
  return `${f.reason}: ${f.message}`.slice(0, 3900);
}

export type StepReport =
  { kind: 'saved'; saved: SavedSnapshot } | { kind: 'failed'; reason: SaveFailureReason; message: string };

/** Reads the step's termination message back; anything else (a crash's log tail) is SaveFailed. */
export function parseStepReport(text: string | undefined): StepReport {
  const trimmed = (text ?? '').trim();
  if (trimmed.startsWith(SAVED_PREFIX)) {
    try {
      const saved = JSON.parse(trimmed.slice(SAVED_PREFIX.length)) as Partial<SavedSnapshot>;
      if (
        typeof saved.path === 'string' &&
        typeof saved.member === 'string' &&
        typeof saved.revision === 'number' &&
        typeof saved.sizeBytes === 'number' &&
        typeof saved.sha256 === 'string' &&
        typeof saved.totalKey === 'number' &&
        typeof saved.dbRevision === 'number' &&
        /^[0-9a-f]{64}$/.test(saved.sha256)
      ) {
        return { kind: 'saved', saved: saved as SavedSnapshot };
      }
    } catch {
      // falls through: not a report
    }
  }
  const m = /^([A-Za-z]+): ([\s\S]*)$/.exec(trimmed);
  if (m && REASONS.has(m[1])) {
    return { kind: 'failed', reason: m[1] as SaveFailureReason, message: m[2].trim() };
  }
  const tail = trimmed.split('\n').slice(-3).join(' ').slice(0, 600);
  return {
    kind: 'failed',
    reason: 'SaveFailed',
    message: tail ? `the snapshot step failed: ${tail}` : 'the snapshot step failed without a message',
  };
}

// The `snapshot-delete` step (shared/snapshot-file/delete.ts): a schedule's retention removing a file.
export const DELETE_CONTAINER = 'delete';

export type DeleteReport =
  | { kind: 'deleted'; message: string }
  /** Neither the file nor its owner file is there (deleted already, or never written). */
  | { kind: 'gone'; message: string }
  /** Left in place: not this snapshot's, or changed since it was written. */
  | { kind: 'kept'; message: string };

const PREFIX = 'Delete: ';

export function deleteMessage(report: DeleteReport): string {
  return PREFIX + JSON.stringify(report).slice(0, 3900);
}

/** The step's termination message read back; undefined when it is not a report (a crash's log tail). */
export function parseDeleteReport(text: string | undefined): DeleteReport | undefined {
  const trimmed = (text ?? '').trim();
  if (!trimmed.startsWith(PREFIX)) return undefined;
  try {
    const r = JSON.parse(trimmed.slice(PREFIX.length)) as Partial<DeleteReport>;
    if ((r.kind === 'deleted' || r.kind === 'gone' || r.kind === 'kept') && typeof r.message === 'string') {
      return r as DeleteReport;
    }
  } catch {
    // not a report
  }
  return undefined;
}
