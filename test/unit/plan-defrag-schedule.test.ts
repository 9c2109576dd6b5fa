// The defragmentation schedule (shared/plan/space/defrag-schedule.ts, through planCluster): when a run is
// due, which member it takes next (every member once, followers first, the leader last), what a
// claim left by a crash leads to, why a due run waits, and the PingSource that wakes the cluster.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster, EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import type { DefragScheduleStatus } from '../../shared/api/maintenance.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { planCluster } from '../../shared/plan/cluster/plan.ts';
import type { ClusterState, EtcdView } from '../../shared/plan/cluster/types.ts';
import { defragWakeName, desiredDefragWake } from '../../shared/plan/wake/cluster-wake.ts';
import {
  scheduledRun,
  statusWithoutClaim,
  type ScheduledRun,
} from '../../shared/plan/space/defrag-schedule.ts';
import { wakeStep } from '../../shared/plan/wake/wake.ts';
import { NOW, cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';
import type { MemberSpace } from '../../shared/plan/space/types.ts';

const MIB = 1024 * 1024;
const KEY = '* * * * * UTC';
const EVERY_MINUTE = { maintenance: { defrag: { schedule: '* * * * *' } } };
const ORDER = ['demo-0', 'demo-2', 'demo-1'];
const withRecord = (record?: DefragScheduleStatus, spec: Partial<EtcdCluster['spec']> = EVERY_MINUTE) =>
  cluster(spec, locked(3, { clusterID: 'c0ffee0000000001', ...(record && { defragSchedule: record }) }));

describe('defragmentation schedule: when a run is due and what it has left', () => {
  const rows: [string, EtcdCluster, ScheduledRun][] = [
    ['no schedule', cluster({}), { step: 'off' }],
    [
      'first seen: the next due time, nothing run',
      withRecord(),
      { step: 'idle', record: { schedule: KEY, nextRun: '2026-11-22T10:01:00.000Z' } },
    ],
    [
      'a cron in a time zone: its next time in UTC',
      withRecord(undefined, {
        maintenance: { defrag: { schedule: '0 3 * * *', timeZone: 'Europe/Berlin' } },
      }),
      {
        step: 'idle',
        record: { schedule: '0 3 * * * Europe/Berlin', nextRun: '2026-11-23T02:00:00.000Z' },
      },
    ],
    [
      'not due yet: the record as it is (no write)',
      withRecord({ schedule: KEY, nextRun: '2026-11-22T10:01:00.000Z' }),
      { step: 'idle', record: { schedule: KEY, nextRun: '2026-11-22T10:01:00.000Z' } },
    ],
    [
      'due: a new run, every member left, followers first',
      withRecord({ schedule: KEY, nextRun: '2026-11-22T10:00:00.000Z' }),
      {
        step: 'run',
        record: { schedule: KEY, lastRun: '2026-11-22T10:00:00.000Z', defragmented: [] },
        remaining: ORDER,
      },
    ],
    [
      'under way: the members it has not done',
      withRecord({ schedule: KEY, lastRun: '2026-11-22T09:59:00.000Z', defragmented: ['demo-0'] }),
      {
        step: 'run',
        record: {
          schedule: KEY,
          lastRun: '2026-11-22T09:59:00.000Z',
          defragmented: ['demo-0'],
          nextRun: '2026-11-22T10:01:00.000Z',
        },
        remaining: ['demo-2', 'demo-1'],
      },
    ],
    [
      'every member done: completed, the next due time after now (missed minutes not made up)',
      withRecord({ schedule: KEY, lastRun: '2026-11-22T09:55:00.000Z', defragmented: ORDER, waiting: 'x' }),
      {
        step: 'idle',
        record: {
          schedule: KEY,
          lastRun: '2026-11-22T09:55:00.000Z',
          defragmented: ORDER,
          completedAt: NOW.toISOString(),
          nextRun: '2026-11-22T10:01:00.000Z',
        },
      },
    ],
    [
      'schedule changed: the next due time recomputed',
      withRecord(
        { schedule: '0 3 * * * UTC', nextRun: '2026-11-23T03:00:00.000Z' },
        { maintenance: { defrag: { schedule: '*/15 * * * *' } } },
      ),
      { step: 'idle', record: { schedule: '*/15 * * * * UTC', nextRun: '2026-11-22T10:15:00.000Z' } },
    ],
    [
      'an unknown time zone: said, nothing run',
      withRecord(undefined, { maintenance: { defrag: { schedule: '* * * * *', timeZone: 'Mars/Olympus' } } }),
      {
        step: 'invalid',
        why: 'timeZone "Mars/Olympus" is not a known IANA time zone (for example UTC or Europe/Berlin)',
        record: {
          schedule: '* * * * * Mars/Olympus',
          waiting: 'timeZone "Mars/Olympus" is not a known IANA time zone (for example UTC or Europe/Berlin)',
        },
      },
    ],
  ];
  for (const [name, c, expected] of rows)
    it(name, () => assert.deepEqual(scheduledRun(c, ORDER, NOW), expected));

  it('a member joins its run once, and only the run its claim was for', () => {
    const status: EtcdClusterStatus = {
      operation: { type: 'defrag', member: 'demo-0' } as never,
      defragSchedule: { lastRun: 'r1', defragmented: [] },
    };
    assert.deepEqual(statusWithoutClaim(status, 'demo-0', 'r1', true), {
      defragSchedule: { lastRun: 'r1', defragmented: ['demo-0'] },
    });
    const once = statusWithoutClaim(statusWithoutClaim(status, 'demo-0', 'r1', true), 'demo-0', 'r1', true);
    assert.deepEqual(once.defragSchedule?.defragmented, ['demo-0']);
    assert.deepEqual(statusWithoutClaim(status, 'demo-0', 'r0', true).defragSchedule?.defragmented, []);
    assert.deepEqual(statusWithoutClaim(status, 'demo-0', 'r1', false).defragSchedule?.defragmented, []);
    assert.equal(statusWithoutClaim(status, 'demo-0', undefined, true).operation, undefined);
  });
});

const fragmented: MemberSpace = { dbSize: 20 * MIB, dbSizeInUse: 2 * MIB };
const shrunk: MemberSpace = { dbSize: 2 * MIB, dbSizeInUse: 2 * MIB };
const RUN = '2026-11-22T09:59:00.000Z';
const running = (defragmented: string[]): DefragScheduleStatus => ({
  schedule: KEY,
  lastRun: RUN,
  defragmented,
});
const scheduledClaim = (m: string, startedAt = '2026-11-22T09:59:40Z') => ({
  type: 'defrag' as const,
  member: m,
  startedAt,
  why: `the scheduled run due at ${RUN}`,
  run: RUN,
  dbSizeBefore: 20 * MIB,
});
function world(
  status: EtcdClusterStatus,
  space: Record<string, MemberSpace> = {},
  etcd: EtcdView = etcdOf([membership(0), membership(1), membership(2)], 1),
): ClusterState {
  const s = state(
    cluster(EVERY_MINUTE, locked(3, { clusterID: 'c0ffee0000000001', ...status })),
    [member(0), member(1), member(2)],
    { etcd },
  );
  s.space = { 'demo-0': fragmented, 'demo-1': fragmented, 'demo-2': fragmented, ...space };
  return s;
}

describe('defragmentation schedule: the cluster plan', () => {
  const rows: [string, ClusterState, string, string | undefined, string[]][] = [
    // name, world, action kind, member defragmented (or awaited), defragSchedule.defragmented after
    [
      'a run due on a fit cluster: the first follower, claimed with its run',
      world({ defragSchedule: { schedule: KEY, nextRun: RUN } }),
      'defragment',
      'demo-0',
      [],
    ],
    [
      'demo-0 done: the other follower',
      world({ defragSchedule: running(['demo-0']) }),
      'defragment',
      'demo-2',
      ['demo-0'],
    ],
    [
      'the followers done: the leader',
      world({ defragSchedule: running(['demo-0', 'demo-2']) }),
      'defragment',
      'demo-1',
      ['demo-0', 'demo-2'],
    ],
    [
      'a member done though still past the threshold: not again in the same run',
      world({ defragSchedule: running(['demo-0', 'demo-2', 'demo-1']) }),
      'none',
      undefined,
      ['demo-0', 'demo-2', 'demo-1'],
    ],
    [
      'a claim within its lease, the file not shrunk: wait',
      world({ defragSchedule: running([]), operation: scheduledClaim('demo-0') }),
      'wait',
      undefined,
      [],
    ],
    [
      'a claim left by a crash after its defragmentation (the file shrank): recorded, the next member',
      world({ defragSchedule: running([]), operation: scheduledClaim('demo-0') }, { 'demo-0': shrunk }),
      'defragment',
      'demo-2',
      ['demo-0'],
    ],
    [
      'a claim left by a crash before its defragmentation, lease over: the same member again',
      world({ defragSchedule: running([]), operation: scheduledClaim('demo-0', '2026-11-22T09:58:00Z') }),
      'defragment',
      'demo-0',
      [],
    ],
    [
      'a run due on an alarmed cluster: nothing defragmented',
      world({ defragSchedule: { schedule: KEY, nextRun: RUN } }, {}, {
        ...etcdOf([membership(0), membership(1), membership(2)], 1),
        alarms: ['NOSPACE'],
      } as EtcdView),
      'none',
      undefined,
      [],
    ],
  ];
  for (const [name, w, kind, target, done] of rows) {
    it(name, () => {
      const plan = planCluster(w);
      const action = plan.action as { kind: string; member?: string; reason?: string };
      if (kind === 'none') assert.notEqual(action.kind, 'defragment', JSON.stringify(action));
      else assert.equal(action.kind, kind, JSON.stringify(action));
      if (target) assert.equal(action.member, target);
      assert.deepEqual(plan.status.defragSchedule?.defragmented, done);
      if (action.kind === 'defragment') {
        const op = plan.status.operation as { run?: string; member?: string; dbSizeBefore?: number };
        assert.deepEqual(
          [op.member, op.run, op.dbSizeBefore],
          [target, plan.status.defragSchedule?.lastRun, 20 * MIB],
        );
      }
    });
  }

  it('a run that cannot start says why in status and in one Warning, not one per tick', () => {
    const alarmed = {
      ...etcdOf([membership(0), membership(1), membership(2)], 1),
      alarms: ['NOSPACE'],
    } as EtcdView;
    const first = planCluster(world({ defragSchedule: { schedule: KEY, nextRun: RUN } }, {}, alarmed));
    const waiting = first.status.defragSchedule?.waiting ?? '';
    assert.match(waiting, /the run due at 2026-11-22T09:59:00.000Z waits: an alarm is raised \(NOSPACE\)/);
    assert.deepEqual(
      first.events.filter(e => e.reason === 'DefragmentationDelayed').map(e => e.message),
      [waiting],
    );
    const again = planCluster(world(first.status, {}, alarmed));
    assert.equal(again.status.defragSchedule?.waiting, waiting);
    assert.equal(again.events.filter(e => e.reason === 'DefragmentationDelayed').length, 0);
  });

  it('the last member done: the run completes, says so once, and shows the next due time', () => {
    const plan = planCluster(world({ defragSchedule: running(['demo-0', 'demo-2', 'demo-1']) }));
    assert.equal(plan.status.defragSchedule?.completedAt, NOW.toISOString());
    assert.equal(plan.status.defragSchedule?.nextRun, '2026-11-22T10:01:00.000Z');
    assert.deepEqual(
      plan.events.filter(e => e.reason === 'DefragmentationRunCompleted').map(e => e.message),
      [
        `scheduled run due at ${RUN} defragmented demo-0, demo-2, demo-1; next run at 2026-11-22T10:01:00.000Z`,
      ],
    );
    const after = planCluster(world(plan.status));
    assert.equal(after.events.filter(e => e.reason === 'DefragmentationRunCompleted').length, 0);
    assert.notEqual(after.action.kind, 'defragment');
  });

  it('a run due on a fit cluster while other work comes first (its Services missing): waits for it', () => {
    const s = world({ defragSchedule: { schedule: KEY, nextRun: RUN } });
    s.services = {};
    const plan = planCluster(s);
    assert.equal(plan.action.kind, 'ensure-services');
    assert.equal(
      plan.status.defragSchedule?.waiting,
      `the run due at ${RUN} waits: other work on the cluster comes first`,
    );
  });

  it('a cluster being deleted: no record written, its status kept as it is', () => {
    const s = world({});
    s.cluster.metadata.deletionTimestamp = new Date('2026-11-22T09:00:00Z');
    const before = structuredClone(s.cluster.status);
    const plan = planCluster(s);
    assert.equal(plan.status.defragSchedule, undefined);
    assert.deepEqual(plan.status, before);
  });

  it('the schedule removed: its record goes', () => {
    const s = state(
      cluster({}, locked(3, { clusterID: 'c0ffee0000000001', defragSchedule: running([]) })),
      [member(0), member(1), member(2)],
      { etcd: etcdOf([membership(0), membership(1), membership(2)], 1) },
    );
    assert.equal(planCluster(s).status.defragSchedule, undefined);
  });
});

describe('defragmentation schedule: the PingSource that wakes the cluster', () => {
  const owner = (defrag?: { schedule?: string; timeZone?: string }) =>
    ({
      ...cluster(defrag ? { maintenance: { defrag } } : {}),
      apiVersion: 'etcdfn.io/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: 'demo', namespace: 'ns', uid: 'u1' },
    }) as EtcdCluster & KubeObject & { apiVersion: string; kind: string };
  const rows: [string, { schedule?: string; timeZone?: string } | undefined, object | undefined][] = [
    ['no schedule: none', undefined, undefined],
    ['a threshold only: none', {}, undefined],
    [
      'a cron in a time zone: copied',
      { schedule: '0 3 * * *', timeZone: 'Europe/Berlin' },
      { schedule: '0 3 * * *', timezone: 'Europe/Berlin' },
    ],
    [
      '@every 90m: every 30 minutes UTC (the plan picks the runs)',
      { schedule: '@every 90m' },
      { schedule: '*/30 * * * *' },
    ],
  ];
  for (const [name, defrag, timing] of rows)
    it(name, () => {
      const ping = desiredDefragWake(owner(defrag), { uri: 'http://sink' });
      if (!timing) return assert.equal(ping, undefined);
      assert.equal(ping?.metadata.name, 'demo-defrag-etcdfn-cluster-wake');
      assert.equal(ping?.metadata.ownerReferences?.[0]?.uid, 'u1');
      assert.deepEqual(
        { schedule: ping?.spec.schedule, timezone: ping?.spec.timezone },
        { timezone: undefined, ...timing },
      );
      assert.deepEqual(JSON.parse(ping?.spec.data ?? ''), { etcdCluster: { namespace: 'ns', name: 'demo' } });
    });
  it('ends with the suffix the reconcile-cluster Trigger routes', () =>
    assert.match(defragWakeName('x'.repeat(80)), /-defrag-etcdfn-cluster-wake$/));
  it('an edited schedule updates the PingSource; the same one is left alone', () => {
    const before = desiredDefragWake(owner({ schedule: '0 3 * * *' }), { uri: 'http://sink' })!;
    const after = desiredDefragWake(owner({ schedule: '0 4 * * *' }), { uri: 'http://sink' })!;
    assert.equal(wakeStep(owner(), before, before).kind, 'none');
    const step = wakeStep(owner(), after, before);
    assert.equal(step.kind, 'update');
    assert.equal(step.kind === 'update' && step.object.spec.schedule, '0 4 * * *');
  });
});
