// run-snapshot's I/O for an EtcdSnapshotSchedule (shared/reconcile/schedule.ts, snapshot-prune.ts)
// over an in-memory Kubernetes (test/support/fake-kube.ts) and a small S3 on loopback
// (test/support/fake-s3.ts): the run claimed in status before its EtcdSnapshot is created, and
// retention deleting the S3 object before the EtcdSnapshot (by uid), only an object this snapshot
// wrote (its ETag), never a snapshot the schedule does not own, keeping the EtcdSnapshot whenever
// its object could not be deleted. The decisions are plan-schedule*.test.ts's; real S3 and an API
// server are the e2e snapshot-schedule tests'.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import type { EtcdSnapshotSchedule } from '../../shared/api/etcd-snapshot-schedule.ts';
import { findCondition } from '../../shared/conditions.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { runSnapshotName } from '../../shared/plan/schedule/run.ts';
import { reconcileSchedule } from '../../shared/reconcile/schedule.ts';
import { parseAllowList } from '../../shared/s3/endpoint-policy.ts';
import { ownerOf, snapshotTarget } from '../../shared/s3/location.ts';
import { scheduleTimingsFromEnv } from '../../shared/runtime/timings.ts';
import { pvcUri, snapshotFilePath } from '../../shared/snapshot-file/result.ts';
import { crashAt } from '../support/crash-at.ts';
import { FakeKube, fakeContext } from '../support/fake-kube.ts';
import { snapshotDeleteJobName } from '../../shared/builders/snapshot-job.ts';
import { DELETE_CONTAINER, deleteMessage } from '../../shared/snapshot-file/result.ts';
import { FakeS3, snapshotBytes } from '../support/fake-s3.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

process.env.LOG_LEVEL ??= 'silent';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const CREATED = new Date('2026-11-19T08:00:30Z');
const DUE = new Date('2026-11-23T03:00:00Z');
const NOW = new Date('2026-11-23T03:00:10Z');
const LATER = new Date('2026-11-23T04:00:00Z');
const REF = { namespace: 'prod', name: 'nightly' };
const ALLOW = parseAllowList('http://127.0.0.0/8').entries;
const b64 = (s: string) => Buffer.from(s).toString('base64');

let s3: FakeS3;
before(async () => {
  s3 = await FakeS3.start();
});
after(async () => s3.stop());
beforeEach(() => s3.reset());

const destination = () => ({
  s3: { endpoint: s3.endpoint, bucket: 'etcd', key: 'prod/', credentialsSecretRef: { name: 'backup-creds' } },
});

function schedule(keepLast = 2): EtcdSnapshotSchedule & KubeObject {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshotSchedule',
    metadata: {
      name: 'nightly',
      namespace: 'prod',
      uid: 'sched-uid',
      generation: 2,
      resourceVersion: '10',
      creationTimestamp: CREATED,
    },
    spec: {
      clusterRef: { name: 'demo' },
      schedule: '0 3 * * *',
      destination: destination(),
      retention: { keepLast },
      suspend: false,
    },
  };
}

const cluster = etcdCluster({ metadata: { uid: 'cluster-uid' } });
const secret = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'backup-creds', namespace: 'prod' },
  data: { AWS_ACCESS_KEY_ID: b64('AKID'), AWS_SECRET_ACCESS_KEY: b64('secret') },
};

