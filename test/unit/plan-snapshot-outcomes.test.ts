// Each outcome of a snapshot attempt and each release of a deleted EtcdSnapshot, as the whole plan a
// person's tools see: the step and its reason (the invocation's summary), whether status is written,
// the phase, the Ready condition and the Events with their type. Written against the mutants
// StrykerJS left alive in shared/plan/snapshot/plan.ts (step reasons, statusChanged, Event types).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdSnapshot, EtcdSnapshotStatus } from '../../shared/api/etcd-snapshot.ts';
import { findCondition } from '../../shared/conditions.ts';
import { planSnapshot } from '../../shared/plan/snapshot/plan.ts';
import { planOutcome } from '../../shared/plan/snapshot/outcome.ts';
import type { SnapshotPlan } from '../../shared/plan/snapshot/types.ts';
import type { TakeOutcome } from '../../shared/plan/snapshot/types.ts';

const DONE = new Date('2026-11-22T10:02:05Z');
const URI = 's3://etcd/prod/prod/demo/before-upgrade-snap-uid.db';
const S3 = {
  endpoint: 'http://minio.backup.svc:9000',
  bucket: 'etcd',
  key: 'prod/',
  credentialsSecretRef: { name: 'backup-creds' },
};

function snapshot(status: EtcdSnapshotStatus, extra: Partial<EtcdSnapshot['metadata']> = {}, retain = false) {
  const s: EtcdSnapshot = {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: {
      name: 'before-upgrade',
      namespace: 'prod',
      uid: 'snap-uid',
      creationTimestamp: new Date('2026-11-22T10:00:00Z'),
      ...extra,
    },
    spec: {
      clusterRef: { name: 'demo' },
      destination: { s3: S3 },
      deletionPolicy: retain ? 'Retain' : 'Delete',
    },
    status,
  };
  return s;
}
const claimed = snapshot({ phase: 'Started', startTime: '2026-11-22T10:02:00Z' });
const summary = (plan: SnapshotPlan) => {
  const r = findCondition(plan.status.conditions, 'Ready');
  return {
    step: plan.step,
    phase: plan.status.phase,
    ready: [r?.status, r?.reason, r?.message],
    statusChanged: plan.statusChanged,
    events: plan.events,
  };
};
const artifact = { uri: URI, sizeBytes: 2048, checksum: 'sha256:ab', revision: 9, etag: '"e1"' };

