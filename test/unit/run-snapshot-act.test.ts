// run-snapshot's I/O for one EtcdSnapshot (shared/reconcile/snapshot.ts, snapshot-verify.ts,
// snapshot-job.ts) over an in-memory Kubernetes (test/support/fake-kube.ts), a scripted etcd and a
// small S3 on loopback (test/support/fake-s3.ts): the claim written before any byte moves, the
// member streamed from (followers first), the object stored with its owner and read back before the
// snapshot is Complete, the result written against the claim, the finalizer and the object deleted
// only when this snapshot wrote it, and what is recorded when each call fails. Real etcd and s3rver
// are test/integration/s3-snapshot.test.ts; the decisions are plan-snapshot*.test.ts's.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { EtcdSnapshot, EtcdSnapshotStatus } from '../../shared/api/etcd-snapshot.ts';
import { findCondition } from '../../shared/conditions.ts';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { reconcileSnapshot } from '../../shared/reconcile/snapshot.ts';
import { metrics } from '../../shared/runtime/metrics.ts';
import { snapshotJobName } from '../../shared/builders/snapshot-job.ts';
import { SAVE_CONTAINER, savedMessage } from '../../shared/snapshot-file/result.ts';
import { parseAllowList } from '../../shared/s3/endpoint-policy.ts';
import { snapshotTimingsFromEnv } from '../../shared/runtime/timings.ts';
import { crashAt } from '../support/crash-at.ts';
import { FakeKube, fakeContext } from '../support/fake-kube.ts';
import { FakeS3, snapshotBytes } from '../support/fake-s3.ts';
import { etcdCluster, etcdMember } from '../support/etcd-objects.ts';

process.env.LOG_LEVEL ??= 'silent';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const NOW = new Date('2026-11-22T10:02:00Z');
const CREATED = new Date('2026-11-22T10:00:00Z');
const REF = { namespace: 'prod', name: 'before-upgrade' };
const KEY = 'prod/prod/demo/before-upgrade-snap-uid.db';
const URI = `s3://etcd/${KEY}`;
const ALLOW = parseAllowList('http://127.0.0.0/8').entries;
const b64 = (s: string) => Buffer.from(s).toString('base64');
const url = (name: string) => `http://${name}.demo.prod.svc:2379`;

let s3: FakeS3;
before(async () => {
  s3 = await FakeS3.start();
});
after(async () => s3.stop());
beforeEach(() => s3.reset());

function snapshot(
  o: {
    status?: EtcdSnapshotStatus;
    deleting?: boolean;
    policy?: 'Delete' | 'Retain';
    finalizers?: string[];
  } = {},
) {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: {
      name: 'before-upgrade',
      namespace: 'prod',
      uid: 'snap-uid',
      resourceVersion: '7',
      creationTimestamp: CREATED,
      ...(o.finalizers && { finalizers: o.finalizers }),
      ...(o.deleting && { deletionTimestamp: NOW }),
    },
    spec: {
      clusterRef: { name: 'demo' },
      ...(o.policy && { deletionPolicy: o.policy }),
      destination: {
        s3: {
          endpoint: s3.endpoint,
          bucket: 'etcd',
          key: 'prod/',
          credentialsSecretRef: { name: 'backup-creds' },
        },
      },
    },
    ...(o.status && { status: o.status }),
  } as EtcdSnapshot & KubeObject;
}

const cluster = etcdCluster({
  metadata: { uid: 'c-uid' },
  spec: { replicas: 3 },
  status: {
    phase: 'Running',
    members: [
      { name: 'demo-0', role: 'voter', ready: true, leader: true },
      { name: 'demo-1', role: 'voter', ready: true, leader: false },
      { name: 'demo-2', role: 'voter', ready: true, leader: false },
    ],
  } as never,
});
const labels = { 'etcdfn.io/cluster': 'demo' };
const members = ['demo-0', 'demo-1', 'demo-2'].map(n =>
  etcdMember(n, { metadata: { uid: `${n}-uid`, labels } }),
);
const pods = ['demo-0', 'demo-1', 'demo-2'].map(n => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: n, namespace: 'prod', labels },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
}));
const secret = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'backup-creds', namespace: 'prod' },
  data: { AWS_ACCESS_KEY_ID: b64('AKID'), AWS_SECRET_ACCESS_KEY: b64('secret') },
};

/** An etcd whose members stream `bytes` (or fail as `answers` say, by member); calls recorded. */
function fakeEtcd(bytes: Buffer, answers: Record<string, () => unknown> = {}) {
  const calls: string[] = [];
  const etcd: Partial<EtcdAdapter> = {
    snapshot: async endpoint => {
      calls.push(`snapshot ${endpoint}`);
      const scripted = answers[endpoint];
      if (scripted) return scripted() as never;
      return { kind: 'ok', endpoint, stream: Readable.from([bytes]), revision: 42 } as never;
    },
  };
  return { etcd, calls };
}

function world(
  objects: unknown[],
  o: { bytes?: Buffer; answers?: Record<string, () => unknown>; settings?: Record<string, unknown> } = {},
) {
  const kube = new FakeKube(objects);
  const { etcd, calls } = fakeEtcd(o.bytes ?? snapshotBytes(), o.answers);
  const ctx = fakeContext(
    kube,
    etcd,
    { s3AllowList: ALLOW, snapshot: snapshotTimingsFromEnv({}), ...o.settings },
    NOW,
  );
  return { kube, etcdCalls: calls, run: () => reconcileSnapshot(ctx, REF) };
}

const full = (snap = snapshot()) => [snap, cluster, ...members, ...pods, secret];
const stored = (kube: FakeKube) =>
  kube.stored<EtcdSnapshot & KubeObject>('EtcdSnapshot', 'prod', 'before-upgrade');
const readyOf = (kube: FakeKube) => findCondition(stored(kube)?.status?.conditions, 'Ready');
const summaryOf = (o: { result: string; summary?: string; reason?: string }) =>
  o.result === 'done' ? o.summary : o.reason;