/** The schedule's snapshot of the run on `day` (03:00), in `phase`; Complete ones stored in S3. */
function snap(day: string, phase: 'Complete' | 'Failed' = 'Complete', owner = 'sched-uid') {
  const run = new Date(`${day}T03:00:00Z`);
  const done = `${day}T03:00:20Z`;
  const s = {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: {
      name: runSnapshotName('nightly', run),
      namespace: 'prod',
      uid: `uid-${day}`,
      creationTimestamp: run,
      annotations: { 'etcdfn.io/scheduled-time': run.toISOString().replace('.000', '') },
      labels: { 'etcdfn.io/schedule': 'nightly' },
      ownerReferences: [
        { apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdSnapshotSchedule', name: 'nightly', uid: owner },
      ],
    },
    spec: { clusterRef: { name: 'demo' }, destination: destination() },
    status: { phase, completionTime: done },
  } as EtcdSnapshot & KubeObject;
  if (phase === 'Complete') {
    const target = snapshotTarget(destination().s3, ownerOf(s));
    const stored = s3.put(`etcd/${target.key}`, snapshotBytes(), s.metadata.uid);
    s.status = {
      ...s.status,
      artifact: { uri: target.uri, sizeBytes: 1056, etag: stored.etag },
      conditions: [
        {
          type: 'Verified',
          status: 'True',
          reason: 'ReadBackVerified',
          message: 'ok',
          lastTransitionTime: done,
        },
      ],
    };
  } else {
    s.status = {
      ...s.status,
      conditions: [
        { type: 'Ready', status: 'False', reason: 'UploadRefused', message: 'no', lastTransitionTime: done },
      ],
    };
  }
  return s;
}

function world(objects: unknown[], now = NOW) {
  const kube = new FakeKube(objects);
  const ctx = fakeContext(kube, {}, { s3AllowList: ALLOW, schedule: scheduleTimingsFromEnv({}) }, now);
  return { kube, run: () => reconcileSchedule(ctx, REF) };
}

const storedSchedule = (kube: FakeKube) =>
  kube.stored<EtcdSnapshotSchedule & KubeObject>('EtcdSnapshotSchedule', 'prod', 'nightly');
const condition = (kube: FakeKube, type: string) =>
  findCondition(storedSchedule(kube)?.status?.conditions, type);
const summaryOf = (o: { result: string; summary?: string; reason?: string }) =>
  o.result === 'done' ? o.summary : o.reason;
const runName = runSnapshotName('nightly', DUE);
const keyOf = (s: EtcdSnapshot) => `etcd/${snapshotTarget(destination().s3, ownerOf(s)).key}`;

describe('run-snapshot for a schedule: a run falling due', () => {
  it('claims the run in status, then creates its EtcdSnapshot owned by the schedule, and says so', async () => {
    const w = world([schedule(), cluster]);
    const outcome = await w.run();
    assert.equal(outcome.result, 'done');
    assert.match(summaryOf(outcome) ?? '', new RegExp(`create EtcdSnapshot ${runName}; created$`));
    assert.deepEqual(
      w.kube.writes.filter(c => !c.includes(' Event ')),
      ['replaceStatus EtcdSnapshotSchedule prod/nightly', `create EtcdSnapshot prod/${runName}`],
    );
    assert.deepEqual(storedSchedule(w.kube)?.status?.active, [runName]);
    const created = w.kube.stored<EtcdSnapshot & KubeObject>('EtcdSnapshot', 'prod', runName);
    assert.equal(created?.metadata.ownerReferences?.[0]?.uid, 'sched-uid');
    assert.deepEqual(w.kube.events, [
      `Normal SnapshotScheduled: created EtcdSnapshot ${runName} for the run at 2026-11-23T03:00:00Z`,
    ]);
    assert.equal(
      (w.kube.created.find(o => o.kind === 'Event') as { reportingInstance?: string }).reportingInstance,
      'run-snapshot',
    );
  });

  it('the snapshot already there (a duplicate invocation): said', async () => {
    const w = world([schedule(), cluster]);
    w.kube.script('create', 'EtcdSnapshot', { kind: 'already-exists' });
    assert.match(summaryOf(await w.run()) ?? '', /; it exists already$/);
  });

  it('the snapshot refused: a Warning on the schedule with the API server’s words', async () => {
    const w = world([schedule(), cluster]);
    w.kube.script('create', 'EtcdSnapshot', { kind: 'invalid', message: 'quota exceeded' });
    const outcome = await w.run();
    const message = `EtcdSnapshot ${runName} was refused by the API server: quota exceeded`;
    assert.match(summaryOf(outcome) ?? '', new RegExp(`; ${message}$`));
    assert.deepEqual(w.kube.events.at(-1), `Warning SnapshotCreateFailed: ${message}`);
    assert.equal(
      (w.kube.created.filter(o => o.kind === 'Event').at(-1) as { reportingInstance?: string })
        .reportingInstance,
      'run-snapshot',
    );
  });

  it('the claim lost to another invocation: nothing created', async () => {
    const w = world([schedule(), cluster]);
    w.kube.script('replaceStatus', 'EtcdSnapshotSchedule', { kind: 'conflict', message: 'changed' });
    assert.deepEqual(await w.run(), {
      result: 'done',
      summary: 'EtcdSnapshotSchedule nightly changed meanwhile (another invocation has it): changed',
    });
    assert.equal(w.kube.calls.filter(c => c.startsWith('create')).length, 0);
  });

  it('the schedule gone before the claim: nothing created', async () => {
    const w = world([schedule(), cluster]);
    w.kube.script('replaceStatus', 'EtcdSnapshotSchedule', { kind: 'not-found' });
    assert.deepEqual(await w.run(), { result: 'done', summary: 'EtcdSnapshotSchedule prod/nightly is gone' });
    assert.equal(w.kube.calls.filter(c => c.startsWith('create')).length, 0);
  });

  it('the claim refused: thrown, nothing created', async () => {
    const w = world([schedule(), cluster]);
    w.kube.script('replaceStatus', 'EtcdSnapshotSchedule', { kind: 'invalid', message: 'bad' });
    await assert.rejects(w.run(), /status of EtcdSnapshotSchedule nightly refused: bad/);
    assert.equal(w.kube.calls.filter(c => c.startsWith('create')).length, 0);
  });

  it('not found', async () => {
    const w = world([]);
    assert.deepEqual(await w.run(), {
      result: 'done',
      summary: 'EtcdSnapshotSchedule prod/nightly not found',
    });
  });

  it('invoked again at the same time: its run not made twice; once its status says so, nothing written', async () => {
    const w = world([schedule(), cluster]);
    await w.run();
    await w.run();
    assert.equal(w.kube.calls.filter(c => c.startsWith('create EtcdSnapshot ')).length, 1);
    const before = w.kube.writes.length;
    const outcome = await w.run();
    assert.equal(outcome.result, 'done');
    assert.deepEqual(w.kube.writes.slice(before), []);
  });
});

describe('run-snapshot for a schedule: retention', () => {
  const three = () => [snap('2026-11-20'), snap('2026-11-21'), snap('2026-11-22')];

  it('deletes the oldest beyond keepLast: its object first (If-Match its ETag), then the EtcdSnapshot by uid', async () => {
    const [oldest, ...kept] = three();
    const w = world([schedule(), cluster, secret, oldest, ...kept], LATER);
    const outcome = await w.run();
    assert.equal(s3.objects.has(keyOf(oldest)), false, 'object deleted');
    for (const s of kept) assert.ok(s3.objects.has(keyOf(s)), 'the newer ones kept');
    assert.deepEqual(
      w.kube.deletes.map(d => [d.ref.name, d.options]),
      [[oldest.metadata.name, { uid: 'uid-2026-11-20' }]],
    );
    assert.equal(w.kube.stored('EtcdSnapshot', 'prod', oldest.metadata.name!), undefined);
    const uri = snapshotTarget(destination().s3, ownerOf(oldest)).uri;
    assert.ok(
      w.kube.events.includes(
        `Normal SnapshotPruned: deleted EtcdSnapshot ${oldest.metadata.name} and ${uri}: beyond retention.keepLast 2`,
      ),
      w.kube.events.join('\n'),
    );
    assert.match(summaryOf(outcome) ?? '', /; pruned 1$/);
    assert.ok(
      w.kube.created
        .filter(o => o.kind === 'Event')
        .every(o => (o as { reportingInstance?: string }).reportingInstance === 'run-snapshot'),
    );
    assert.equal(condition(w.kube, 'Retention')?.status, 'True', 'retention recorded as applied');
  });

  it('the object deleted before the EtcdSnapshot, never after', async () => {
    const [oldest, ...kept] = three();
    const w = world([schedule(), cluster, secret, oldest, ...kept], LATER);
    let objectThereAtDelete: boolean | undefined;
    const kubeDelete = w.kube.delete;
    w.kube.delete = async (ref, options) => {
      objectThereAtDelete = s3.objects.has(keyOf(oldest));
      return kubeDelete(ref, options);
    };
    await w.run();
    assert.equal(objectThereAtDelete, false);
  });

  it('reads the Secret once for every snapshot it prunes', async () => {
    const snaps = [snap('2026-11-18'), snap('2026-11-19'), ...three()];
    const w = world([schedule(), cluster, secret, ...snaps], LATER);
    const outcome = await w.run();
    assert.match(summaryOf(outcome) ?? '', /; pruned 3$/);
    assert.equal(w.kube.calls.filter(c => c.startsWith('get Secret')).length, 1);
  });

  it('a snapshot another schedule (or none) owns is never touched', async () => {
    const foreign = [
      snap('2026-11-16', 'Complete', 'other-uid'),
      snap('2026-11-17', 'Complete', 'other-uid'),
    ];
    const w = world([schedule(), cluster, secret, ...foreign, ...three()], LATER);
    await w.run();
    for (const s of foreign) {
      assert.ok(s3.objects.has(keyOf(s)));
      assert.ok(w.kube.stored('EtcdSnapshot', 'prod', s.metadata.name!));
    }
  });

  it('an object replaced since (another ETag): kept and said, the EtcdSnapshot goes', async () => {
    const [oldest, ...kept] = three();
    const newer = s3.put(keyOf(oldest), Buffer.from('rewritten'), oldest.metadata.uid);
    const w = world([schedule(), cluster, secret, oldest, ...kept], LATER);
    await w.run();
    assert.deepEqual(s3.objects.get(keyOf(oldest)), newer);
    assert.equal(w.kube.stored('EtcdSnapshot', 'prod', oldest.metadata.name!), undefined);
    const pruned = w.kube.events.find(e => e.startsWith('Normal SnapshotPruned'));
    assert.match(
      pruned ?? '',
      new RegExp(
        `^Normal SnapshotPruned: deleted EtcdSnapshot ${oldest.metadata.name}: beyond retention.keepLast 2; .+`,
      ),
    );
  });

  it('an object already gone: the EtcdSnapshot goes, no object named', async () => {
    const [oldest, ...kept] = three();
    s3.objects.delete(keyOf(oldest));
    const w = world([schedule(), cluster, secret, oldest, ...kept], LATER);
    await w.run();
    assert.equal(w.kube.stored('EtcdSnapshot', 'prod', oldest.metadata.name!), undefined);
    assert.ok(
      w.kube.events.includes(
        `Normal SnapshotPruned: deleted EtcdSnapshot ${oldest.metadata.name}: beyond retention.keepLast 2`,
      ),
      w.kube.events.join('\n'),
    );
  });

  it('no Secret: the EtcdSnapshot and its object kept, RetentionFailed said and recorded', async () => {
    const [oldest, ...kept] = three();
    const w = world([schedule(), cluster, oldest, ...kept], LATER);
    const outcome = await w.run();
    assert.ok(s3.objects.has(keyOf(oldest)));
    assert.ok(w.kube.stored('EtcdSnapshot', 'prod', oldest.metadata.name!));
    assert.deepEqual(w.kube.deletes, []);
    assert.match(
      summaryOf(outcome) ?? '',
      /retention stopped: cannot delete s3:\/\/.* Secret backup-creds is missing/,
    );
    assert.ok(
      w.kube.events.some(e => e.startsWith('Warning RetentionFailed: cannot delete')),
      w.kube.events.join('\n'),
    );
    assert.equal(w.kube.events.filter(e => e.includes('SnapshotPruned')).length, 0);
    assert.match(JSON.stringify(storedSchedule(w.kube)?.status?.conditions), /cannot delete/);
  });

  it('S3 refusing the deletion: the EtcdSnapshot kept, s3:DeleteObject named', async () => {
    const [oldest, ...kept] = three();
    s3.fail('DELETE', 403, 'AccessDenied');
    const w = world([schedule(), cluster, secret, oldest, ...kept], LATER);
    const outcome = await w.run();
    assert.ok(w.kube.stored('EtcdSnapshot', 'prod', oldest.metadata.name!));
    assert.match(
      summaryOf(outcome) ?? '',
      /retention stopped: S3 refused to delete .*AccessDenied.*s3:DeleteObject/,
    );
  });

  it('the store failing: the EtcdSnapshot kept, retried every minute', async () => {
    const [oldest, ...kept] = three();
    for (let i = 0; i < 4; i++) s3.fail('DELETE', 503, 'ServiceUnavailable');
    const w = world([schedule(), cluster, secret, oldest, ...kept], LATER);
    const outcome = await w.run();
    assert.ok(w.kube.stored('EtcdSnapshot', 'prod', oldest.metadata.name!));
    assert.match(
      summaryOf(outcome) ?? '',
      /retention stopped: could not reach the store to delete .*; retried every minute/,
    );
  });

  it('the RetentionFailed Warning only when its status write went through', async () => {
    const [oldest, ...kept] = three();
    const w = world([schedule(), cluster, oldest, ...kept], LATER);
    w.kube.script('replaceStatus', 'EtcdSnapshotSchedule', null, { kind: 'conflict', message: 'x' });
    await w.run();
    assert.equal(w.kube.events.filter(e => e.includes('RetentionFailed')).length, 0);
  });

  it('a Failed run older than a success: deleted without asking the store', async () => {
    const failed = snap('2026-11-21', 'Failed');
    const w = world([schedule(), cluster, secret, snap('2026-11-20'), failed, snap('2026-11-22')], LATER);
    await w.run();
    assert.equal(w.kube.stored('EtcdSnapshot', 'prod', failed.metadata.name!), undefined);
    assert.deepEqual(s3.requests, [], 'not even a HEAD: a Failed run stored nothing');
    assert.ok(
      w.kube.events.some(e =>
        e.startsWith(`Normal SnapshotPruned: deleted EtcdSnapshot ${failed.metadata.name}: Failed`),
      ),
    );
  });
});

describe('run-snapshot for a schedule: retention of files on a PVC', () => {
  const onPvc = (day: string) => {
    const s = snap(day);
    const uri = pvcUri(
      'backups',
      snapshotFilePath(undefined, { name: s.metadata.name ?? '', uid: s.metadata.uid ?? '' }),
    );
    return {
      ...s,
      spec: { ...s.spec, destination: { pvc: { claimName: 'backups' } } },
      status: {
        ...s.status,
        artifact: { uri, sizeBytes: 1056, checksum: `sha256:${'a'.repeat(64)}` },
      },
    } as EtcdSnapshot & KubeObject;
  };

  it('a Job removes the file; the EtcdSnapshot waits for it, retention not yet recorded', async () => {
    const pvcSchedule = {
      ...schedule(),
      spec: { ...schedule().spec, destination: { pvc: { claimName: 'backups' } } },
    };
    const snaps = ['2026-11-20', '2026-11-21', '2026-11-22'].map(onPvc);
    const w = world([pvcSchedule, cluster, ...snaps], LATER);
    const outcome = await w.run();
    const jobs = w.kube.created.filter(o => o.kind === 'Job');
    assert.equal(jobs.length, 1, summaryOf(outcome) ?? '');
    assert.match(summaryOf(outcome) ?? '', /waiting: Job .* removes its file from claim backups$/);
    assert.equal(
      w.kube.calls.filter(c => c.startsWith('replaceStatus')).length,
      1,
      'the run’s status only: retention is not recorded while a file is being removed',
    );
    assert.ok(w.kube.stored('EtcdSnapshot', 'prod', snaps[0].metadata.name!), 'kept until the Job reports');
    assert.deepEqual(w.kube.deletes, []);
  });

  const deleteJob = (snap: EtcdSnapshot & KubeObject, report: string | undefined, succeeded = true) => {
    const name = snapshotDeleteJobName(snap);
    return [
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: {
          name,
          namespace: 'prod',
          uid: `job-${name}`,
          ownerReferences: [
            {
              apiVersion: 'etcdfn.io/v1alpha1',
              kind: 'EtcdSnapshot',
              name: snap.metadata.name,
              uid: snap.metadata.uid,
            },
          ],
        },
        status: {
          conditions: [
            {
              type: succeeded ? 'Complete' : 'Failed',
              status: 'True',
              reason: succeeded ? undefined : 'BackoffLimitExceeded',
            },
          ],
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${name}-p`,
          namespace: 'prod',
          labels: { 'batch.kubernetes.io/job-name': name },
          ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid: `job-${name}` }],
        },
        status: {
          containerStatuses: [
            {
              name: DELETE_CONTAINER,
              state: { terminated: { exitCode: 0, ...(report && { message: report }), finishedAt: LATER } },
            },
          ],
        },
      },
    ];
  };

  it('its Job reported the file deleted: the EtcdSnapshot goes, the Event names the file', async () => {
    const pvcSchedule = {
      ...schedule(),
      spec: { ...schedule().spec, destination: { pvc: { claimName: 'backups' } } },
    };
    const snaps = ['2026-11-20', '2026-11-21', '2026-11-22'].map(onPvc);
    const w = world(
      [
        pvcSchedule,
        cluster,
        ...snaps,
        ...deleteJob(snaps[0], deleteMessage({ kind: 'deleted', message: 'removed x.db' })),
      ],
      LATER,
    );
    const outcome = await w.run();
    assert.match(summaryOf(outcome) ?? '', /pruned 1$/);
    assert.equal(w.kube.stored('EtcdSnapshot', 'prod', snaps[0].metadata.name!), undefined);
    assert.ok(
      w.kube.events.includes(
        `Normal SnapshotPruned: deleted EtcdSnapshot ${snaps[0].metadata.name} and pvc://backups: removed x.db: beyond retention.keepLast 2`,
      ),
      w.kube.events.join('\n'),
    );
  });

  it('its Job reported the file kept: the EtcdSnapshot goes, the reason said', async () => {
    const pvcSchedule = {
      ...schedule(),
      spec: { ...schedule().spec, destination: { pvc: { claimName: 'backups' } } },
    };
    const snaps = ['2026-11-20', '2026-11-21', '2026-11-22'].map(onPvc);
    const w = world(
      [
        pvcSchedule,
        cluster,
        ...snaps,
        ...deleteJob(snaps[0], deleteMessage({ kind: 'kept', message: 'changed since written' })),
      ],
      LATER,
    );
    await w.run();
    assert.equal(w.kube.stored('EtcdSnapshot', 'prod', snaps[0].metadata.name!), undefined);
    assert.ok(
      w.kube.events.includes(
        `Normal SnapshotPruned: deleted EtcdSnapshot ${snaps[0].metadata.name}: beyond retention.keepLast 2; changed since written`,
      ),
      w.kube.events.join('\n'),
    );
  });

  it('its Job failed without a report: a problem, the EtcdSnapshot kept', async () => {
    const pvcSchedule = {
      ...schedule(),
      spec: { ...schedule().spec, destination: { pvc: { claimName: 'backups' } } },
    };
    const snaps = ['2026-11-20', '2026-11-21', '2026-11-22'].map(onPvc);
    const w = world([pvcSchedule, cluster, ...snaps, ...deleteJob(snaps[0], undefined, false)], LATER);
    const outcome = await w.run();
    assert.match(summaryOf(outcome) ?? '', /retention stopped: Job .* failed \(BackoffLimitExceeded\)/);
    assert.ok(w.kube.stored('EtcdSnapshot', 'prod', snaps[0].metadata.name!));
  });

  it('after the file was pruned, a crash: the EtcdSnapshot still there', async () => {
    const pvcSchedule = {
      ...schedule(),
      spec: { ...schedule().spec, destination: { pvc: { claimName: 'backups' } } },
    };
    const snaps = ['2026-11-20', '2026-11-21', '2026-11-22'].map(onPvc);
    const w = world(
      [
        pvcSchedule,
        cluster,
        ...snaps,
        ...deleteJob(snaps[0], deleteMessage({ kind: 'deleted', message: 'removed' })),
      ],
      LATER,
    );
    assert.equal(await crashAt('schedule:file-pruned', w.run), 'crashed');
    assert.ok(w.kube.stored('EtcdSnapshot', 'prod', snaps[0].metadata.name!));
    const gone = world(
      [
        pvcSchedule,
        cluster,
        ...snaps,
        ...deleteJob(snaps[0], deleteMessage({ kind: 'gone', message: 'not there' })),
      ],
      LATER,
    );
    assert.notEqual(await crashAt('schedule:file-pruned', gone.run), 'crashed');
  });

  it('the Job refused: a problem, the EtcdSnapshot kept', async () => {
    const pvcSchedule = {
      ...schedule(),
      spec: { ...schedule().spec, destination: { pvc: { claimName: 'backups' } } },
    };
    const snaps = ['2026-11-20', '2026-11-21', '2026-11-22'].map(onPvc);
    const w = world([pvcSchedule, cluster, ...snaps], LATER);
    w.kube.script('create', 'Job', { kind: 'invalid', message: 'forbidden' });
    const outcome = await w.run();
    assert.match(summaryOf(outcome) ?? '', /retention stopped: Job .* refused: forbidden/);
    assert.ok(w.kube.stored('EtcdSnapshot', 'prod', snaps[0].metadata.name!));
  });
});