describe('planOutcome: the whole plan for each outcome', () => {
  it('verified', () => {
    const message = `snapshot of EtcdCluster demo at revision 9 (2.0 KiB) stored at ${URI}, taken from member demo-1, verified`;
    const plan = planOutcome(
      claimed,
      { kind: 'verified', source: 'demo-1', artifact, verification: 'all checks pass' },
      DONE,
    );
    assert.deepEqual(summary(plan), {
      step: { kind: 'nothing', reason: `EtcdSnapshot before-upgrade: ${message}` },
      phase: 'Complete',
      ready: ['True', 'Complete', message],
      statusChanged: true,
      events: [{ type: 'Normal', reason: 'SnapshotComplete', message }],
    });
    const v = findCondition(plan.status.conditions, 'Verified');
    assert.deepEqual([v?.status, v?.reason, v?.message], ['True', 'ReadBackVerified', 'all checks pass']);
  });

  it('verification failed: Failed, the object kept for inspection', () => {
    const message = `read back differs; the object is kept at ${URI} for inspection; create a new EtcdSnapshot to try again`;
    const plan = planOutcome(
      claimed,
      {
        kind: 'verify-failed',
        source: 'demo-1',
        artifact,
        reason: 'ChecksumMismatch',
        message: 'read back differs',
      },
      DONE,
    );
    assert.deepEqual(summary(plan), {
      step: { kind: 'fail', reason: `EtcdSnapshot before-upgrade: ${message}` },
      phase: 'Failed',
      ready: ['False', 'VerificationFailed', message],
      statusChanged: true,
      events: [{ type: 'Warning', reason: 'SnapshotVerificationFailed', message }],
    });
    assert.equal(plan.status.completionTime, '2026-11-22T10:02:05Z');
  });

  const finals: [TakeOutcome, string, string][] = [
    [
      { kind: 'object-exists', message: 'an object is at the key' },
      'ObjectExists',
      'an object is at the key; then create a new EtcdSnapshot',
    ],
    [
      { kind: 'endpoint-refused', reason: 'EndpointRefused', message: 'link-local' },
      'EndpointRefused',
      'link-local; then create a new EtcdSnapshot',
    ],
    [
      { kind: 'credentials-invalid', message: 'the Secret lost its keys' },
      'CredentialsInvalid',
      'the Secret lost its keys',
    ],
    [
      { kind: 's3-refused', code: 'NoSuchBucket', message: 'no bucket' },
      'UploadRefused',
      `S3 refused the upload to ${URI}: NoSuchBucket: no bucket; create bucket etcd at http://minio.backup.svc:9000 or fix destination.s3.bucket, then create a new EtcdSnapshot`,
    ],
  ];
  for (const [outcome, reason, message] of finals) {
    it(`${outcome.kind}: Failed, with a Warning`, () => {
      const plan = planOutcome(claimed, outcome, DONE);
      assert.deepEqual(summary(plan), {
        step: { kind: 'fail', reason: `EtcdSnapshot before-upgrade: ${message}` },
        phase: 'Failed',
        ready: ['False', reason, message],
        statusChanged: true,
        events: [{ type: 'Warning', reason: 'SnapshotFailed', message }],
      });
      assert.equal(plan.status.completionTime, '2026-11-22T10:02:05Z');
    });
  }

  const retried: [TakeOutcome['kind'], string][] = [
    ['etcd-unavailable', 'could not stream a snapshot from etcd'],
    ['s3-unavailable', 'could not upload to the object store'],
    ['timed-out', 'did not finish in time'],
    ['error', 'failed'],
  ];
  for (const [kind, what] of retried) {
    it(`${kind}: back to Pending, retried, with a Warning`, () => {
      const plan = planOutcome(claimed, { kind, message: 'boom' } as TakeOutcome, DONE);
      const message = `the attempt started at 2026-11-22T10:02:00Z ${what}: boom; retrying`;
      assert.deepEqual(summary(plan), {
        step: { kind: 'wait', reason: `EtcdSnapshot before-upgrade: ${message}` },
        phase: 'Pending',
        ready: ['False', 'AttemptFailed', message],
        statusChanged: true,
        events: [{ type: 'Warning', reason: 'SnapshotAttemptFailed', message }],
      });
      assert.equal(plan.status.startTime, '2026-11-22T10:02:00Z', 'kept: the retry delay counts from it');
    });
  }
});

describe('release of an EtcdSnapshot being deleted', () => {
  const deleting = (status: EtcdSnapshotStatus, finalizers = ['etcdfn.io/snapshot-object'], retain = false) =>
    planSnapshot({
      now: DONE,
      snapshot: snapshot(status, { deletionTimestamp: DONE, finalizers }, retain),
      readyPods: [],
      timings: { attemptTimeoutMs: 1, staleAfterMs: 2, retryDelayMs: 3, deadlineMs: 4 },
    });
  const released = (plan: SnapshotPlan) => ({
    step: plan.step,
    statusChanged: plan.statusChanged,
    events: plan.events,
  });

  it('without our finalizer: nothing to do', () => {
    assert.deepEqual(released(deleting({}, [])), {
      step: { kind: 'nothing', reason: 'EtcdSnapshot before-upgrade is being deleted' },
      statusChanged: false,
      events: [],
    });
  });
  it('Retain: the object is kept', () => {
    assert.deepEqual(released(deleting({ phase: 'Complete', artifact }, undefined, true)).step, {
      kind: 'release',
      reason: 'EtcdSnapshot before-upgrade: deletionPolicy Retain: the stored object is kept',
    });
  });
  it('never attempted: nothing to delete', () => {
    assert.deepEqual(released(deleting({})), {
      step: {
        kind: 'release',
        reason: 'EtcdSnapshot before-upgrade: no attempt was ever made: nothing to delete',
      },
      statusChanged: false,
      events: [],
    });
  });
  it('status records another key: nothing deleted', () => {
    assert.deepEqual(
      released(deleting({ phase: 'Complete', artifact: { ...artifact, uri: 's3://etcd/other.db' } })).step,
      {
        kind: 'release',
        reason: `EtcdSnapshot before-upgrade: status records s3://etcd/other.db, not ${URI}: no object is deleted`,
      },
    );
  });
  it('its own object, only if this snapshot wrote it (ETag checked)', () => {
    const step = released(deleting({ phase: 'Complete', artifact })).step;
    assert.equal(step.kind, 'release');
    assert.equal(
      step.reason,
      `EtcdSnapshot before-upgrade: deletionPolicy Delete: deleting ${URI} (only if this snapshot wrote it)`,
    );
    assert.equal(step.kind === 'release' && step.object?.etag, '"e1"');
  });
});
