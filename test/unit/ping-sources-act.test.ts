// The I/O of the PingSources etcdfn owns, over an in-memory Kubernetes (test/support/fake-kube.ts):
// where they send (shared/reconcile/ping-sink.ts: the Broker's address, read from the operator's
// namespace), a schedule's own timing (schedule-ping.ts) and an object's wake-up (wake.ts): what is
// created, replaced or deleted (by uid), a PingSource of the name someone else owns left alone, and
// every failure said in the summary rather than thrown.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdSnapshotSchedule } from '../../shared/api/etcd-snapshot-schedule.ts';
import type { PingSource } from '../../shared/builders/ping-source.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { wakePingSource } from '../../shared/plan/wake/wake.ts';
import { brokerIngress, pingSink } from '../../shared/reconcile/ping-sink.ts';
import { ensureSchedulePing } from '../../shared/reconcile/schedule-ping.ts';
import { ensureWake } from '../../shared/reconcile/wake.ts';
import { FakeKube, fakeContext } from '../support/fake-kube.ts';

process.env.LOG_LEVEL ??= 'silent';

const broker = (namespace: string, url?: string) => ({
  apiVersion: 'eventing.knative.dev/v1',
  kind: 'Broker',
  metadata: { name: 'etcdfn', namespace },
  ...(url && { status: { address: { url, audience: 'aud', CACerts: 'PEM' } } }),
});

describe('pingSink: where PingSources send', () => {
  it('$ETCDFN_SCHEDULE_SINK first: no Broker read', async () => {
    const kube = new FakeKube([broker('etcdfn-system', 'http://b/x')]);
    const sink = await pingSink(fakeContext(kube, {}, { scheduleSink: { uri: 'https://over.example/x' } }));
    assert.deepEqual(sink, { uri: 'https://over.example/x' });
    assert.deepEqual(kube.calls, []);
  });

  it('the Broker of the operator’s namespace, at its published address', async () => {
    const kube = new FakeKube([
      broker('ops', 'https://broker.corp/ops/etcdfn'),
      broker('etcdfn-system', 'http://wrong'),
    ]);
    const sink = await pingSink(fakeContext(kube, {}, { operatorNamespace: 'ops' }));
    assert.deepEqual(sink, { uri: 'https://broker.corp/ops/etcdfn', audience: 'aud', CACerts: 'PEM' });
    assert.deepEqual(kube.calls, ['get Broker ops/etcdfn']);
  });

  it('no operator namespace set: etcdfn-system’s Broker', async () => {
    const kube = new FakeKube([broker('etcdfn-system', 'https://broker.corp/etcdfn-system/etcdfn')]);
    const sink = await pingSink(fakeContext(kube, {}, { operatorNamespace: '' }));
    assert.equal(sink.uri, 'https://broker.corp/etcdfn-system/etcdfn');
  });

  it('no Broker API (standalone mode): the ingress by name', async () => {
    const kube = new FakeKube();
    kube.script('get', 'Broker', new Error('the server could not find the requested resource'));
    const sink = await pingSink(fakeContext(kube, {}, { operatorNamespace: 'ops' }));
    assert.deepEqual(sink, brokerIngress('ops'));
  });

  it('no Broker there: the ingress by name', async () => {
    const sink = await pingSink(fakeContext(new FakeKube(), {}, { operatorNamespace: 'ops' }));
    assert.deepEqual(sink, { uri: 'http://broker-ingress.knative-eventing.svc/ops/etcdfn' });
  });
});

const schedule = (o: { suspend?: boolean; deleting?: boolean } = {}) =>
  ({
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshotSchedule',
    metadata: {
      name: 'nightly',
      namespace: 'prod',
      uid: 'sched-uid',
      ...(o.deleting && { deletionTimestamp: new Date() }),
    },
    spec: {
      clusterRef: { name: 'demo' },
      schedule: '0 3 * * *',
      suspend: o.suspend ?? false,
      destination: {
        s3: { endpoint: 'https://s3.example', bucket: 'b', credentialsSecretRef: { name: 's' } },
      },
    },
  }) as EtcdSnapshotSchedule & KubeObject;

const SCHEDULE_REF = { namespace: 'prod', name: 'nightly' };
const pingOf = (kube: FakeKube, name: string) =>
  kube.stored<PingSource & KubeObject>('PingSource', 'prod', name);
const settings = { scheduleSink: { uri: 'http://sink/prod' } };