describe('run-snapshot for a schedule: a crash just after each step', () => {
  it('after the claim: no EtcdSnapshot yet; the next invocation creates the claimed run', async () => {
    const w = world([schedule(), cluster]);
    assert.equal(await crashAt('schedule:claimed', w.run), 'crashed');
    assert.deepEqual(storedSchedule(w.kube)?.status?.active, [runName]);
    assert.equal(w.kube.stored('EtcdSnapshot', 'prod', runName), undefined);
    await w.run();
    assert.ok(w.kube.stored('EtcdSnapshot', 'prod', runName));
  });

  it('after the EtcdSnapshot was created: there; one that already existed is no crash point', async () => {
    const w = world([schedule(), cluster]);
    assert.equal(await crashAt('schedule:snapshot-created', w.run), 'crashed');
    assert.ok(w.kube.stored('EtcdSnapshot', 'prod', runName));
    const again = world([schedule(), cluster]);
    again.kube.script('create', 'EtcdSnapshot', { kind: 'already-exists' });
    assert.notEqual(await crashAt('schedule:snapshot-created', again.run), 'crashed');
  });

  it('after an object was pruned: the object gone, its EtcdSnapshot still there (deleted again next time)', async () => {
    const [oldest, ...kept] = [snap('2026-11-20'), snap('2026-11-21'), snap('2026-11-22')];
    const w = world([schedule(), cluster, secret, oldest, ...kept], LATER);
    assert.equal(await crashAt('schedule:object-pruned', w.run), 'crashed');
    assert.equal(s3.objects.has(keyOf(oldest)), false);
    assert.ok(w.kube.stored('EtcdSnapshot', 'prod', oldest.metadata.name!));
    await w.run();
    assert.equal(w.kube.stored('EtcdSnapshot', 'prod', oldest.metadata.name!), undefined);
  });

  it('an object already gone is no crash point', async () => {
    const [oldest, ...kept] = [snap('2026-11-20'), snap('2026-11-21'), snap('2026-11-22')];
    s3.objects.delete(keyOf(oldest));
    const w = world([schedule(), cluster, secret, oldest, ...kept], LATER);
    assert.notEqual(await crashAt('schedule:object-pruned', w.run), 'crashed');
  });
});

