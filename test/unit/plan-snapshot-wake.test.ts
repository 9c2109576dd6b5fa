// A snapshot's wake-up PingSource (shared/plan/wake/snapshot-wake.ts): present exactly while the
// snapshot is unfinished, owned by it, naming it; the event it sends reaches that snapshot, and the
// bridge's timer fires it every minute.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { snapshotTarget } from '../../functions/run-snapshot/targets.ts';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { SCHEDULE_PING_LABEL, type PingSource } from '../../shared/plan/schedule/ping.ts';
import { desiredWake, snapshotOfWake, wakeName } from '../../shared/plan/wake/snapshot-wake.ts';
import { wakeStep } from '../../shared/plan/wake/wake.ts';
import { ClockTicker, pingSpecOf } from '../../standalone/bridge/api-pings.ts';
import type { WatchedObject } from '../../standalone/bridge/format.ts';

const SINK = { uri: 'http://broker.example/etcdfn' };
type Snapshot = EtcdSnapshot & KubeObject;

function snapshot(phase?: string, extra: Partial<Snapshot['metadata']> = {}): Snapshot {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: { name: 'before-upgrade', namespace: 'team-a', uid: 'uid-1', ...extra },
    spec: {
      clusterRef: { name: 'main' },
      destination: { s3: { endpoint: 'https://s3', bucket: 'b', credentialsSecretRef: { name: 'c' } } },
    },
    ...(phase && { status: { phase } }),
  } as Snapshot;
}

