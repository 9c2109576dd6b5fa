// run-snapshot's verification of what it stored: the object read back from S3 must be what was sent,
// and end with etcd's integrity hash; the answer is the attempt's outcome (shared/plan/snapshot/).
import type { Context } from '../runtime/context.ts';
import { readBack } from '../snapshot-file/verify.ts';
import { type SnapshotPlan, type StoredArtifact, type TakeOutcome } from '../plan/snapshot/types.ts';

export type ClaimStep = Extract<SnapshotPlan['step'], { kind: 'claim' }>;

/**
 * Reads the stored object back: its size and SHA-256 must be what was sent, and etcd's integrity
 * hash (the last 32 bytes) must match the rest. Anything else is Failed, with the object kept.
 */
export async function verify(
  ctx: Context,
  step: ClaimStep,
  uploaded: {
    credentials: { accessKeyId: string; secretAccessKey: string };
    member: string;
    artifact: StoredArtifact & { etag: string };
    signal: AbortSignal;
  },
): Promise<TakeOutcome> {
  const { credentials, member, artifact, signal } = uploaded;
  const sentSha256 = artifact.checksum.replace(/^sha256:/, '');
  const read = await readBack(step.target, credentials, artifact.etag, {
    allowList: ctx.settings.s3AllowList,
    signal,
  });
  const failed = (
    reason: Extract<TakeOutcome, { kind: 'verify-failed' }>['reason'],
    message: string,
  ): TakeOutcome => ({ kind: 'verify-failed', source: member, artifact, reason, message });
  switch (read.kind) {
    case 'unavailable':
      return { kind: 's3-unavailable', message: `reading ${artifact.uri} back failed: ${read.message}` };
    case 'refused':
      return failed(
        'ReadBackRefused',
        `S3 refused to read ${artifact.uri} back (${read.code}: ${read.message}), so it could not be verified; give the key in Secret ${step.target.secretName} s3:GetObject`,
      );
    case 'endpoint-refused':
      return { kind: 'endpoint-refused', reason: read.reason, message: read.message };
    case 'changed':
      return failed('ObjectChanged', `verification failed: ${read.message}`);
    case 'read':
      break;
  }
  if (read.sizeBytes !== artifact.sizeBytes || read.sha256 !== sentSha256) {
    return failed(
      'ChecksumMismatch',
      `verification failed: ${artifact.uri} read back as ${read.sizeBytes} bytes with sha256:${read.sha256}, but ${artifact.sizeBytes} bytes with ${artifact.checksum} were sent`,
    );
  }
  if (read.integrity !== 'ok') {
    return failed(
      'IntegrityCheckFailed',
      read.integrity === 'absent'
        ? `verification failed: ${artifact.uri} (${read.sizeBytes} bytes) does not end with etcd's 32-byte integrity hash`
        : `verification failed: etcd's integrity hash at the end of ${artifact.uri} does not match its contents`,
    );
  }
  return {
    kind: 'verified',
    source: member,
    artifact,
    verification:
      `read back ${read.sizeBytes} bytes from ${artifact.uri}: size and ${artifact.checksum} match the upload; ` +
      `etcd's integrity hash (last 32 bytes: SHA-256 of the rest) matches; revision ${artifact.revision} is the member's revision when streaming began; ` +
      (read.contents.kind === 'counted'
        ? `its database holds ${read.contents.totalKey} keys at revision ${read.contents.revision} (entries in every bucket, as etcdutl 3.5's snapshot status counts them, and revision)`
        : `its keys were not counted: ${read.contents.reason}`),
  };
}