describe('run-snapshot: an EtcdSnapshot to S3, start to finish', () => {
  it('claims it, streams from a follower, stores the object with its owner, reads it back, records Complete', async () => {
    const bytes = snapshotBytes(3);
    const w = world(full(), { bytes });
    const outcome = await w.run();
    assert.equal(outcome.result, 'done');
    assert.match(
      summaryOf(outcome) ?? '',
      /^EtcdSnapshot before-upgrade: snapshot of EtcdCluster demo at revision 42 \(.*\) stored at s3:\/\/etcd\/prod\/prod\/demo\/before-upgrade-snap-uid\.db, taken from member demo-1, verified$/,
    );
    assert.deepEqual(w.etcdCalls, [`snapshot ${url('demo-1')}`], 'a follower, not the leader');
    const object = s3.objects.get(`etcd/${KEY}`);
    assert.deepEqual(object?.body, bytes);
    assert.equal(object?.owner, 'snap-uid');
    assert.ok(s3.requests.includes(`GET etcd/${KEY}`), 'read back');
    const status = stored(w.kube)?.status;
    assert.equal(status?.phase, 'Complete');
    assert.deepEqual(
      { ...status?.artifact },
      {
        uri: URI,
        sizeBytes: bytes.length,
        checksum: status?.artifact?.checksum,
        revision: 42,
        etag: object?.etag,
      },
    );
    assert.match(status?.artifact?.checksum ?? '', /^sha256:[0-9a-f]{64}$/);
    assert.equal(findCondition(status?.conditions, 'Verified')?.reason, 'ReadBackVerified');
    assert.deepEqual(
      w.kube.events.map(e => e.split(':')[0]),
      ['Normal SnapshotStarted', 'Normal SnapshotComplete'],
    );
    assert.deepEqual(
      w.kube.created
        .filter(o => o.kind === 'Event')
        .map(o => (o as { reportingInstance?: string }).reportingInstance),
      ['run-snapshot', 'run-snapshot'],
    );
    assert.deepEqual(
      w.kube.writes.filter(c => !c.includes('Event')),
      ['replaceStatus EtcdSnapshot prod/before-upgrade', 'replaceStatus EtcdSnapshot prod/before-upgrade'],
    );
  });

  it('the claim goes into status before any byte moves', async () => {
    let phaseWhenStreamed: string | undefined;
    const kube = new FakeKube(full());
    const ctx = fakeContext(
      kube,
      {
        snapshot: async endpoint => {
          phaseWhenStreamed = kube.stored<EtcdSnapshot>('EtcdSnapshot', 'prod', 'before-upgrade')?.status
            ?.phase;
          return { kind: 'ok', endpoint, stream: Readable.from([snapshotBytes()]), revision: 1 } as never;
        },
      },
      { s3AllowList: ALLOW, snapshot: snapshotTimingsFromEnv({}) },
      NOW,
    );
    await reconcileSnapshot(ctx, REF);
    assert.equal(phaseWhenStreamed, 'Started');
  });

  it('a member that cannot stream: the next one is tried', async () => {
    const w = world(full(), {
      answers: { [url('demo-1')]: () => ({ kind: 'unavailable', message: 'connection refused' }) },
    });
    const outcome = await w.run();
    assert.deepEqual(w.etcdCalls, [`snapshot ${url('demo-1')}`, `snapshot ${url('demo-2')}`]);
    assert.match(summaryOf(outcome) ?? '', /taken from member demo-2, verified$/);
  });

  it('no member can stream: back to Pending with every member’s error, a Warning, retried later', async () => {
    const down = (m: string) => () => ({ kind: 'unavailable', message: `${m} down` });
    const w = world(full(), {
      answers: {
        [url('demo-0')]: down('demo-0'),
        [url('demo-1')]: down('demo-1'),
        [url('demo-2')]: down('demo-2'),
      },
    });
    const outcome = await w.run();
    assert.equal(outcome.result, 'done');
    assert.equal(stored(w.kube)?.status?.phase, 'Pending');
    assert.match(
      readyOf(w.kube)?.message ?? '',
      /could not stream a snapshot from etcd: no member served a snapshot \(demo-1: demo-1 down; demo-2: demo-2 down; demo-0: demo-0 down\); retrying$/,
    );
    assert.equal(stored(w.kube)?.status?.startTime, '2026-11-22T10:02:00Z', 'keeps the start, for the delay');
    assert.deepEqual(
      w.kube.events.map(e => e.split(':')[0]),
      ['Normal SnapshotStarted', 'Warning SnapshotAttemptFailed'],
    );
    assert.equal(s3.objects.size, 0);
  });

  it('the stream breaking off: Pending again, the member named', async () => {
    const broken = new Readable({
      read() {
        this.destroy(new Error('stream reset by peer'));
      },
    });
    const w = world(full(), {
      answers: {
        [url('demo-1')]: () => ({ kind: 'ok', endpoint: url('demo-1'), stream: broken, revision: 1 }),
      },
    });
    await w.run();
    assert.equal(stored(w.kube)?.status?.phase, 'Pending');
    assert.match(readyOf(w.kube)?.message ?? '', /the stream from demo-1 broke off: .*stream reset by peer/);
  });

  it('S3 refusing the upload: Failed UploadRefused, the key named', async () => {
    const w = world(full());
    s3.fail('PUT', 403, 'AccessDenied');
    await w.run();
    assert.equal(stored(w.kube)?.status?.phase, 'Failed');
    assert.equal(readyOf(w.kube)?.reason, 'UploadRefused');
    assert.match(readyOf(w.kube)?.message ?? '', /AccessDenied/);
  });

  it('the store failing: Pending, retried', async () => {
    const w = world(full());
    s3.fail('PUT', 503, 'ServiceUnavailable');
    s3.fail('PUT', 503, 'ServiceUnavailable');
    s3.fail('PUT', 503, 'ServiceUnavailable');
    s3.fail('PUT', 503, 'ServiceUnavailable');
    await w.run();
    assert.equal(stored(w.kube)?.status?.phase, 'Pending');
    assert.match(readyOf(w.kube)?.message ?? '', /could not upload to the object store/);
  });

  it('an object of someone else at the key: never overwritten, Failed ObjectExists', async () => {
    const theirs = s3.put(`etcd/${KEY}`, Buffer.from('not ours'), 'someone-else');
    const w = world(full());
    await w.run();
    assert.equal(stored(w.kube)?.status?.phase, 'Failed');
    assert.equal(readyOf(w.kube)?.reason, 'ObjectExists');
    assert.deepEqual(s3.objects.get(`etcd/${KEY}`), theirs);
  });

  it('an endpoint the operator does not allow: Failed, nothing sent', async () => {
    const w = world(full(), { settings: { s3AllowList: parseAllowList('http://10.0.0.0/8').entries } });
    await w.run();
    assert.equal(stored(w.kube)?.status?.phase, 'Failed');
    assert.deepEqual(s3.requests, []);
    assert.deepEqual(w.etcdCalls, []);
  });

  it('the attempt’s time running out while members fail: Pending, said as timed out', async () => {
    const slow = (m: string) => async () => {
      await new Promise(resolve => setTimeout(resolve, 30));
      return { kind: 'unavailable', message: `${m} slow` };
    };
    const w = world(full(), {
      answers: {
        [url('demo-0')]: slow('demo-0'),
        [url('demo-1')]: slow('demo-1'),
        [url('demo-2')]: slow('demo-2'),
      },
      settings: { snapshot: { ...snapshotTimingsFromEnv({}), attemptTimeoutMs: 10 } },
    });
    await w.run();
    assert.deepEqual(w.etcdCalls, [`snapshot ${url('demo-1')}`], 'no other member asked once the time is up');
    assert.equal(stored(w.kube)?.status?.phase, 'Pending');
    assert.match(
      readyOf(w.kube)?.message ?? '',
      /did not finish in time: no member served a snapshot within 0 s; retrying$/,
    );
  });

  it('the upload outliving the attempt: aborted, Pending, said as timed out', async () => {
    const w = world(full(), {
      settings: { snapshot: { ...snapshotTimingsFromEnv({}), attemptTimeoutMs: 0 } },
    });
    await w.run();
    assert.equal(stored(w.kube)?.status?.phase, 'Pending');
    assert.match(readyOf(w.kube)?.message ?? '', /did not finish in time: upload to .* aborted/);
  });
});