describe('run-snapshot for a schedule: retention, against what could go wrong', () => {
  it('whatever order the API server lists them in, each deletion acts on its own snapshot', async () => {
    const [oldest, ...kept] = [snap('2026-11-20'), snap('2026-11-21'), snap('2026-11-22')];
    const w = world([schedule(), cluster, secret, ...kept.reverse(), oldest], LATER);
    await w.run();
    assert.equal(s3.objects.has(keyOf(oldest)), false, 'the oldest’s object deleted');
    for (const s of kept) assert.ok(s3.objects.has(keyOf(s)));
    assert.equal(w.kube.stored('EtcdSnapshot', 'prod', oldest.metadata.name!), undefined);
  });

  it('a Complete snapshot whose status records no ETag: its object is never deleted, though it names the snapshot', async () => {
    const [oldest, ...kept] = [snap('2026-11-20'), snap('2026-11-21'), snap('2026-11-22')];
    delete (oldest.status!.artifact as { etag?: string }).etag;
    const w = world([schedule(), cluster, secret, oldest, ...kept], LATER);
    await w.run();
    assert.ok(s3.objects.has(keyOf(oldest)), 'kept');
    assert.equal(s3.requests.filter(r => r.includes(keyOf(oldest))).length, 0);
    assert.equal(
      w.kube.stored('EtcdSnapshot', 'prod', oldest.metadata.name!),
      undefined,
      'the EtcdSnapshot goes',
    );
  });

  it('two to prune, each with its own Secret: the missing one keeps its snapshot, the other is pruned', async () => {
    const snaps = [snap('2026-11-19'), snap('2026-11-20'), snap('2026-11-21'), snap('2026-11-22')];
    const other = snaps[1];
    const s3Dest = other.spec.destination.s3!;
    other.spec = {
      ...other.spec,
      destination: { s3: { ...s3Dest, credentialsSecretRef: { name: 'missing-creds' } } },
    };
    const w = world([schedule(), cluster, secret, ...snaps], LATER);
    const outcome = await w.run();
    assert.equal(w.kube.stored('EtcdSnapshot', 'prod', snaps[0].metadata.name!), undefined);
    assert.ok(w.kube.stored('EtcdSnapshot', 'prod', other.metadata.name!), 'its Secret is missing');
    assert.ok(s3.objects.has(keyOf(other)));
    assert.match(summaryOf(outcome) ?? '', /Secret missing-creds is missing/);
  });

  it('two problems: both said, one after the other', async () => {
    const snaps = [snap('2026-11-19'), snap('2026-11-20'), snap('2026-11-21'), snap('2026-11-22')];
    const w = world([schedule(), cluster, ...snaps], LATER);
    const outcome = await w.run();
    const summary = summaryOf(outcome) ?? '';
    const missing = (s: EtcdSnapshot) =>
      `of EtcdSnapshot ${s.metadata.name}: Secret backup-creds is missing or lacks AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; restore it (the EtcdSnapshot is kept until its object is deleted)`;
    assert.ok(summary.includes(`${missing(snaps[1])}; cannot delete `), summary);
    assert.ok(summary.endsWith(missing(snaps[0])), summary);
  });

  it('a PVC snapshot whose status records no checksum: no delete Job, the EtcdSnapshot goes', async () => {
    const s = snap('2026-11-20');
    const onPvc = {
      ...s,
      spec: { ...s.spec, destination: { pvc: { claimName: 'backups' } } },
      status: { ...s.status, artifact: { uri: 'pvc://backups/x.db', sizeBytes: 1 } },
    } as EtcdSnapshot & KubeObject;
    const pvcSchedule = {
      ...schedule(),
      spec: { ...schedule().spec, destination: { pvc: { claimName: 'backups' } } },
    };
    const w = world([pvcSchedule, cluster, onPvc, snap('2026-11-21'), snap('2026-11-22')], LATER);
    await w.run();
    assert.equal(w.kube.created.filter(o => o.kind === 'Job').length, 0);
    assert.equal(w.kube.stored('EtcdSnapshot', 'prod', onPvc.metadata.name!), undefined);
  });

  it('two files being removed: both waited for, said one after the other', async () => {
    const pvcSchedule = {
      ...schedule(1),
      spec: { ...schedule(1).spec, destination: { pvc: { claimName: 'backups' } } },
    };
    const onPvc = (day: string) => {
      const s = snap(day);
      const uri = pvcUri(
        'backups',
        snapshotFilePath(undefined, { name: s.metadata.name ?? '', uid: s.metadata.uid ?? '' }),
      );
      return {
        ...s,
        spec: { ...s.spec, destination: { pvc: { claimName: 'backups' } } },
        status: { ...s.status, artifact: { uri, sizeBytes: 1, checksum: `sha256:${'a'.repeat(64)}` } },
      } as EtcdSnapshot & KubeObject;
    };
    const snaps = ['2026-11-20', '2026-11-21', '2026-11-22'].map(onPvc);
    const w = world([pvcSchedule, cluster, ...snaps], LATER);
    const outcome = await w.run();
    assert.match(
      summaryOf(outcome) ?? '',
      /waiting: Job \S+ removes its file from claim backups; Job \S+ removes its file from claim backups$/,
    );
  });

  it('a status write without a run to create is no crash point of the claim', async () => {
    const [oldest, ...kept] = [snap('2026-11-20'), snap('2026-11-21'), snap('2026-11-22')];
    const w = world([schedule(), cluster, secret, oldest, ...kept], LATER);
    assert.notEqual(await crashAt('schedule:claimed', w.run), 'crashed');
  });
});
