// What run-snapshot makes of a finished snapshot Job (shared/plan/snapshot/job.ts), outcome by
// outcome and word for word: the message a person reads in the EtcdSnapshot's Ready condition, where
// the file is said to be, and above all that only a Job that succeeded and reported a file it read
// back counts as verified. Written against the mutants StrykerJS left alive in that file.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { findCondition } from '../../shared/conditions.ts';
import { jobOutcome } from '../../shared/plan/snapshot/job.ts';
import { planOutcome } from '../../shared/plan/snapshot/outcome.ts';
import { failedMessage, savedMessage, type SaveFailureReason } from '../../shared/snapshot-file/result.ts';
import type { TakeOutcome } from '../../shared/plan/snapshot/types.ts';
import type { AttemptJob } from '../../shared/plan/snapshot/types.ts';

const NOW = new Date('2026-11-22T10:02:00Z');
const UID = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
const SHA = 'cd'.repeat(32);
const JOB = 'nightly-snapshot-1a2b3c';

function snapshot(subPath?: string): EtcdSnapshot {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: { name: 'nightly', namespace: 'prod', uid: UID, creationTimestamp: NOW },
    spec: {
      clusterRef: { name: 'demo' },
      destination: { pvc: { claimName: 'backups', ...(subPath !== undefined && { subPath }) } },
    },
    status: { phase: 'Started', startTime: '2026-11-22T10:01:00Z' },
  };
}
type Finished = Extract<AttemptJob, { state: 'finished' }>;
const job = (over: Partial<Finished>): Finished => ({
  name: JOB,
  state: 'finished',
  succeeded: false,
  ...over,
});
const saved = {
  path: 'etcd/daily/nightly-0f1e2d3c.db',
  member: 'demo-2',
  revision: 400,
  sizeBytes: 2_097_184,
  sha256: SHA,
  totalKey: 230,
  dbRevision: 412,
};
const failed = (reason: SaveFailureReason, message: string) => failedMessage({ reason, message });

describe('jobOutcome: a finished Job whose Pod left no report', () => {
  const rows: [string, Partial<Finished>, TakeOutcome][] = [
    [
      'stopped at its deadline → timed out (retried)',
      { jobReason: 'DeadlineExceeded' },
      { kind: 'timed-out', message: `Job ${JOB} ran past its deadline and was stopped` },
    ],
    [
      'completed → an error (retried), never verified',
      { succeeded: true },
      { kind: 'error', message: `Job ${JOB} completed but its Pod's report is gone` },
    ],
    [
      'failed with a reason → an error naming it',
      { jobReason: 'BackoffLimitExceeded' },
      { kind: 'error', message: `Job ${JOB} failed (BackoffLimitExceeded) but its Pod's report is gone` },
    ],
    [
      'failed without a reason → an error saying so',
      {},
      { kind: 'error', message: `Job ${JOB} failed (no reason) but its Pod's report is gone` },
    ],
  ];
  for (const [name, over, outcome] of rows) {
    it(name, () => assert.deepEqual(jobOutcome(snapshot('etcd/daily'), job(over)), outcome));
  }
});

describe('jobOutcome: a saved file', () => {
  it('from a Job that succeeded → verified, the file at pvc://<claim>/<path>, saying what was checked', () => {
    const outcome = jobOutcome(snapshot('etcd/daily'), job({ succeeded: true, report: savedMessage(saved) }));
    assert.deepEqual(outcome, {
      kind: 'verified',
      source: 'demo-2',
      artifact: {
        uri: 'pvc://backups/etcd/daily/nightly-0f1e2d3c.db',
        sizeBytes: 2_097_184,
        checksum: `sha256:${SHA}`,
        revision: 412,
      },
      verification:
        `Job ${JOB} read 2097184 bytes back from the volume: size and sha256:${SHA} match what it wrote; ` +
        "etcd's integrity hash (last 32 bytes: SHA-256 of the rest) matches; " +
        "its database holds 230 keys at revision 412 (entries in every bucket, as etcdutl 3.5's snapshot status counts them, and revision)",
    });
    const plan = planOutcome(snapshot('etcd/daily'), outcome, NOW);
    assert.equal(plan.status.phase, 'Complete');
    assert.equal(findCondition(plan.status.conditions, 'Verified')?.status, 'True');
  });

  const unverified: [string, Partial<Finished>, string][] = [
    [
      'from a Job that failed with a reason → an error, not Complete',
      { jobReason: 'BackoffLimitExceeded' },
      `Job ${JOB} reported a saved file but failed (BackoffLimitExceeded)`,
    ],
    [
      'from a Job that failed without a reason → an error, not Complete',
      {},
      `Job ${JOB} reported a saved file but failed (no reason)`,
    ],
  ];
  for (const [name, over, message] of unverified) {
    it(name, () => {
      const outcome = jobOutcome(snapshot('etcd/daily'), job({ ...over, report: savedMessage(saved) }));
      assert.deepEqual(outcome, { kind: 'error', message });
      const plan = planOutcome(snapshot('etcd/daily'), outcome, NOW);
      assert.equal(plan.status.phase, 'Pending');
      assert.equal(plan.status.artifact, undefined);
      assert.equal(findCondition(plan.status.conditions, 'Verified'), undefined);
    });
  }
});