describe('run-snapshot: reading the object back', () => {
  it('bytes without etcd’s integrity hash: Failed, the object kept for inspection', async () => {
    const w = world(full(), { bytes: Buffer.from('not an etcd snapshot') });
    await w.run();
    assert.equal(stored(w.kube)?.status?.phase, 'Failed');
    assert.equal(readyOf(w.kube)?.reason, 'VerificationFailed');
    assert.equal(
      findCondition(stored(w.kube)?.status?.conditions, 'Verified')?.reason,
      'IntegrityCheckFailed',
    );
    assert.match(readyOf(w.kube)?.message ?? '', /does not end with etcd's 32-byte integrity hash/);
    assert.ok(s3.objects.has(`etcd/${KEY}`), 'kept');
    assert.deepEqual(w.kube.events.at(-1)?.split(':')[0], 'Warning SnapshotVerificationFailed');
  });

  it('a hash that does not match: Failed IntegrityCheckFailed', async () => {
    const bytes = snapshotBytes();
    bytes[0] = 1;
    const w = world(full(), { bytes });
    await w.run();
    assert.equal(
      findCondition(stored(w.kube)?.status?.conditions, 'Verified')?.reason,
      'IntegrityCheckFailed',
    );
    assert.match(
      readyOf(w.kube)?.message ?? '',
      /integrity hash at the end of .* does not match its contents/,
    );
  });

  it('S3 refusing the read: Failed ReadBackRefused, naming s3:GetObject', async () => {
    const w = world(full());
    s3.fail('GET', 403, 'AccessDenied');
    await w.run();
    assert.equal(findCondition(stored(w.kube)?.status?.conditions, 'Verified')?.reason, 'ReadBackRefused');
    assert.match(readyOf(w.kube)?.message ?? '', /S3 refused to read .* back \(AccessDenied: .*s3:GetObject/);
  });

  it('the store failing on the read: Pending, retried', async () => {
    const w = world(full());
    for (let i = 0; i < 4; i++) s3.fail('GET', 503, 'ServiceUnavailable');
    await w.run();
    assert.equal(stored(w.kube)?.status?.phase, 'Pending');
    assert.match(readyOf(w.kube)?.message ?? '', /reading s3:\/\/etcd\/.* back failed/);
  });
});

describe('run-snapshot: the status writes', () => {
  it('the claim lost to another invocation: nothing streamed', async () => {
    const w = world(full());
    w.kube.script('replaceStatus', 'EtcdSnapshot', { kind: 'conflict', message: 'changed' });
    assert.deepEqual(await w.run(), {
      result: 'done',
      summary: 'EtcdSnapshot before-upgrade changed meanwhile (another invocation has it): changed',
    });
    assert.deepEqual(w.etcdCalls, []);
    assert.deepEqual(w.kube.events, []);
  });

  it('the snapshot gone before the claim: nothing streamed', async () => {
    const w = world(full());
    w.kube.script('replaceStatus', 'EtcdSnapshot', { kind: 'not-found' });
    assert.deepEqual(await w.run(), { result: 'done', summary: 'EtcdSnapshot prod/before-upgrade is gone' });
    assert.deepEqual(w.etcdCalls, []);
  });

  it('the claim refused: thrown', async () => {
    const w = world(full());
    w.kube.script('replaceStatus', 'EtcdSnapshot', { kind: 'invalid', message: 'bad' });
    await assert.rejects(w.run(), /status of EtcdSnapshot before-upgrade refused: bad/);
    assert.deepEqual(w.etcdCalls, []);
  });

  it('the result write conflicting while the claim holds: written on the fresh object', async () => {
    const w = world(full());
    w.kube.script('replaceStatus', 'EtcdSnapshot', null, { kind: 'conflict', message: 'labels edited' });
    const outcome = await w.run();
    assert.match(summaryOf(outcome) ?? '', /verified$/);
    assert.equal(stored(w.kube)?.status?.phase, 'Complete');
    assert.equal(w.kube.calls.filter(c => c.startsWith('replaceStatus')).length, 3);
  });

  it('the claim taken over meanwhile: the result is not written over the newer attempt', async () => {
    const w = world(full());
    const newer = { ...snapshot(), status: { phase: 'Started', startTime: '2026-11-22T10:30:00Z' } };
    w.kube.script('replaceStatus', 'EtcdSnapshot', null, { kind: 'conflict', message: 'changed' });
    w.kube.script('get', 'EtcdSnapshot', null, { kind: 'found', object: newer });
    assert.deepEqual(await w.run(), {
      result: 'done',
      summary: 'EtcdSnapshot before-upgrade: claim lost; result not recorded',
    });
    assert.equal(stored(w.kube)?.status?.phase, 'Started');
    assert.deepEqual(
      w.kube.events.map(e => e.split(':')[0]),
      ['Normal SnapshotStarted'],
    );
  });

  it('the snapshot deleted before its result: said, nothing recorded', async () => {
    const w = world(full());
    w.kube.script('replaceStatus', 'EtcdSnapshot', null, { kind: 'not-found' });
    assert.deepEqual(await w.run(), {
      result: 'done',
      summary: 'EtcdSnapshot before-upgrade: gone; result not recorded',
    });
  });

  it('deleted between a conflict and the re-read: gone', async () => {
    const w = world(full());
    w.kube.script('replaceStatus', 'EtcdSnapshot', null, { kind: 'conflict', message: 'x' });
    w.kube.script('get', 'EtcdSnapshot', null, { kind: 'not-found' });
    assert.deepEqual(await w.run(), {
      result: 'done',
      summary: 'EtcdSnapshot before-upgrade: gone; result not recorded',
    });
  });

  it('the result refused: thrown', async () => {
    const w = world(full());
    w.kube.script('replaceStatus', 'EtcdSnapshot', null, { kind: 'invalid', message: 'too long' });
    await assert.rejects(w.run(), /status of EtcdSnapshot before-upgrade refused: too long/);
  });

  it('three conflicts with the claim in place: thrown', async () => {
    const w = world(full());
    const c = { kind: 'conflict', message: 'x' };
    w.kube.script('replaceStatus', 'EtcdSnapshot', null, c, c, c);
    await assert.rejects(w.run(), /the result could not be written after 3 conflicts/);
  });
});

describe('run-snapshot: snapshots it does not take', () => {
  it('not found', async () => {
    const w = world([]);
    assert.deepEqual(await w.run(), {
      result: 'done',
      summary: 'EtcdSnapshot prod/before-upgrade not found',
    });
  });

  it('Complete: nothing read but the snapshot, nothing written', async () => {
    const w = world(full(snapshot({ status: { phase: 'Complete' } })));
    const outcome = await w.run();
    assert.equal(outcome.result, 'done');
    assert.deepEqual(w.kube.calls, ['get EtcdSnapshot prod/before-upgrade']);
  });

  it('Failed: the same', async () => {
    const w = world(full(snapshot({ status: { phase: 'Failed' } })));
    await w.run();
    assert.deepEqual(w.kube.calls, ['get EtcdSnapshot prod/before-upgrade']);
  });

  it('a Pod of an earlier cluster of the same name is not a source', async () => {
    const foreign = members.map(m => ({
      ...m,
      metadata: {
        ...m.metadata,
        ownerReferences: [
          { apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdCluster', name: 'demo', uid: 'old-uid' },
        ],
      },
    }));
    const theirPods = pods.map(p => ({
      ...p,
      metadata: {
        ...p.metadata,
        ownerReferences: [
          {
            apiVersion: 'etcdfn.io/v1alpha1',
            kind: 'EtcdMember',
            name: p.metadata.name,
            uid: `${p.metadata.name}-uid`,
            controller: true,
          },
        ],
      },
    }));
    const w = world([snapshot(), cluster, ...foreign, ...theirPods, secret]);
    await w.run();
    assert.deepEqual(w.etcdCalls, []);
    assert.equal(readyOf(w.kube)?.reason, 'NoReadyMember');
  });

  it('no cluster: no source, nothing streamed', async () => {
    const w = world([snapshot(), ...members, ...pods, secret]);
    await w.run();
    assert.deepEqual(w.etcdCalls, []);
  });

  it('no Secret: Failed naming it, nothing streamed', async () => {
    const w = world([snapshot(), cluster, ...members, ...pods]);
    await w.run();
    assert.equal(readyOf(w.kube)?.reason, 'CredentialsInvalid');
    assert.deepEqual(w.etcdCalls, []);
  });

  it('Pods not ready are not sources', async () => {
    const notReady = pods.map(p => ({
      ...p,
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] },
    }));
    const w = world([snapshot(), cluster, ...members, ...notReady, secret]);
    await w.run();
    assert.deepEqual(w.etcdCalls, []);
  });
});

describe('run-snapshot: deletionPolicy Delete', () => {
  const FIN = 'etcdfn.io/snapshot-object';

  it('the finalizer goes on before anything is stored, the others kept', async () => {
    const w = world(full(snapshot({ policy: 'Delete', finalizers: ['example.com/x'] })));
    const outcome = await w.run();
    assert.match(summaryOf(outcome) ?? '', /adding etcdfn.io\/snapshot-object before anything is stored$/);
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['example.com/x', FIN]);
    assert.deepEqual(w.etcdCalls, []);
    assert.deepEqual(s3.requests, []);
  });

  it('adding it conflicts: said, nothing else', async () => {
    const w = world(full(snapshot({ policy: 'Delete' })));
    w.kube.script('replace', 'EtcdSnapshot', { kind: 'conflict', message: 'x' });
    const outcome = await w.run();
    assert.match(summaryOf(outcome) ?? '', /before anything is stored: conflict$/);
  });

  it('adding it refused: thrown', async () => {
    const w = world(full(snapshot({ policy: 'Delete' })));
    w.kube.script('replace', 'EtcdSnapshot', { kind: 'invalid', message: 'nope' });
    await assert.rejects(w.run(), /EtcdSnapshot before-upgrade: nope/);
  });

  const complete = (etag: string) =>
    snapshot({
      policy: 'Delete',
      deleting: true,
      finalizers: ['example.com/x', FIN],
      status: {
        phase: 'Complete',
        startTime: '2026-11-22T10:00:00Z',
        artifact: { uri: URI, sizeBytes: 1, checksum: 'sha256:x', revision: 1, etag },
      },
    });

  it('deleted: its own object deleted (If-Match its ETag), then its finalizer', async () => {
    const object = s3.put(`etcd/${KEY}`, snapshotBytes(), 'snap-uid');
    const w = world([complete(object.etag), secret]);
    const outcome = await w.run();
    assert.deepEqual(outcome, {
      result: 'done',
      summary: `EtcdSnapshot before-upgrade: deleted ${URI}; finalizer removed`,
    });
    assert.equal(s3.objects.has(`etcd/${KEY}`), false);
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['example.com/x']);
  });

  it('an object another writer replaced (another ETag): kept, said in a Warning, the finalizer goes', async () => {
    const object = s3.put(`etcd/${KEY}`, Buffer.from('newer'), 'snap-uid');
    const w = world([complete('"an-older-etag"'), secret]);
    const outcome = await w.run();
    assert.ok(s3.objects.has(`etcd/${KEY}`), 'not deleted');
    assert.deepEqual(s3.objects.get(`etcd/${KEY}`), object);
    assert.match(summaryOf(outcome) ?? '', /; finalizer removed$/);
    assert.deepEqual(
      w.kube.events.map(e => e.split(':')[0]),
      ['Warning SnapshotObjectKept'],
    );
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['example.com/x']);
  });

  it('no object there: said, the finalizer goes', async () => {
    const w = world([complete('"e"'), secret]);
    const outcome = await w.run();
    assert.deepEqual(outcome, {
      result: 'done',
      summary: `EtcdSnapshot before-upgrade: ${URI} was not there; finalizer removed`,
    });
  });

  it('no Secret: the finalizer stays, a Warning says how to go on, retried', async () => {
    s3.put(`etcd/${KEY}`, snapshotBytes(), 'snap-uid');
    const w = world([complete('"e"')]);
    const outcome = await w.run();
    assert.equal(outcome.result, 'retry');
    assert.equal(outcome.result === 'retry' && outcome.status, 503);
    assert.match(summaryOf(outcome) ?? '', /cannot delete .*: Secret backup-creds is missing/);
    assert.deepEqual(
      w.kube.events.map(e => e.split(':')[0]),
      ['Warning SnapshotObjectNotDeleted'],
    );
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['example.com/x', FIN]);
    assert.ok(s3.objects.has(`etcd/${KEY}`));
  });

  it('S3 refusing the deletion: the finalizer stays, a Warning naming s3:DeleteObject, retried', async () => {
    const object = s3.put(`etcd/${KEY}`, snapshotBytes(), 'snap-uid');
    s3.fail('DELETE', 403, 'AccessDenied');
    const w = world([complete(object.etag), secret]);
    const outcome = await w.run();
    assert.equal(outcome.result, 'retry');
    assert.match(summaryOf(outcome) ?? '', /S3 refused to delete .*AccessDenied.*s3:DeleteObject/);
    assert.deepEqual(
      w.kube.events.map(e => e.split(':')[0]),
      ['Warning SnapshotObjectNotDeleted'],
    );
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['example.com/x', FIN]);
  });

  it('the store failing: the finalizer stays, retried, no Event', async () => {
    const object = s3.put(`etcd/${KEY}`, snapshotBytes(), 'snap-uid');
    for (let i = 0; i < 4; i++) s3.fail('DELETE', 503, 'ServiceUnavailable');
    const w = world([complete(object.etag), secret]);
    const outcome = await w.run();
    assert.equal(outcome.result, 'retry');
    assert.match(summaryOf(outcome) ?? '', /: deleting s3:\/\/etcd\/.*: /);
    assert.deepEqual(w.kube.events, []);
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['example.com/x', FIN]);
  });

  it('Retain: the finalizer goes, the store not asked', async () => {
    const snap = { ...complete('"e"'), spec: { ...complete('"e"').spec, deletionPolicy: 'Retain' as const } };
    const w = world([snap, secret]);
    const outcome = await w.run();
    assert.match(summaryOf(outcome) ?? '', /the stored object is kept; finalizer removed$/);
    assert.deepEqual(s3.requests, []);
  });

  it('the finalizer write conflicting: said', async () => {
    const w = world([complete('"e"'), secret]);
    w.kube.script('replace', 'EtcdSnapshot', { kind: 'conflict', message: 'x' });
    const outcome = await w.run();
    assert.match(summaryOf(outcome) ?? '', /; finalizer conflict$/);
  });

  it('the finalizer write refused: thrown', async () => {
    const w = world([complete('"e"'), secret]);
    w.kube.script('replace', 'EtcdSnapshot', { kind: 'invalid', message: 'nope' });
    await assert.rejects(w.run(), /EtcdSnapshot before-upgrade: nope/);
  });
});

