// A schedule's own timing (shared/plan/schedule-ping.ts) and the bridge's timer for it
// (standalone/bridge/api-pings.ts): which PingSource a schedule gets, what changes it, which event
// names which schedule, and a timer that fires once when its clock passes the cron's time.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cron } from 'croner';
import type { EtcdSnapshotSchedule } from '../../shared/api/etcd-snapshot-schedule.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import {
  desiredPingSource,
  pingSchedule,
  pingSourceName,
  pingSourceStep,
  scheduleOfPing,
  type PingSource,
} from '../../shared/plan/schedule-ping.ts';
import { snapshotTarget } from '../../functions/run-snapshot/targets.ts';
import { ClockTicker, pingSpecOf } from '../../standalone/bridge/api-pings.ts';
import type { WatchedObject } from '../../standalone/bridge/format.ts';
import { parseCadence } from '../../shared/plan/schedule-plan.ts';

type Schedule = EtcdSnapshotSchedule & KubeObject;
const SINK = 'http://broker-ingress.knative-eventing.svc.cluster.local/etcdfn-system/etcdfn';

function schedule(spec: Partial<Schedule['spec']> = {}, name = 'nightly'): Schedule {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshotSchedule',
    metadata: { name, namespace: 'team-a', uid: 'uid-1' },
    spec: {
      clusterRef: { name: 'demo' },
      schedule: '0 3 * * *',
      destination: {
        s3: { endpoint: 'https://s3.example', bucket: 'b', credentialsSecretRef: { name: 's' } },
      },
      ...spec,
    },
  };
}