describe('jobOutcome: a failure the Job reported', () => {
  const rows: [string, Partial<Finished>, TakeOutcome][] = [
    [
      'a file it did not write is at the path → object exists, nothing replaced',
      { report: failed('ObjectExists', 'a file this snapshot did not write is there') },
      { kind: 'object-exists', message: 'a file this snapshot did not write is there' },
    ],
    [
      'the volume is full',
      { report: failed('VolumeFull', 'no space left on device') },
      { kind: 'volume-refused', reason: 'VolumeFull', message: 'no space left on device' },
    ],
    [
      'the volume is read-only',
      { report: failed('VolumeReadOnly', 'EROFS') },
      { kind: 'volume-refused', reason: 'VolumeReadOnly', message: 'EROFS' },
    ],
    [
      'no member served a snapshot',
      { report: failed('EtcdUnavailable', 'demo-0: connection refused') },
      { kind: 'etcd-unavailable', message: 'demo-0: connection refused' },
    ],
    [
      'the file read back differs → verification failed, the file kept where the Job wrote it',
      { report: failed('ChecksumMismatch', 'read back 12 bytes') },
      {
        kind: 'verify-failed',
        source: JOB,
        artifact: { uri: 'pvc://backups/etcd/daily/nightly-0f1e2d3c.db' },
        reason: 'ChecksumMismatch',
        message: 'verification failed: read back 12 bytes',
      },
    ],
    [
      "etcd's integrity hash fails → verification failed",
      { report: failed('IntegrityCheckFailed', 'hash differs') },
      {
        kind: 'verify-failed',
        source: JOB,
        artifact: { uri: 'pvc://backups/etcd/daily/nightly-0f1e2d3c.db' },
        reason: 'IntegrityCheckFailed',
        message: 'verification failed: hash differs',
      },
    ],
    [
      'the step failed and the Job hit its deadline → timed out',
      { jobReason: 'DeadlineExceeded', report: failed('SaveFailed', 'killed') },
      { kind: 'timed-out', message: 'killed' },
    ],
    [
      'the step failed otherwise → an error naming the Job',
      { jobReason: 'BackoffLimitExceeded', report: failed('SaveFailed', 'mkdir: permission denied') },
      { kind: 'error', message: `Job ${JOB}: mkdir: permission denied` },
    ],
    [
      'a crash left a log tail → an error naming the Job and quoting the tail',
      { report: 'panic: boom' },
      { kind: 'error', message: `Job ${JOB}: the snapshot step failed: panic: boom` },
    ],
  ];
  for (const [name, over, outcome] of rows) {
    it(name, () => assert.deepEqual(jobOutcome(snapshot('etcd/daily'), job(over)), outcome));
  }

  it('with no subPath, the kept file is at the claim’s root', () => {
    const outcome = jobOutcome(snapshot(), job({ report: failed('ChecksumMismatch', 'differs') }));
    assert.equal(outcome.kind, 'verify-failed');
    assert.equal(
      outcome.kind === 'verify-failed' && outcome.artifact.uri,
      'pvc://backups/nightly-0f1e2d3c.db',
    );
  });
});
