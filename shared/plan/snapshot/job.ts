// Snapshots to a PVC (destination.pvc): what the Job of the current attempt tells run-snapshot.
// Pure: the adapter observes the Job (named after the attempt's claim time) and, once it has
// finished, its Pod's termination message; this turns that into the attempt's outcome.
import type { EtcdSnapshot } from '../../api/etcd-snapshot.ts';
import { parseDeleteReport, parseStepReport, pvcUri, snapshotFilePath } from '../../snapshot-file/result.ts';
import type { TakeOutcome, AttemptJob } from './types.ts';

/** The outcome of a finished Job's attempt. */
export function jobOutcome(
  snapshot: EtcdSnapshot,
  job: Extract<AttemptJob, { state: 'finished' }>,
): TakeOutcome {
  const claim = snapshot.spec.destination.pvc?.claimName ?? '';
  if (job.report === undefined) {
    if (job.jobReason === 'DeadlineExceeded') {
      return { kind: 'timed-out', message: `Job ${job.name} ran past its deadline and was stopped` };
    }
    return {
      kind: 'error',
      message: `Job ${job.name} ${job.succeeded ? 'completed' : `failed (${job.jobReason ?? 'no reason'})`} but its Pod's report is gone`,
    };
  }
  const report = parseStepReport(job.report);
  if (report.kind === 'saved') {
    if (!job.succeeded) {
      return {
        kind: 'error',
        message: `Job ${job.name} reported a saved file but failed (${job.jobReason ?? 'no reason'})`,
      };
    }
    const s = report.saved;
    const uri = pvcUri(claim, s.path);
    return {
      kind: 'verified',
      source: s.member,
      artifact: { uri, sizeBytes: s.sizeBytes, checksum: `sha256:${s.sha256}`, revision: s.dbRevision },
      verification:
        `Job ${job.name} read ${s.sizeBytes} bytes back from the volume: size and sha256:${s.sha256} match what it wrote; ` +
        `etcd's integrity hash (last 32 bytes: SHA-256 of the rest) matches; ` +
        `its database holds ${s.totalKey} keys at revision ${s.dbRevision} (entries in every bucket, as etcdutl 3.5's snapshot status counts them, and revision)`,
    };
  }
  const uri = pvcUri(
    claim,
    snapshotFilePath(snapshot.spec.destination.pvc?.subPath, {
      name: snapshot.metadata.name ?? '',
      uid: snapshot.metadata.uid ?? '',
    }),
  );
  switch (report.reason) {
    case 'ObjectExists':
      return { kind: 'object-exists', message: report.message };
    case 'VolumeFull':
    case 'VolumeReadOnly':
    case 'PathOutsideVolume':
      return { kind: 'volume-refused', reason: report.reason, message: report.message };
    case 'EtcdUnavailable':
      return { kind: 'etcd-unavailable', message: report.message };
    case 'ChecksumMismatch':
    case 'IntegrityCheckFailed':
      return {
        kind: 'verify-failed',
        source: job.name,
        artifact: { uri },
        reason: report.reason,
        message: `verification failed: ${report.message}`,
      };
    case 'SaveFailed':
      if (job.jobReason === 'DeadlineExceeded') return { kind: 'timed-out', message: report.message };
      return { kind: 'error', message: `Job ${job.name}: ${report.message}` };
  }
}

/** A Pod the scheduler has not placed gets this long before the attempt is given up. */
export const UNSCHEDULED_GRACE_MS = 60_000;

/** The scheduler's verdict on a Job's Pod, when it has not placed it. */
export function unscheduledSince(pod: {
  metadata?: { creationTimestamp?: Date | string };
  status?: {
    conditions?: { type: string; status: string; message?: string; lastTransitionTime?: Date | string }[];
  };
}): { since: string; message: string } | undefined {
  const c = pod.status?.conditions?.find(x => x.type === 'PodScheduled');
  if (c?.status !== 'False') return undefined;
  const when = c.lastTransitionTime ?? pod.metadata?.creationTimestamp;
  const since = when === undefined ? undefined : new Date(when);
  if (!since || Number.isNaN(since.getTime())) return undefined;
  return { since: since.toISOString(), message: c.message ?? 'not scheduled' };
}

/**
 * A running attempt whose Pod has not been scheduled for UNSCHEDULED_GRACE_MS: final, with what
 * the scheduler says. An unbound or unmountable claim is the usual cause (ClaimNotMountable).
 */
export function unscheduledOutcome(
  snapshot: EtcdSnapshot,
  job: Extract<AttemptJob, { state: 'running' }>,
  now: Date,
): TakeOutcome | undefined {
  if (!job.unscheduled) return undefined;
  const waited = now.getTime() - new Date(job.unscheduled.since).getTime();
  if (waited < UNSCHEDULED_GRACE_MS) return undefined;
  const claim = snapshot.spec.destination.pvc?.claimName ?? '';
  const aboutVolumes = /persistentvolumeclaim|volume/i.test(job.unscheduled.message);
  return {
    kind: 'volume-refused',
    reason: aboutVolumes ? 'ClaimNotMountable' : 'JobPodUnschedulable',
    message:
      `the Pod of Job ${job.name} was not scheduled for ${Math.round(waited / 1000)} s: ${job.unscheduled.message}` +
      (aboutVolumes
        ? `; PersistentVolumeClaim ${claim} must be Bound and mountable next to the members (kubectl describe pvc ${claim})`
        : ''),
  };
}

/** Retention of a file on a PVC, after looking at its delete Job (shared/reconcile/snapshot-prune.ts). */
export type FilePruneResult =
  /** The Job runs (or was just created): the EtcdSnapshot stays until it reports. */
  | { kind: 'pending'; message: string }
  /** Done with the file (deleted, already gone, or left with a reason): the EtcdSnapshot may go. */
  | { kind: 'done'; deleted?: string; kept?: string }
  /** A person must look: the Job failed without a report. The EtcdSnapshot is kept. */
  | { kind: 'problem'; message: string };

/** What the delete Job says: create it (absent), wait for it, or its outcome once it finished. */
export function filePruneStep(
  snapshot: EtcdSnapshot,
  job: AttemptJob,
): { kind: 'create-job' } | FilePruneResult {
  const claim = snapshot.spec.destination.pvc?.claimName ?? '';
  if (job.state === 'absent') return { kind: 'create-job' };
  if (job.state === 'running') {
    return { kind: 'pending', message: `Job ${job.name} is removing its file from claim ${claim}` };
  }
  const report = parseDeleteReport(job.report);
  if (!report) {
    const why = job.succeeded ? 'left no report' : `failed (${job.jobReason ?? 'no reason'})`;
    const tail = (job.report ?? '').trim().slice(0, 300);
    return {
      kind: 'problem',
      message: `Job ${job.name}, removing the file of EtcdSnapshot ${snapshot.metadata.name} from claim ${claim}, ${why}${tail ? `: ${tail}` : ''}; delete the Job to try again (the EtcdSnapshot is kept until its file is handled)`,
    };
  }
  if (report.kind === 'kept') return { kind: 'done', kept: report.message };
  return { kind: 'done', ...(report.kind === 'deleted' && { deleted: `pvc://${claim}: ${report.message}` }) };
}