describe('a schedule’s PingSource', () => {
  it('created on the schedule’s timing, owned by it, sending to the sink', async () => {
    const kube = new FakeKube([schedule()]);
    const summary = await ensureSchedulePing(fakeContext(kube, {}, settings), SCHEDULE_REF);
    assert.equal(summary, 'PingSource etcdfn-schedule-nightly created (0 3 * * *)');
    const ping = pingOf(kube, 'etcdfn-schedule-nightly');
    assert.equal(ping?.spec.schedule, '0 3 * * *');
    assert.equal(ping?.metadata.ownerReferences?.[0]?.uid, 'sched-uid');
    assert.deepEqual(ping?.spec.sink, { uri: 'http://sink/prod' });
  });

  it('up to date: nothing written', async () => {
    const kube = new FakeKube([schedule()]);
    const ctx = fakeContext(kube, {}, settings);
    await ensureSchedulePing(ctx, SCHEDULE_REF);
    const writes = kube.writes.length;
    assert.equal(
      await ensureSchedulePing(ctx, SCHEDULE_REF),
      'PingSource etcdfn-schedule-nightly up to date',
    );
    assert.equal(kube.writes.length, writes);
  });

  it('the schedule’s timing changed: replaced', async () => {
    const kube = new FakeKube([schedule()]);
    const ctx = fakeContext(kube, {}, settings);
    await ensureSchedulePing(ctx, SCHEDULE_REF);
    const edited = kube.stored<EtcdSnapshotSchedule & KubeObject>('EtcdSnapshotSchedule', 'prod', 'nightly')!;
    kube.put({ ...edited, spec: { ...edited.spec, schedule: '*/5 * * * *' } } as KubeObject);
    assert.equal(await ensureSchedulePing(ctx, SCHEDULE_REF), 'PingSource etcdfn-schedule-nightly updated');
    assert.equal(pingOf(kube, 'etcdfn-schedule-nightly')?.spec.schedule, '*/5 * * * *');
  });

  it('a replace that conflicts: said, not thrown', async () => {
    const kube = new FakeKube([schedule()]);
    const ctx = fakeContext(kube, {}, settings);
    await ensureSchedulePing(ctx, SCHEDULE_REF);
    const edited = kube.stored<EtcdSnapshotSchedule & KubeObject>('EtcdSnapshotSchedule', 'prod', 'nightly')!;
    kube.put({ ...edited, spec: { ...edited.spec, schedule: '*/5 * * * *' } } as KubeObject);
    kube.script('replace', 'PingSource', { kind: 'conflict', message: 'x' });
    assert.equal(await ensureSchedulePing(ctx, SCHEDULE_REF), 'PingSource etcdfn-schedule-nightly conflict');
  });

  it('suspended: deleted, by uid', async () => {
    const kube = new FakeKube([schedule()]);
    const ctx = fakeContext(kube, {}, settings);
    await ensureSchedulePing(ctx, SCHEDULE_REF);
    const uid = pingOf(kube, 'etcdfn-schedule-nightly')?.metadata.uid;
    kube.put(schedule({ suspend: true }));
    assert.equal(
      await ensureSchedulePing(ctx, SCHEDULE_REF),
      'PingSource etcdfn-schedule-nightly deleted (schedule suspended)',
    );
    assert.deepEqual(
      kube.deletes.map(d => d.options),
      [{ uid }],
    );
    assert.equal(pingOf(kube, 'etcdfn-schedule-nightly'), undefined);
  });

  it('a PingSource of the name it does not own: left alone, said', async () => {
    const theirs = {
      apiVersion: 'sources.knative.dev/v1',
      kind: 'PingSource',
      metadata: { name: 'etcdfn-schedule-nightly', namespace: 'prod', uid: 'x' },
      spec: { schedule: '1 1 * * *' },
    };
    const kube = new FakeKube([schedule(), theirs]);
    const summary = await ensureSchedulePing(fakeContext(kube, {}, settings), SCHEDULE_REF);
    assert.match(summary, /exists and does not belong to EtcdSnapshotSchedule nightly/);
    assert.deepEqual(kube.writes, []);
  });

  it('refused: said with the API server’s words', async () => {
    const kube = new FakeKube([schedule()]);
    kube.script('create', 'PingSource', { kind: 'invalid', message: 'bad schedule' });
    const summary = await ensureSchedulePing(fakeContext(kube, {}, settings), SCHEDULE_REF);
    assert.equal(summary, 'PingSource etcdfn-schedule-nightly refused: bad schedule');
  });

  it('no PingSource API: said, the schedule left to the tick, not thrown', async () => {
    const kube = new FakeKube([schedule()]);
    kube.script('create', 'PingSource', new Error('404 page not found'));
    const summary = await ensureSchedulePing(fakeContext(kube, {}, settings), SCHEDULE_REF);
    assert.equal(
      summary,
      'PingSource not written (404 page not found): until it is, the schedule runs on the resync tick only',
    );
  });

  it('no schedule (or one being deleted): nothing read beyond it, nothing written', async () => {
    for (const objects of [[], [schedule({ deleting: true })]]) {
      const kube = new FakeKube(objects);
      assert.equal(
        await ensureSchedulePing(fakeContext(kube, {}, settings), SCHEDULE_REF),
        'no schedule, no PingSource',
      );
      assert.deepEqual(kube.calls, ['get EtcdSnapshotSchedule prod/nightly']);
    }
  });
});

