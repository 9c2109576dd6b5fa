// The status after one snapshot attempt: what the adapter reports of it (TakeOutcome) turned into
// the snapshot's phase, Ready and Verified conditions and Event. Pure: no I/O, no clock.
import type { EtcdSnapshot, EtcdSnapshotStatus, SnapshotPhase } from '../../api/etcd-snapshot.ts';
import { setCondition, toKubeTime, type ConditionInput } from '../../conditions.ts';
import { ownerOf, snapshotTarget } from '../../s3/location.ts';
import { SNAPSHOT_READY, SNAPSHOT_VERIFIED, type SnapshotPlan, type TakeOutcome } from './types.ts';

/** The status after the attempt that `claimed` (the snapshot as the claim wrote it) made. */
export function planOutcome(claimed: EtcdSnapshot, outcome: TakeOutcome, now: Date): SnapshotPlan {
  // Over 80 lines: one case per TakeOutcome kind, each the status and condition a person reads for it.
  const name = claimed.metadata.name ?? '';
  const cluster = claimed.spec.clusterRef.name;
  const base = claimed.status ?? {};
  const set = (phase: SnapshotPhase, condition: ConditionInput, extra: EtcdSnapshotStatus = {}) => ({
    ...base,
    ...extra,
    phase,
    conditions: setCondition(base.conditions, condition, now),
  });
  /** Failed for good: the condition and a SnapshotFailed Warning say why and what to do. */
  const failed = (reason: string, message: string): SnapshotPlan => ({
    step: { kind: 'fail', reason: `EtcdSnapshot ${name}: ${message}` },
    status: set(
      'Failed',
      { type: SNAPSHOT_READY, status: 'False', reason, message },
      { completionTime: toKubeTime(now) },
    ),
    statusChanged: true,
    events: [{ type: 'Warning', reason: 'SnapshotFailed', message }],
  });
  switch (outcome.kind) {
    case 'verified': {
      const a = outcome.artifact;
      const message = `snapshot of EtcdCluster ${cluster} at revision ${a.revision} (${formatBytes(a.sizeBytes)}) stored at ${a.uri}, taken from member ${outcome.source}, verified`;
      const status = set(
        'Complete',
        { type: SNAPSHOT_READY, status: 'True', reason: 'Complete', message },
        { artifact: { ...a }, completionTime: toKubeTime(now) },
      );
      status.conditions = setCondition(
        status.conditions,
        {
          type: SNAPSHOT_VERIFIED,
          status: 'True',
          reason: 'ReadBackVerified',
          message: outcome.verification,
        },
        now,
      );
      return {
        step: { kind: 'nothing', reason: `EtcdSnapshot ${name}: ${message}` },
        status,
        statusChanged: true,
        events: [{ type: 'Normal', reason: 'SnapshotComplete', message }],
      };
    }
    case 'verify-failed': {
      const message = `${outcome.message}; the object is kept at ${outcome.artifact.uri} for inspection; create a new EtcdSnapshot to try again`;
      const status = set(
        'Failed',
        { type: SNAPSHOT_READY, status: 'False', reason: 'VerificationFailed', message },
        { artifact: { ...outcome.artifact }, completionTime: toKubeTime(now) },
      );
      status.conditions = setCondition(
        status.conditions,
        { type: SNAPSHOT_VERIFIED, status: 'False', reason: outcome.reason, message: outcome.message },
        now,
      );
      return {
        step: { kind: 'fail', reason: `EtcdSnapshot ${name}: ${message}` },
        status,
        statusChanged: true,
        events: [{ type: 'Warning', reason: 'SnapshotVerificationFailed', message }],
      };
    }
    case 'object-exists':
    case 'volume-refused':
    case 'endpoint-refused': {
      const message = `${outcome.message}; then create a new EtcdSnapshot`;
      const reason = outcome.kind === 'object-exists' ? 'ObjectExists' : outcome.reason;
      return failed(reason, message);
    }
    case 's3-refused':
    case 'credentials-invalid': {
      const message =
        outcome.kind === 's3-refused'
          ? refusedMessage(claimed, outcome.code, outcome.message)
          : outcome.message;
      const reason = outcome.kind === 's3-refused' ? 'UploadRefused' : 'CredentialsInvalid';
      return failed(reason, message);
    }
    case 'etcd-unavailable':
    case 's3-unavailable':
    case 'timed-out':
    case 'error': {
      const what = {
        'etcd-unavailable': 'could not stream a snapshot from etcd',
        's3-unavailable': 'could not upload to the object store',
        'timed-out': 'did not finish in time',
        error: 'failed',
      }[outcome.kind];
      const message = `the attempt started at ${base.startTime} ${what}: ${outcome.message}; retrying`;
      // Back to Pending, keeping startTime: the next attempt waits for the retry delay from it.
      const status = set('Pending', {
        type: SNAPSHOT_READY,
        status: 'False',
        reason: 'AttemptFailed',
        message,
      });
      return {
        step: { kind: 'wait', reason: `EtcdSnapshot ${name}: ${message}` },
        status,
        statusChanged: true,
        events: [{ type: 'Warning', reason: 'SnapshotAttemptFailed', message }],
      };
    }
  }
}

function refusedMessage(snapshot: EtcdSnapshot, code: string, message: string): string {
  // Only an S3 attempt is refused by S3.
  const s3 = snapshot.spec.destination.s3!;
  const uri = snapshotTarget(s3, ownerOf(snapshot)).uri;
  const secret = s3.credentialsSecretRef.name;
  const hints: Record<string, string> = {
    NoSuchBucket: `create bucket ${s3.bucket} at ${s3.endpoint} or fix destination.s3.bucket`,
    InvalidAccessKeyId: `check AWS_ACCESS_KEY_ID in Secret ${secret}`,
    SignatureDoesNotMatch: `check AWS_SECRET_ACCESS_KEY in Secret ${secret}`,
    AccessDenied: `give the key in Secret ${secret} s3:PutObject on ${uri}`,
    HTTP403: `check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in Secret ${secret}, and that the key may s3:GetObject and s3:PutObject on ${uri}`,
    PermanentRedirect: 'set destination.s3.region (or the endpoint) to the bucket’s region',
    AuthorizationHeaderMalformed: 'set destination.s3.region to the bucket’s region',
  };
  const hint = hints[code] ?? `check destination.s3 and the credentials in Secret ${secret}`;
  return `S3 refused the upload to ${uri}: ${code}: ${message}; ${hint}, then create a new EtcdSnapshot`;
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}
