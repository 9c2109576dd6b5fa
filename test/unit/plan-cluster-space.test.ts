// NOSPACE recovery (shared/plan/space/nospace-alarm.ts through planCluster): when it runs, in which
// order (followers first by name, the leader last), with which quota, and when it must not.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConditionStatus } from '../../shared/conditions.ts';
import type { EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import { planCluster } from '../../shared/plan/cluster/plan.ts';
import { liveDataTooLarge } from '../../shared/plan/space/nospace-alarm.ts';
import type { EtcdMember as Membership } from '../../shared/etcd/members.ts';
import type { EtcdView } from '../../shared/plan/cluster/types.ts';
import { cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';

const formed = (extra: EtcdClusterStatus = {}) => locked(3, { clusterID: 'c0ffee0000000001', ...extra });
const three = () => [member(0), member(1), member(2)];
type Alarm = 'NOSPACE' | 'CORRUPT';
/** etcd's view of the members, with the alarms the answering member reports. */
const withAlarms = (members: Membership[], leader: number, alarms: Alarm[]): EtcdView => ({
  ...(etcdOf(members, leader) as Extract<EtcdView, { reachable: true }>),
  alarms,
});
const nospace = (leader = 1, alarms: Alarm[] = ['NOSPACE']): EtcdView =>
  withAlarms([membership(0), membership(1), membership(2)], leader, alarms);

describe('NOSPACE recovery', () => {
  it('compacts and defragments followers first by name, the leader last, with the explicit quota', () => {
    const options = { quotaBackendBytes: 16 * 1024 * 1024 };
    const c = cluster({ options }, formed({ observed: { ...locked(3).observed!, options } }));
    const plan = planCluster(state(c, three(), { etcd: nospace(1) }));
    assert.deepEqual(plan.action, {
      kind: 'recover-space',
      members: [
        { name: 'demo-0', endpoint: 'http://demo-0.demo.prod.svc:2379' },
        { name: 'demo-2', endpoint: 'http://demo-2.demo.prod.svc:2379' },
        { name: 'demo-1', endpoint: 'http://demo-1.demo.prod.svc:2379' },
      ],
      quotaBytes: 16 * 1024 * 1024,
    });
    const progressing = plan.status.conditions?.find(c => c.type === 'Progressing');
    assert.equal(progressing?.status, 'True');
    assert.equal(progressing?.reason, 'RecoveringSpace');
    assert.equal(
      progressing?.message,
      'etcd raised NOSPACE: the database reached its quota of 16 MiB and writes are refused; compacting, defragmenting demo-0, demo-2, demo-1 one at a time, then disarming',
    );
    assert.deepEqual(
      plan.events.map(e => [e.type, e.reason]),
      [['Warning', 'NoSpace']],
    );
  });

  it('uses the quota the member builder chose when none is set (half of a 1Gi volume)', () => {
    const plan = planCluster(state(cluster({}, formed()), three(), { etcd: nospace(0) }));
    assert.equal(plan.action.kind, 'recover-space');
    assert.equal(plan.action.kind === 'recover-space' && plan.action.quotaBytes, 512 * 1024 * 1024);
    assert.deepEqual(plan.action.kind === 'recover-space' && plan.action.members.map(m => m.name), [
      'demo-1',
      'demo-2',
      'demo-0',
    ]);
  });

  it('says NoSpace once: a recovery already under way records no second Event', () => {
    const under = formed({
      conditions: [
        {
          type: 'Progressing',
          status: 'True',
          reason: 'RecoveringSpace',
          message: 'x',
          lastTransitionTime: '2026-11-22T09:59:00Z',
        },
      ],
    });
    const plan = planCluster(state(cluster({}, under), three(), { etcd: nospace(1) }));
    assert.equal(plan.action.kind, 'recover-space');
    assert.deepEqual(plan.events, []);
  });

  for (const leader of [0, 1]) {
    it(`followers by name and the leader (demo-${leader}) last, whatever order the members are listed in`, () => {
      const listed = [member(2), member(1), member(0)];
      const plan = planCluster(state(cluster({}, formed()), listed, { etcd: nospace(leader) }));
      const expected = ['demo-0', 'demo-1', 'demo-2'].filter(n => n !== `demo-${leader}`);
      assert.deepEqual(plan.action.kind === 'recover-space' && plan.action.members.map(m => m.name), [
        ...expected,
        `demo-${leader}`,
      ]);
    });
  }

  const condition = (type: string, status: ConditionStatus, reason: string) => ({
    type,
    status,
    reason,
    message: 'x',
    lastTransitionTime: '2026-11-22T09:59:00Z',
  });
  it('says NoSpace once even with other conditions listed before Progressing', () => {
    const under = formed({
      conditions: [
        condition('Available', 'True', 'QuorumHealthy'),
        condition('Progressing', 'True', 'RecoveringSpace'),
      ],
    });
    const plan = planCluster(state(cluster({}, under), three(), { etcd: nospace(1) }));
    assert.equal(plan.action.kind, 'recover-space');
    assert.deepEqual(plan.events, []);
  });

  it('says NoSpace when the cluster was idle before (Progressing for another reason)', () => {
    const idle = formed({
      conditions: [
        condition('Available', 'True', 'QuorumHealthy'),
        condition('Progressing', 'False', 'Idle'),
      ],
    });
    const plan = planCluster(state(cluster({}, idle), three(), { etcd: nospace(1) }));
    assert.equal(plan.action.kind, 'recover-space');
    assert.deepEqual(
      plan.events.map(e => [e.type, e.reason]),
      [['Warning', 'NoSpace']],
    );
  });

  const refusals: [string, Parameters<typeof state>[2]][] = [
    ['a member is not ready (never defragment the last healthy ones)', { ready: [0, 1], etcd: nospace(1) }],
    [
      'a member is still a learner',
      { etcd: withAlarms([membership(0), membership(1), membership(2, { learner: true })], 1, ['NOSPACE']) },
    ],
    ['a CORRUPT alarm is raised too', { etcd: nospace(1, ['NOSPACE', 'CORRUPT']) }],
    ['etcd raised no NOSPACE', { etcd: etcdOf([membership(0), membership(1), membership(2)], 1) }],
    ['etcd does not answer', { etcd: { reachable: false, error: 'connection refused' } }],
  ];
  for (const [name, opts] of refusals) {
    it(`does not run when ${name}`, () => {
      const plan = planCluster(state(cluster({}, formed()), three(), opts));
      assert.notEqual(plan.action.kind, 'recover-space');
      assert.notEqual(plan.status.conditions?.find(c => c.type === 'Progressing')?.reason, 'RecoveringSpace');
    });
  }

  it('does not run while etcd holds a member no EtcdMember stands for (the orphan goes first)', () => {
    const etcd = {
      ...etcdOf([membership(0), membership(1), membership(2), membership(3)], 1),
      alarms: ['NOSPACE' as const],
    };
    const plan = planCluster(state(cluster({}, formed()), three(), { etcd }));
    assert.notEqual(plan.action.kind, 'recover-space');
  });
});

describe('live data that fills the quota', () => {
  const MiB = 1024 * 1024;
  const rows: [string, number, number, string | undefined][] = [
    ['well under the quota', 4 * MiB, 16 * MiB, undefined],
    ['exactly 90 % of it', 0.9 * 16 * MiB, 16 * MiB, undefined],
    [
      'over 90 % of it',
      15 * MiB,
      16 * MiB,
      'the live data alone (15 MiB on demo-0) fills the 16 MiB quota: delete keys, or raise spec.options.quotaBackendBytes',
    ],
    ['no quota known', 15 * MiB, 0, undefined],
  ];
  for (const [name, inUse, quota, expected] of rows) {
    it(`${name}: ${expected ? 'refused, saying what to do' : 'defragmenting goes ahead'}`, () => {
      assert.equal(liveDataTooLarge('demo-0', inUse, quota), expected);
    });
  }
});