describe('run-snapshot: a snapshot to a PVC', () => {
  const pvcSnapshot = (status?: EtcdSnapshotStatus) => {
    const s = snapshot(status ? { status } : {});
    return { ...s, spec: { ...s.spec, destination: { pvc: { claimName: 'backups' } } } };
  };
  const claim = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'backups', namespace: 'prod' },
  };

  it('claims it and creates the attempt’s Job, streaming nothing itself', async () => {
    const w = world([pvcSnapshot(), claim, cluster, ...members, ...pods]);
    const outcome = await w.run();
    assert.match(summaryOf(outcome) ?? '', /: Job .* created$/);
    assert.equal(stored(w.kube)?.status?.phase, 'Started');
    assert.equal(w.kube.created.filter(o => o.kind === 'Job').length, 1);
    assert.deepEqual(w.etcdCalls, []);
  });

  const STARTED = '2026-11-22T10:01:00Z';
  const finishedJob = (snap: EtcdSnapshot & KubeObject, report: string, succeeded = true) => {
    const name = snapshotJobName(snap, STARTED);
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name,
        namespace: 'prod',
        uid: 'job-uid',
        ownerReferences: [
          { apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdSnapshot', name: 'before-upgrade', uid: 'snap-uid' },
        ],
      },
      status: { conditions: [{ type: succeeded ? 'Complete' : 'Failed', status: 'True' }] },
    };
    const jobPod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${name}-x`,
        namespace: 'prod',
        labels: { 'batch.kubernetes.io/job-name': name },
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid: 'job-uid' }],
      },
      status: {
        containerStatuses: [
          { name: SAVE_CONTAINER, state: { terminated: { exitCode: 0, message: report, finishedAt: NOW } } },
        ],
      },
    };
    return { name, objects: [job, jobPod] };
  };
  const saved = {
    path: 'before-upgrade-snap-uid.db',
    member: 'demo-1',
    revision: 42,
    sizeBytes: 1056,
    sha256: 'ab'.repeat(32),
    totalKey: 3,
    dbRevision: 42,
  };

  it('its Job finished: the result recorded, then the Job deleted (its Pod with it)', async () => {
    const snap = pvcSnapshot({ phase: 'Started', startTime: STARTED });
    const job = finishedJob(snap, savedMessage(saved));
    const w = world([snap, claim, cluster, ...members, ...pods, ...job.objects]);
    const outcome = await w.run();
    assert.match(summaryOf(outcome) ?? '', new RegExp(`; Job ${job.name} deleted$`));
    assert.equal(stored(w.kube)?.status?.phase, 'Complete');
    assert.deepEqual(w.kube.deletes, [
      {
        ref: { apiVersion: 'batch/v1', kind: 'Job', namespace: 'prod', name: job.name },
        options: { propagationPolicy: 'Background' },
      },
    ]);
    assert.ok(
      w.kube.calls.indexOf('replaceStatus EtcdSnapshot prod/before-upgrade') <
        w.kube.calls.indexOf(`delete Job prod/${job.name}`),
      'the result first',
    );
  });

  it('its result not written (the snapshot gone): the Job kept', async () => {
    const snap = pvcSnapshot({ phase: 'Started', startTime: STARTED });
    const job = finishedJob(snap, savedMessage(saved));
    const w = world([snap, claim, cluster, ...members, ...pods, ...job.objects]);
    w.kube.script('replaceStatus', 'EtcdSnapshot', { kind: 'not-found' });
    assert.deepEqual(await w.run(), {
      result: 'done',
      summary: 'EtcdSnapshot before-upgrade: gone; result not recorded',
    });
    assert.deepEqual(w.kube.deletes, []);
  });

  it('a Job of another snapshot of the same name is not its own', async () => {
    const snap = pvcSnapshot({ phase: 'Started', startTime: STARTED });
    const job = finishedJob(snap, savedMessage(saved));
    (job.objects[0] as { metadata: { ownerReferences: { uid: string }[] } }).metadata.ownerReferences[0].uid =
      'old-uid';
    const w = world([snap, claim, cluster, ...members, ...pods, ...job.objects]);
    await w.run();
    assert.deepEqual(w.kube.deletes, []);
    assert.notEqual(stored(w.kube)?.status?.phase, 'Complete');
  });

  it('a PVC that does not exist: Failed ClaimNotFound', async () => {
    const w = world([pvcSnapshot(), cluster, ...members, ...pods]);
    await w.run();
    assert.equal(readyOf(w.kube)?.reason, 'ClaimNotFound');
  });

  it('the attempt’s Job: the operator’s image, the subPath without its trailing slashes, followers first, the attempt’s deadline', async () => {
    const s = pvcSnapshot();
    const snap = {
      ...s,
      spec: { ...s.spec, destination: { pvc: { claimName: 'backups', subPath: 'etcd/prod//' } } },
    };
    const w = world([snap, claim, cluster, ...members, ...pods], {
      settings: {
        operatorImage: 'registry.example/etcdfn:9',
        snapshot: { ...snapshotTimingsFromEnv({}), attemptTimeoutMs: 540_000 },
      },
    });
    await w.run();
    const job = w.kube.created.find(o => o.kind === 'Job') as KubeObject & {
      spec: {
        activeDeadlineSeconds: number;
        template: { spec: { containers: { image: string; args: string[] }[] } };
      };
    };
    const save = job.spec.template.spec.containers[0];
    assert.equal(save.image, 'registry.example/etcdfn:9');
    assert.equal(job.spec.activeDeadlineSeconds, 540);
    assert.ok(save.args.includes('--dir=/snapshots/etcd/prod'), save.args.join(' '));
    assert.deepEqual(
      save.args.filter(a => a.startsWith('--source=')),
      [
        '--source=demo-1=http://demo-1.demo.prod.svc:2379',
        '--source=demo-2=http://demo-2.demo.prod.svc:2379',
        '--source=demo-0=http://demo-0.demo.prod.svc:2379',
      ],
    );
    assert.equal(
      save.args.some(a => a.startsWith('--tls-') || a.startsWith('--auth-')),
      false,
      'a plain cluster',
    );
  });

  it('a deadline under a second is one second', async () => {
    const w = world([pvcSnapshot(), claim, cluster, ...members, ...pods], {
      settings: { snapshot: { ...snapshotTimingsFromEnv({}), attemptTimeoutMs: 200 } },
    });
    await w.run();
    const job = w.kube.created.find(o => o.kind === 'Job') as KubeObject & {
      spec: { activeDeadlineSeconds: number };
    };
    assert.equal(job.spec.activeDeadlineSeconds, 1);
  });

  it('a TLS cluster with auth on: the Job logs in with the client certificate and as root', async () => {
    const tlsCluster = {
      ...cluster,
      spec: {
        ...cluster.spec,
        tls: {
          client: { serverSecretRef: { name: 'demo-server' }, operatorClientSecretRef: { name: 'demo-op' } },
        },
      },
      status: { ...cluster.status, authEnabled: true },
    };
    const w = world([pvcSnapshot(), claim, tlsCluster, ...members, ...pods]);
    await w.run();
    const job = w.kube.created.find(o => o.kind === 'Job') as KubeObject & {
      spec: {
        template: {
          spec: { containers: { args: string[] }[]; volumes: { secret?: { secretName: string } }[] };
        };
      };
    };
    const args = job.spec.template.spec.containers[0].args;
    assert.ok(args.includes('--tls-cert=/etc/etcdfn/etcd-tls/client/tls.crt'), args.join(' '));
    assert.ok(args.includes('--auth-user=root'), args.join(' '));
    const secrets = job.spec.template.spec.volumes.map(v => v.secret?.secretName).filter(Boolean);
    assert.ok(secrets.includes('demo-server') && secrets.includes('demo-op'), secrets.join());
  });

  it('a TLS cluster without an operator client certificate: server CA only', async () => {
    const tlsCluster = {
      ...cluster,
      spec: { ...cluster.spec, tls: { client: { serverSecretRef: { name: 'demo-server' } } } },
    };
    const w = world([pvcSnapshot(), claim, tlsCluster, ...members, ...pods]);
    await w.run();
    const job = w.kube.created.find(o => o.kind === 'Job') as KubeObject & {
      spec: { template: { spec: { containers: { args: string[] }[] } } };
    };
    const args = job.spec.template.spec.containers[0].args;
    assert.ok(
      args.some(a => a.startsWith('--tls-ca=')),
      args.join(' '),
    );
    assert.equal(
      args.some(a => a.startsWith('--tls-cert=') || a.startsWith('--auth-')),
      false,
      args.join(' '),
    );
  });

  it('the Job already there: said; refused: thrown', async () => {
    const w = world([pvcSnapshot(), claim, cluster, ...members, ...pods]);
    w.kube.script('create', 'Job', { kind: 'already-exists' });
    assert.match(summaryOf(await w.run()) ?? '', /: Job .* already exists$/);
    const r = world([pvcSnapshot(), claim, cluster, ...members, ...pods]);
    r.kube.script('create', 'Job', { kind: 'invalid', message: 'quota' });
    await assert.rejects(r.run(), /Job .* refused: quota/);
  });

  it('its Job missing while Started: created again', async () => {
    const w = world([
      pvcSnapshot({ phase: 'Started', startTime: '2026-11-22T10:01:00Z' }),
      claim,
      cluster,
      ...members,
      ...pods,
    ]);
    const outcome = await w.run();
    assert.match(summaryOf(outcome) ?? '', /is missing; creating it: Job .* created$/);
  });
});

describe('run-snapshot: a crash just after each step', () => {
  it('after the claim: nothing streamed, the snapshot Started', async () => {
    const w = world(full());
    assert.equal(await crashAt('snapshot:claimed', w.run), 'crashed');
    assert.deepEqual(w.etcdCalls, []);
    assert.equal(stored(w.kube)?.status?.phase, 'Started');
    assert.deepEqual(
      w.kube.events.map(e => e.split(':')[0]),
      ['Normal SnapshotStarted'],
    );
  });

  it('after the claim of a PVC snapshot: no Job yet', async () => {
    const s = snapshot();
    const pvcSnap = { ...s, spec: { ...s.spec, destination: { pvc: { claimName: 'backups' } } } };
    const claim = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'backups', namespace: 'prod' },
    };
    const w = world([pvcSnap, claim, cluster, ...members, ...pods]);
    assert.equal(await crashAt('snapshot:claimed', w.run), 'crashed');
    assert.equal(w.kube.created.filter(o => o.kind === 'Job').length, 0);
  });

  // Inside the attempt the emulated crash is an error the attempt catches (a real one ends the
  // process there): what shows is that the point fired, and what was stored by then.
  it('while streaming: the point fires before anything is stored', async () => {
    const w = world(full());
    const outcome = await crashAt('snapshot:streaming', w.run);
    assert.match(JSON.stringify(outcome), /the stream from demo-1 broke off: snapshot:streaming/);
    assert.equal(s3.objects.size, 0);
  });

  it('after the upload: the point fires with the object stored and not yet read back', async () => {
    const w = world(full());
    const outcome = await crashAt('snapshot:uploaded', w.run);
    assert.match(JSON.stringify(outcome), /failed: snapshot:uploaded/);
    assert.ok(s3.objects.has(`etcd/${KEY}`));
    assert.equal(s3.requests.filter(r => r.startsWith('GET')).length, 0);
  });

  it('after the result: Complete, its Event not yet said', async () => {
    const w = world(full());
    assert.equal(await crashAt('snapshot:result-written', w.run), 'crashed');
    assert.equal(stored(w.kube)?.status?.phase, 'Complete');
    assert.deepEqual(
      w.kube.events.map(e => e.split(':')[0]),
      ['Normal SnapshotStarted'],
    );
  });

  it('a refused upload writes its result too, and only a written result is a crash point', async () => {
    const w = world(full());
    s3.fail('PUT', 403, 'AccessDenied');
    w.kube.script('replaceStatus', 'EtcdSnapshot', null, { kind: 'not-found' });
    assert.notEqual(await crashAt('snapshot:result-written', w.run), 'crashed');
  });

  it('after the finalizer went on: on, nothing else', async () => {
    const w = world(full(snapshot({ policy: 'Delete' })));
    assert.equal(await crashAt('snapshot:finalizer-added', w.run), 'crashed');
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['etcdfn.io/snapshot-object']);
    const lost = world(full(snapshot({ policy: 'Delete' })));
    lost.kube.script('replace', 'EtcdSnapshot', { kind: 'conflict', message: 'x' });
    assert.notEqual(await crashAt('snapshot:finalizer-added', lost.run), 'crashed');
  });

  it('after the object was deleted: the finalizer still on', async () => {
    const object = s3.put(`etcd/${KEY}`, snapshotBytes(), 'snap-uid');
    const s = snapshot({
      policy: 'Delete',
      deleting: true,
      finalizers: ['etcdfn.io/snapshot-object'],
      status: {
        phase: 'Complete',
        startTime: '2026-11-22T10:00:00Z',
        artifact: { uri: URI, sizeBytes: 1, checksum: 'sha256:x', revision: 1, etag: object.etag },
      },
    });
    const w = world([s, secret]);
    assert.equal(await crashAt('snapshot:object-deleted', w.run), 'crashed');
    assert.equal(s3.objects.has(`etcd/${KEY}`), false);
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['etcdfn.io/snapshot-object']);
  });
});

describe('run-snapshot: etcdfn_snapshots_total and _bytes_total', () => {
  const count = async (outcome?: string) => {
    const { values } = await metrics.snapshots.get();
    return values.find(v => v.labels.outcome === outcome)?.value ?? 0;
  };
  const bytes = async () => (await metrics.snapshotBytes.get()).values[0]?.value ?? 0;

  it('a Complete snapshot counted once, with its size', async () => {
    const [complete, failed, b] = [await count('Complete'), await count('Failed'), await bytes()];
    const data = snapshotBytes(4);
    const w = world(full(), { bytes: data });
    await w.run();
    assert.equal((await count('Complete')) - complete, 1);
    assert.equal((await count('Failed')) - failed, 0);
    assert.equal((await bytes()) - b, data.length);
    await w.run();
    assert.equal((await count('Complete')) - complete, 1, 'not again once finished');
  });

  it('a Failed one counted as Failed, no bytes', async () => {
    const [complete, failed, b] = [await count('Complete'), await count('Failed'), await bytes()];
    const w = world([snapshot(), cluster, ...members, ...pods]);
    await w.run();
    assert.equal((await count('Failed')) - failed, 1);
    assert.equal((await count('Complete')) - complete, 0);
    assert.equal((await bytes()) - b, 0);
  });

  const total = async () => (await metrics.snapshots.get()).values.reduce((n, v) => n + v.value, 0);

  it('a claim and an attempt back to Pending: nothing counted, under any outcome', async () => {
    const before = await total();
    const w = world(full());
    s3.fail('PUT', 503, 'ServiceUnavailable');
    s3.fail('PUT', 503, 'ServiceUnavailable');
    await w.run();
    assert.equal(stored(w.kube)?.status?.phase, 'Pending');
    assert.equal(await total(), before);
  });

  it('Failed with the object kept (verification failed): counted Failed, no bytes', async () => {
    const [failed, b, before] = [await count('Failed'), await bytes(), await total()];
    const w = world(full(), { bytes: Buffer.from('not an etcd snapshot') });
    await w.run();
    assert.equal(stored(w.kube)?.status?.phase, 'Failed');
    assert.ok(stored(w.kube)?.status?.artifact, 'the artifact recorded');
    assert.equal((await count('Failed')) - failed, 1);
    assert.equal((await total()) - before, 1);
    assert.equal((await bytes()) - b, 0);
  });

  it('a Failed result written after a conflict: counted once', async () => {
    const failed = await count('Failed');
    const w = world(full());
    s3.fail('PUT', 403, 'AccessDenied');
    w.kube.script('replaceStatus', 'EtcdSnapshot', null, { kind: 'conflict', message: 'labels' });
    await w.run();
    assert.equal(stored(w.kube)?.status?.phase, 'Failed');
    assert.equal((await count('Failed')) - failed, 1);
  });
});

describe('run-snapshot: what it reads and writes beyond the step', () => {
  it('a snapshot waiting for a source: said once in status, then nothing written', async () => {
    const notReady = pods.map(p => ({
      ...p,
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] },
    }));
    const w = world([snapshot(), cluster, ...members, ...notReady, secret]);
    const first = await w.run();
    assert.match(summaryOf(first) ?? '', /^EtcdSnapshot before-upgrade: .*no ready voting member/);
    const writes = w.kube.writes.length;
    const again = await w.run();
    assert.match(summaryOf(again) ?? '', /no ready voting member/);
    assert.equal(w.kube.writes.length, writes);
  });

  it('a Failed step answers its reason', async () => {
    const w = world([snapshot(), cluster, ...members, ...pods]);
    assert.match(summaryOf(await w.run()) ?? '', /^EtcdSnapshot before-upgrade: .*Secret backup-creds/);
  });

  it('an S3 snapshot, even Started, reads no Job; a PVC snapshot reads its Job only once Started', async () => {
    const w = world(full(snapshot({ status: { phase: 'Started', startTime: '2026-11-22T09:00:00Z' } })));
    await w.run();
    assert.equal(w.kube.calls.filter(c => c.startsWith('get Job')).length, 0, w.kube.calls.join());
    const s = snapshot();
    const pvcSnap = { ...s, spec: { ...s.spec, destination: { pvc: { claimName: 'backups' } } } };
    const claim = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'backups', namespace: 'prod' },
    };
    const p = world([pvcSnap, claim, cluster, ...members, ...pods]);
    await p.run();
    assert.equal(p.kube.calls.filter(c => c.startsWith('get Job')).length, 0, p.kube.calls.join());
  });

  it('a TLS cluster whose client Secret is missing: streamed from nobody, the Secret named, retried', async () => {
    const tls = {
      ...cluster,
      spec: { ...cluster.spec, tls: { client: { serverSecretRef: { name: 'demo-server' } } } },
    };
    const w = world([snapshot(), tls, ...members, ...pods, secret]);
    await w.run();
    assert.deepEqual(w.etcdCalls, [], 'the plain adapter never used for a TLS cluster');
    assert.equal(stored(w.kube)?.status?.phase, 'Pending');
    assert.match(readyOf(w.kube)?.message ?? '', /demo-server/);
  });

  it('the result re-read after a conflict: finished by someone else with the same start: claim lost', async () => {
    const w = world(full());
    w.kube.script('replaceStatus', 'EtcdSnapshot', null, { kind: 'conflict', message: 'x' });
    const claimedAt = '2026-11-22T10:02:00Z';
    const other = { ...snapshot(), status: { phase: 'Complete', startTime: claimedAt } };
    w.kube.script('get', 'EtcdSnapshot', null, { kind: 'found', object: other });
    assert.deepEqual(await w.run(), {
      result: 'done',
      summary: 'EtcdSnapshot before-upgrade: claim lost; result not recorded',
    });
  });

  it('the result re-read after a conflict: its status gone: claim lost', async () => {
    const w = world(full());
    w.kube.script('replaceStatus', 'EtcdSnapshot', null, { kind: 'conflict', message: 'x' });
    w.kube.script('get', 'EtcdSnapshot', null, { kind: 'found', object: snapshot() });
    assert.deepEqual(await w.run(), {
      result: 'done',
      summary: 'EtcdSnapshot before-upgrade: claim lost; result not recorded',
    });
  });
});