describe('the PingSource of a schedule', () => {
  it('copies cron and time zone, names the schedule in its data, is owned by it, next to it', () => {
    const ping = desiredPingSource(schedule({ timeZone: 'Europe/Paris' }), SINK)!;
    assert.equal(ping.metadata.name, 'etcdfn-schedule-nightly');
    assert.equal(ping.metadata.namespace, 'team-a');
    assert.deepEqual(ping.spec, {
      schedule: '0 3 * * *',
      timezone: 'Europe/Paris',
      contentType: 'application/json',
      data: '{"etcdSnapshotSchedule":{"namespace":"team-a","name":"nightly"}}',
      sink: { uri: SINK },
    });
    assert.deepEqual(ping.metadata.ownerReferences, [
      {
        apiVersion: 'etcdfn.io/v1alpha1',
        kind: 'EtcdSnapshotSchedule',
        name: 'nightly',
        uid: 'uid-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.equal(ping.metadata.labels?.['etcdfn.io/schedule-timing'], 'true');
    assert.equal(ping.metadata.labels?.['etcdfn.io/cluster'], 'demo');
  });

  it('a suspended schedule has none', () => {
    assert.equal(desiredPingSource(schedule({ suspend: true }), SINK), undefined);
  });

  it('long names stay within 63 characters and stay distinct', () => {
    const a = pingSourceName('x'.repeat(100));
    const b = pingSourceName(`${'x'.repeat(99)}y`);
    assert.ok(a.length <= 63 && b.length <= 63);
    assert.notEqual(a, b);
  });

  it('@every becomes a UTC cron that fires at every run the plan counts (from the epoch)', () => {
    assert.deepEqual(pingSchedule('@every 6h', 'Asia/Kolkata'), { schedule: '0 */6 * * *' });
    assert.deepEqual(pingSchedule('@every 24h'), { schedule: '0 0 * * *' });
    assert.deepEqual(pingSchedule('@every 15m'), { schedule: '*/15 * * * *' });
    assert.deepEqual(pingSchedule('@every 90m'), { schedule: '*/30 * * * *' });
    assert.deepEqual(pingSchedule('@every 5h'), { schedule: '0 */1 * * *' });
    assert.deepEqual(pingSchedule('@daily', 'UTC'), { schedule: '@daily', timezone: 'UTC' });
    // Every run of the plan over two days is a firing of the PingSource.
    for (const every of ['@every 6h', '@every 90m', '@every 5h', '@every 7m', '@every 1h30m']) {
      const cadence = parseCadence(every);
      assert.ok(typeof cadence !== 'string');
      const cron = new Cron(pingSchedule(every).schedule, { paused: true, timezone: 'UTC' });
      let t = new Date('2026-03-01T00:00:00Z');
      for (let i = 0; i < 40; i++) {
        t = cadence.next(t)!;
        const fire = cron.nextRun(new Date(t.getTime() - 1000));
        assert.equal(fire?.getTime(), t.getTime(), `${every}: ${t.toISOString()}`);
      }
    }
  });
});

describe('what to do with the existing PingSource', () => {
  const s = schedule();
  const desired = desiredPingSource(s, SINK)!;
  const existing = (change: (p: PingSource) => void = () => {}): PingSource => {
    const copy = structuredClone(desired);
    copy.metadata.uid = 'ping-uid';
    change(copy);
    return copy;
  };

  it('creates a missing one, leaves an equal one, updates a changed cron', () => {
    assert.equal(pingSourceStep(s, desired, undefined).kind, 'create');
    assert.equal(pingSourceStep(s, desired, existing()).kind, 'none');
    const step = pingSourceStep(
      s,
      desired,
      existing(p => (p.spec.schedule = '0 4 * * *')),
    );
    assert.equal(step.kind, 'update');
    assert.equal(step.kind === 'update' && step.object.spec.schedule, '0 3 * * *');
    assert.equal(step.kind === 'update' && step.object.metadata.uid, 'ping-uid');
  });

  it('ignores what the API server adds to the spec', () => {
    const defaulted = existing(p => Object.assign(p.spec, { ceOverrides: { extensions: {} } }));
    assert.equal(pingSourceStep(s, desired, defaulted).kind, 'none');
  });

  it('deletes the one of a suspended schedule, by uid', () => {
    assert.deepEqual(pingSourceStep(s, undefined, existing()), {
      kind: 'delete',
      name: 'etcdfn-schedule-nightly',
      uid: 'ping-uid',
    });
    assert.deepEqual(pingSourceStep(s, undefined, undefined), { kind: 'none' });
  });

  it('never touches a PingSource the schedule does not own', () => {
    const foreign = existing(p => (p.metadata.ownerReferences = []));
    const step = pingSourceStep(s, desired, foreign);
    assert.equal(step.kind, 'conflict');
    assert.equal(pingSourceStep(s, undefined, foreign).kind, 'conflict');
  });
});

describe('events of a schedule PingSource', () => {
  const envelope = {
    id: '1',
    source: '/apis/v1/namespaces/team-a/pingsources/etcdfn-schedule-nightly',
    type: 'dev.knative.sources.ping',
  };

  it('run-snapshot reconciles the schedule its data names; any other tick resyncs everything', () => {
    const data = { etcdSnapshotSchedule: { namespace: 'team-a', name: 'nightly' } };
    assert.deepEqual(snapshotTarget({ ...envelope, kind: 'tick', data } as never), {
      kind: 'schedule',
      namespace: 'team-a',
      name: 'nightly',
    });
    assert.deepEqual(snapshotTarget({ ...envelope, kind: 'tick', data: JSON.stringify(data) } as never), {
      kind: 'schedule',
      namespace: 'team-a',
      name: 'nightly',
    });
    assert.deepEqual(snapshotTarget({ ...envelope, kind: 'tick', data: { tick: 'resync' } } as never), {
      kind: 'resync',
    });
  });

  it('data that does not name a schedule names none', () => {
    for (const data of [
      undefined,
      null,
      'x',
      '{',
      { etcdSnapshotSchedule: { name: 'a' } },
      { etcdSnapshotSchedule: { namespace: '', name: 'a' } },
    ])
      assert.equal(scheduleOfPing(data), undefined, JSON.stringify(data));
  });
});

describe("the bridge's timer for a PingSource found in the API server", () => {
  const ping = pingSpecOf(
    desiredPingSource(schedule({ timeZone: 'Asia/Kolkata' }), SINK) as unknown as WatchedObject,
  )!;

  it('reads the fields a tick needs', () => {
    assert.equal(ping.name, 'etcdfn-schedule-nightly');
    assert.equal(ping.namespace, 'team-a');
    assert.equal(ping.timezone, 'Asia/Kolkata');
    assert.equal(pingSpecOf({ apiVersion: 'v', kind: 'PingSource', metadata: {}, spec: {} }), undefined);
  });

  it('fires once when the clock passes the time (03:00 in Kolkata = 21:30 UTC), however far it moved', () => {
    let now = Date.parse('2026-03-01T21:00:00Z');
    const fired: number[] = [];
    const ticker = new ClockTicker(
      ping,
      () => now,
      () => fired.push(now),
    );
    ticker.start();
    ticker.stop(); // driven by hand below
    assert.equal(ticker.nextRun()?.toISOString(), '2026-03-01T21:30:00.000Z');
    assert.equal(ticker.check(), false);
    now = Date.parse('2026-03-01T21:29:59Z');
    assert.equal(ticker.check(), false);
    now = Date.parse('2026-03-01T21:45:00Z');
    assert.equal(ticker.check(), true);
    assert.equal(ticker.check(), false, 'not twice for one time');
    assert.equal(ticker.nextRun()?.toISOString(), '2026-03-02T21:30:00.000Z');
    now = Date.parse('2026-03-05T00:00:00Z'); // days later: one firing, not one per missed day
    assert.equal(ticker.check(), true);
    assert.equal(ticker.check(), false);
    assert.equal(fired.length, 2);
  });
});
