// A schedule's own timing (shared/plan/schedule/ping.ts) and the bridge's timer for it
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
} from '../../shared/plan/schedule/ping.ts';
import { snapshotTarget } from '../../functions/run-snapshot/targets.ts';
import { ClockTicker, pingSpecOf } from '../../standalone/bridge/api-pings.ts';
import type { WatchedObject } from '../../standalone/bridge/format.ts';
import { parseCadence } from '../../shared/plan/schedule/cadence.ts';

type Schedule = EtcdSnapshotSchedule & KubeObject;
const SINK = { uri: 'http://broker-ingress.knative-eventing.svc.cluster.local/etcdfn-system/etcdfn' };

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
    assert.equal(ping.apiVersion, 'sources.knative.dev/v1');
    assert.equal(ping.kind, 'PingSource');
    assert.equal(ping.metadata.name, 'etcdfn-schedule-nightly');
    assert.equal(ping.metadata.namespace, 'team-a');
    assert.deepEqual(ping.spec, {
      schedule: '0 3 * * *',
      timezone: 'Europe/Paris',
      contentType: 'application/json',
      data: '{"etcdSnapshotSchedule":{"namespace":"team-a","name":"nightly"}}',
      sink: SINK,
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

  it('a name of up to 63 characters is kept; a longer one is cut, its trailing - or . dropped, and a hash of the name added', () => {
    const rows: [string, string][] = [
      ['a'.repeat(47), `etcdfn-schedule-${'a'.repeat(47)}`],
      ['a'.repeat(48), `etcdfn-schedule-${'a'.repeat(38)}-97daac0e`],
      [`${'a'.repeat(37)}-${'b'.repeat(10)}`, `etcdfn-schedule-${'a'.repeat(37)}-688fe136`],
      [`${'a'.repeat(36)}-.${'b'.repeat(10)}`, `etcdfn-schedule-${'a'.repeat(36)}-939a2f4e`],
    ];
    for (const [schedule, ping] of rows) assert.equal(pingSourceName(schedule), ping, schedule);
  });

  it('labels: the cluster, the schedule (cut to 63), the timing label and etcdfn as manager', () => {
    const long = 'n'.repeat(70);
    assert.deepEqual(desiredPingSource(schedule({}, long), SINK)?.metadata.labels, {
      'etcdfn.io/cluster': 'demo',
      'etcdfn.io/schedule': 'n'.repeat(63),
      'etcdfn.io/schedule-timing': 'true',
      'app.kubernetes.io/managed-by': 'etcdfn',
    });
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
    assert.deepEqual(pingSchedule('@daily'), { schedule: '@daily' });
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

describe('the UTC cron of an @every schedule', () => {
  const rows: [string, string][] = [
    ['@every 2h', '0 */2 * * *'],
    ['@every 12h', '0 */12 * * *'],
    ['@every 48h', '0 0 * * *'],
    ['@every 30m', '*/30 * * * *'],
    ['@every 45m', '*/15 * * * *'],
    ['@every 120m', '0 */2 * * *'],
    ['@every 1h30m', '*/30 * * * *'],
    ['@every 7m', '* * * * *'],
    ['@every 0m', '* * * * *'],
    [' @every 6h ', '0 */6 * * *'],
  ];
  for (const [every, cron] of rows) {
    it(`${JSON.stringify(every)} fires at ${cron} UTC, with no time zone`, () => {
      assert.deepEqual(pingSchedule(every, 'Europe/Paris'), { schedule: cron });
    });
  }
  it('anything not exactly @every <h>h<m>m is a cron or macro, copied with its time zone', () => {
    for (const other of [
      'x@every 6h',
      '@every 6h x',
      '@every 6hours',
      '@every h',
      '@every 6d',
      '0 */6 * * *',
    ])
      assert.deepEqual(
        pingSchedule(other, 'Europe/Paris'),
        { schedule: other, timezone: 'Europe/Paris' },
        other,
      );
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

  it('updates any field that differs, keeping labels it does not set and adding those missing', () => {
    const changes: [string, (p: PingSource) => void][] = [
      ['time zone added', p => (p.spec.timezone = 'Europe/Paris')],
      ['content type', p => (p.spec.contentType = 'text/plain')],
      ['data', p => (p.spec.data = '{}')],
      ['sink', p => (p.spec.sink = { uri: 'http://elsewhere' })],
      ['no sink', p => delete (p.spec as Partial<PingSource['spec']>).sink],
      ['no spec', p => delete (p as Partial<PingSource>).spec],
      ['a label changed', p => (p.metadata.labels!['etcdfn.io/cluster'] = 'other')],
      ['no labels', p => delete p.metadata.labels],
    ];
    for (const [what, change] of changes) {
      const have = existing(p => {
        change(p);
        if (p.metadata.labels) p.metadata.labels.team = 'a';
      });
      const step = pingSourceStep(s, desired, have);
      assert.equal(step.kind, 'update', what);
      if (step.kind !== 'update') continue;
      assert.deepEqual(step.object.spec, desired.spec, what);
      assert.deepEqual(
        step.object.metadata.labels,
        { ...desired.metadata.labels, ...(have.metadata.labels && { team: 'a' }) },
        what,
      );
      assert.equal(step.object.metadata.uid, 'ping-uid', what);
    }
  });

  it('a time zone both have, the same, is no change; a different one is', () => {
    const paris = schedule({ timeZone: 'Europe/Paris' });
    const want = desiredPingSource(paris, SINK)!;
    const have = structuredClone(want);
    assert.equal(pingSourceStep(paris, want, have).kind, 'none');
    have.spec.timezone = 'Asia/Kolkata';
    assert.equal(pingSourceStep(paris, want, have).kind, 'update');
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

  it('owned means: controlled by this schedule’s uid; anything else is left alone and said so', () => {
    const ref = { apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdSnapshotSchedule', name: 'nightly' };
    const others: [string, PingSource['metadata']['ownerReferences']][] = [
      ['no owner references', undefined],
      ['another schedule of that name', [{ ...ref, uid: 'uid-0', controller: true }]],
      ['this schedule, not as controller', [{ ...ref, uid: 'uid-1', controller: false }]],
      ['this schedule, controller unset', [{ ...ref, uid: 'uid-1' }]],
    ];
    for (const [what, refs] of others) {
      const foreign = existing(p => (p.metadata.ownerReferences = refs));
      for (const want of [desired, undefined]) {
        assert.deepEqual(
          pingSourceStep(s, want, foreign),
          {
            kind: 'conflict',
            message:
              'PingSource team-a/etcdfn-schedule-nightly exists and does not belong to EtcdSnapshotSchedule nightly: left alone, so runs wait for the resync tick',
          },
          what,
        );
      }
    }
    const shared = existing(p => {
      p.metadata.ownerReferences = [
        { ...ref, uid: 'uid-0', controller: false },
        { ...ref, uid: 'uid-1', controller: true },
      ];
    });
    assert.equal(pingSourceStep(s, desired, shared).kind, 'none', 'one of several references is ours');
  });

  it('a schedule with no uid owns nothing, not even a PingSource whose reference has none', () => {
    const anonymous = { ...s, metadata: { ...s.metadata, uid: undefined } };
    const odd = existing(
      p => (p.metadata.ownerReferences = [{ ...p.metadata.ownerReferences![0], uid: undefined as never }]),
    );
    assert.equal(pingSourceStep(anonymous, undefined, odd).kind, 'conflict');
  });

  it('deletes one with no uid by name alone', () => {
    const noUid = existing(p => delete p.metadata.uid);
    assert.deepEqual(pingSourceStep(s, undefined, noUid), {
      kind: 'delete',
      name: 'etcdfn-schedule-nightly',
    });
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
      { etcdSnapshotSchedule: { namespace: 'a', name: '' } },
      { etcdSnapshotSchedule: { namespace: 'a' } },
      { etcdSnapshotSchedule: { namespace: 1, name: 'a' } },
      { etcdSnapshotSchedule: { namespace: 'a', name: 1 } },
      { etcdSnapshotSchedule: null },
      '{"etcdSnapshotSchedule":{"namespace":"a"}}',
      'null',
    ])
      assert.equal(scheduleOfPing(data), undefined, JSON.stringify(data));
  });

  it('data that names a schedule gives exactly its namespace and name, as an object or as JSON text', () => {
    const ref = { namespace: 'team-a', name: 'nightly' };
    assert.deepEqual(scheduleOfPing({ etcdSnapshotSchedule: { ...ref, extra: 1 } }), ref);
    assert.deepEqual(scheduleOfPing(JSON.stringify({ etcdSnapshotSchedule: ref })), ref);
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