describe('a wake-up PingSource', () => {
  const owner = {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: { name: 'before-upgrade', namespace: 'prod', uid: 'snap-uid' },
  };
  const desired = (schedule = '* * * * *') => {
    const p = wakePingSource(owner, 'before-upgrade-wake', 'etcdSnapshot', 'demo', { uri: 'http://sink' });
    return { ...p, spec: { ...p.spec, schedule } };
  };

  it('created when wanted, saying when it fires', async () => {
    const kube = new FakeKube();
    const summary = await ensureWake(fakeContext(kube), owner, 'before-upgrade-wake', desired());
    assert.equal(summary, 'PingSource before-upgrade-wake created: looked at again on "* * * * *"');
    assert.equal(pingOf(kube, 'before-upgrade-wake')?.metadata.ownerReferences?.[0]?.uid, 'snap-uid');
  });

  it('already there: said', async () => {
    const kube = new FakeKube();
    kube.script('create', 'PingSource', { kind: 'already-exists' });
    assert.equal(
      await ensureWake(fakeContext(kube), owner, 'before-upgrade-wake', desired()),
      'PingSource before-upgrade-wake already-exists',
    );
  });

  it('as wanted: nothing written, an empty summary', async () => {
    const kube = new FakeKube();
    const ctx = fakeContext(kube);
    await ensureWake(ctx, owner, 'before-upgrade-wake', desired());
    const writes = kube.writes.length;
    assert.equal(await ensureWake(ctx, owner, 'before-upgrade-wake', desired()), '');
    assert.equal(kube.writes.length, writes);
  });

  it('its timing changed: replaced', async () => {
    const kube = new FakeKube();
    const ctx = fakeContext(kube);
    await ensureWake(ctx, owner, 'before-upgrade-wake', desired());
    assert.equal(
      await ensureWake(ctx, owner, 'before-upgrade-wake', desired('*/2 * * * *')),
      'PingSource before-upgrade-wake now on */2 * * * *',
    );
    assert.equal(pingOf(kube, 'before-upgrade-wake')?.spec.schedule, '*/2 * * * *');
  });

  it('a replace that conflicts: said', async () => {
    const kube = new FakeKube();
    const ctx = fakeContext(kube);
    await ensureWake(ctx, owner, 'before-upgrade-wake', desired());
    kube.script('replace', 'PingSource', { kind: 'conflict', message: 'x' });
    assert.equal(
      await ensureWake(ctx, owner, 'before-upgrade-wake', desired('*/2 * * * *')),
      'PingSource before-upgrade-wake conflict',
    );
  });

  it('no longer wanted: deleted by uid', async () => {
    const kube = new FakeKube();
    const ctx = fakeContext(kube);
    await ensureWake(ctx, owner, 'before-upgrade-wake', desired());
    const uid = pingOf(kube, 'before-upgrade-wake')?.metadata.uid;
    assert.equal(
      await ensureWake(ctx, owner, 'before-upgrade-wake', undefined),
      'PingSource before-upgrade-wake deleted (no longer waiting)',
    );
    assert.deepEqual(
      kube.deletes.map(d => d.options),
      [{ uid }],
    );
  });

  it('neither wanted nor there: nothing', async () => {
    const kube = new FakeKube();
    assert.equal(await ensureWake(fakeContext(kube), owner, 'before-upgrade-wake', undefined), '');
    assert.deepEqual(kube.writes, []);
  });

  it('one of the name it does not own: left alone, said', async () => {
    const theirs = {
      apiVersion: 'sources.knative.dev/v1',
      kind: 'PingSource',
      metadata: { name: 'before-upgrade-wake', namespace: 'prod', uid: 'x' },
      spec: {},
    };
    const kube = new FakeKube([theirs]);
    const summary = await ensureWake(fakeContext(kube), owner, 'before-upgrade-wake', undefined);
    assert.match(summary, /exists and does not belong to EtcdSnapshot before-upgrade/);
    assert.deepEqual(kube.writes, []);
  });

  it('refused: said', async () => {
    const kube = new FakeKube();
    kube.script('create', 'PingSource', { kind: 'invalid', message: 'bad' });
    assert.equal(
      await ensureWake(fakeContext(kube), owner, 'before-upgrade-wake', desired()),
      'PingSource before-upgrade-wake refused: bad',
    );
  });

  it('any failure: said, the tick left to look again', async () => {
    const kube = new FakeKube();
    kube.script('get', 'PingSource', new Error('no PingSource API'));
    assert.equal(
      await ensureWake(fakeContext(kube), owner, 'before-upgrade-wake', desired()),
      'wake-up PingSource before-upgrade-wake not written (no PingSource API): looked at again on the resync tick',
    );
  });
});