describe('desiredWake', () => {
  for (const phase of [undefined, 'Pending', 'Started']) {
    it(`${phase ?? 'no status'}: every minute, owned by the snapshot, naming it, for the bridge and Knative alike`, () => {
      const wake = desiredWake(snapshot(phase), SINK)!;
      assert.equal(wake.metadata.name, 'etcdfn-wake-before-upgrade');
      assert.equal(wake.metadata.namespace, 'team-a');
      assert.equal(wake.spec.schedule, '* * * * *');
      assert.equal(wake.spec.sink.uri, SINK.uri);
      assert.equal(wake.spec.contentType, 'application/json');
      assert.deepEqual(JSON.parse(wake.spec.data), {
        etcdSnapshot: { namespace: 'team-a', name: 'before-upgrade' },
      });
      assert.equal(
        wake.metadata.labels?.[SCHEDULE_PING_LABEL],
        'true',
        'the standalone bridge watches this label',
      );
      assert.equal(wake.metadata.labels?.['etcdfn.io/cluster'], 'main');
      assert.deepEqual(wake.metadata.ownerReferences, [
        {
          apiVersion: 'etcdfn.io/v1alpha1',
          kind: 'EtcdSnapshot',
          name: 'before-upgrade',
          uid: 'uid-1',
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    });
  }
  it('none once Complete or Failed, nor while the snapshot is being deleted', () => {
    assert.equal(desiredWake(snapshot('Complete'), SINK), undefined);
    assert.equal(desiredWake(snapshot('Failed'), SINK), undefined);
    assert.equal(
      desiredWake(snapshot('Pending', { deletionTimestamp: new Date('2026-11-26T12:00:00Z') }), SINK),
      undefined,
    );
  });
  it('a long name is cut to 63 characters with a hash, different names stay different', () => {
    const a = wakeName('x'.repeat(80));
    const b = wakeName(`${'x'.repeat(79)}y`);
    assert.equal(a.length, 63);
    assert.match(a, /^etcdfn-wake-x+-[0-9a-f]{8}$/);
    assert.notEqual(a, b);
    assert.equal(wakeName('s'), 'etcdfn-wake-s');
  });
});

describe('wakeStep', () => {
  const own = (uid = 'uid-1'): PingSource => ({
    ...desiredWake(snapshot('Pending'), SINK)!,
    metadata: {
      ...desiredWake(snapshot('Pending'), SINK)!.metadata,
      uid: 'ping-uid',
      ownerReferences: [
        { apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdSnapshot', name: 'x', uid, controller: true },
      ],
    },
  });
  it('unfinished, none yet: create it', () => {
    const desired = desiredWake(snapshot('Pending'), SINK);
    assert.deepEqual(wakeStep(snapshot('Pending'), desired, undefined), { kind: 'create', object: desired });
  });
  it('unfinished, ours exists: nothing to write', () => {
    assert.deepEqual(wakeStep(snapshot('Pending'), desiredWake(snapshot('Pending'), SINK), own()), {
      kind: 'none',
    });
  });
  it('finished, ours exists: delete exactly that object (by its UID)', () => {
    assert.deepEqual(wakeStep(snapshot('Complete'), undefined, own()), {
      kind: 'delete',
      name: 'etcdfn-wake-before-upgrade',
      uid: 'ping-uid',
    });
  });
  it('finished, none: nothing', () => {
    assert.deepEqual(wakeStep(snapshot('Complete'), undefined, undefined), { kind: 'none' });
  });
  it("a PingSource of that name that is not the snapshot's own is never deleted nor taken over", () => {
    for (const phase of ['Pending', 'Complete']) {
      const step = wakeStep(snapshot(phase), desiredWake(snapshot(phase), SINK), own('someone-else'));
      assert.equal(step.kind, 'conflict', phase);
      assert.match(
        step.kind === 'conflict' ? step.message : '',
        /PingSource team-a\/etcdfn-wake-before-upgrade exists and does not belong to EtcdSnapshot before-upgrade: left alone/,
      );
    }
    const uidless = snapshot('Complete', { uid: undefined });
    assert.equal(wakeStep(uidless, undefined, own()).kind, 'conflict', 'no UID, no claim of ownership');
  });
});

describe('the wake-up event', () => {
  const envelope = {
    id: '1',
    source: '/apis/v1/namespaces/team-a/pingsources/etcdfn-wake-before-upgrade',
    type: 'dev.knative.sources.ping',
  };
  it('run-snapshot reconciles the snapshot its data names (object or JSON text)', () => {
    const data = { etcdSnapshot: { namespace: 'team-a', name: 'before-upgrade' } };
    for (const d of [data, JSON.stringify(data)]) {
      assert.deepEqual(snapshotTarget({ ...envelope, kind: 'tick', data: d } as never), {
        kind: 'snapshot',
        namespace: 'team-a',
        name: 'before-upgrade',
      });
    }
  });
  it('data that does not name a snapshot names none', () => {
    for (const data of [
      undefined,
      null,
      'x',
      '{',
      { etcdSnapshot: { name: 'a' } },
      { etcdSnapshot: { namespace: '', name: 'a' } },
      { etcdSnapshot: { namespace: 'n', name: '' } },
      { etcdSnapshot: { namespace: 'n', name: 3 } },
    ])
      assert.equal(snapshotOfWake(data), undefined, JSON.stringify(data));
  });
  it("the bridge's timer fires it at every minute boundary the clock passes", () => {
    const ping = pingSpecOf(desiredWake(snapshot('Pending'), SINK) as unknown as WatchedObject)!;
    let now = Date.parse('2026-11-26T12:00:30Z');
    const fired: string[] = [];
    const ticker = new ClockTicker(
      ping,
      () => now,
      () => fired.push(new Date(now).toISOString()),
    );
    ticker.start();
    try {
      for (const t of [
        '2026-11-26T12:00:59Z',
        '2026-11-26T12:01:00Z',
        '2026-11-26T12:01:30Z',
        '2026-11-26T12:02:00Z',
      ]) {
        now = Date.parse(t);
        ticker.check();
      }
    } finally {
      ticker.stop();
    }
    assert.deepEqual(fired, ['2026-11-26T12:01:00.000Z', '2026-11-26T12:02:00.000Z']);
  });
});
