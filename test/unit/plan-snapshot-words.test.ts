// What a person reads on an EtcdSnapshot, word for word, where plan-snapshot.test.ts checks less:
// the size of a verified snapshot in B, KiB, MiB or GiB; what to do for each S3 refusal code; a
// destination with neither s3 nor pvc. Written against the mutants StrykerJS left alive in
// shared/plan/snapshot/plan.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { findCondition } from '../../shared/conditions.ts';
import { planSnapshot } from '../../shared/plan/snapshot/plan.ts';
import { planOutcome } from '../../shared/plan/snapshot/outcome.ts';
import type { SnapshotPlan } from '../../shared/plan/snapshot/types.ts';

const NOW = new Date('2026-11-22T10:02:00Z');
const DONE = new Date('2026-11-22T10:02:05Z');
const URI = 's3://etcd/prod/prod/demo/before-upgrade-snap-uid.db';

function snapshot(destination: EtcdSnapshot['spec']['destination']): EtcdSnapshot {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: {
      name: 'before-upgrade',
      namespace: 'prod',
      uid: 'snap-uid',
      creationTimestamp: new Date('2026-11-22T10:00:00Z'),
    },
    spec: { clusterRef: { name: 'demo' }, destination },
    status: { phase: 'Started', startTime: '2026-11-22T10:02:00Z' },
  };
}
const claimed = snapshot({
  s3: {
    endpoint: 'http://minio.backup.svc:9000',
    bucket: 'etcd',
    key: 'prod/',
    credentialsSecretRef: { name: 'backup-creds' },
  },
});
const ready = (plan: SnapshotPlan) => {
  const c = findCondition(plan.status.conditions, 'Ready');
  return [c?.status, c?.reason, c?.message];
};

describe('the size of a verified snapshot', () => {
  const rows: [number, string][] = [
    [0, '0 B'],
    [1023, '1023 B'],
    [1024, '1.0 KiB'],
    [1536, '1.5 KiB'],
    [2_621_440, '2.5 MiB'],
    [3 * 1024 ** 3, '3.0 GiB'],
    [5 * 1024 ** 5, '5120.0 TiB'],
  ];
  for (const [bytes, words] of rows) {
    it(`${bytes} bytes reads ${words}`, () => {
      const plan = planOutcome(
        claimed,
        {
          kind: 'verified',
          source: 'demo-1',
          artifact: { uri: URI, sizeBytes: bytes, checksum: 'sha256:ab', revision: 7, etag: '"e"' },
          verification: 'read back: all checks pass',
        },
        DONE,
      );
      assert.deepEqual(ready(plan), [
        'True',
        'Complete',
        `snapshot of EtcdCluster demo at revision 7 (${words}) stored at ${URI}, taken from member demo-1, verified`,
      ]);
    });
  }
});

describe('S3 refusals: what to do, per code', () => {
  const rows: [string, string][] = [
    [
      'HTTP403',
      `check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in Secret backup-creds, and that the key may s3:GetObject and s3:PutObject on ${URI}`,
    ],
    ['PermanentRedirect', 'set destination.s3.region (or the endpoint) to the bucket’s region'],
    ['AuthorizationHeaderMalformed', 'set destination.s3.region to the bucket’s region'],
  ];
  for (const [code, hint] of rows) {
    it(code, () => {
      const plan = planOutcome(claimed, { kind: 's3-refused', code, message: 'no' }, DONE);
      const message = `S3 refused the upload to ${URI}: ${code}: no; ${hint}, then create a new EtcdSnapshot`;
      assert.deepEqual(ready(plan), ['False', 'UploadRefused', message]);
      assert.deepEqual(plan.events, [{ type: 'Warning', reason: 'SnapshotFailed', message }]);
    });
  }
});

describe('a destination with neither s3 nor pvc', () => {
  it('fails at once and says what to set', () => {
    const plan = planSnapshot({
      now: NOW,
      snapshot: { ...snapshot({}), status: {} },
      readyPods: [],
      timings: { attemptTimeoutMs: 1, staleAfterMs: 2, retryDelayMs: 3, deadlineMs: 3_600_000 },
    });
    const message = 'destination has neither s3 nor pvc; set one of them';
    assert.deepEqual(plan.step, { kind: 'fail', reason: `EtcdSnapshot before-upgrade: ${message}` });
    assert.equal(plan.status.phase, 'Failed');
    assert.deepEqual(ready(plan), ['False', 'InvalidDestination', message]);
  });
});
