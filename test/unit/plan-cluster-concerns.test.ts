// reconcile-cluster's concerns as one ordered list (shared/plan/cluster/concerns.ts): the order is
// pinned here by name, so moving a concern is a change someone reviews, and the rows below show an
// earlier concern pre-empting a later one in worlds where both have a step.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import { findCondition } from '../../shared/conditions.ts';
import { CLUSTER_CONCERNS, firstStep } from '../../shared/plan/cluster/concerns.ts';
import { planCluster, type ClusterPlan } from '../../shared/plan/cluster/plan.ts';
import type { ClusterState, EtcdView } from '../../shared/plan/cluster/types.ts';
import {
  NOW,
  cluster,
  etcdOf,
  locked,
  member,
  membership,
  observed,
  state,
} from '../support/cluster-world.ts';

const formed = (replicas: number, extra: EtcdClusterStatus = {}) =>
  cluster({ replicas }, locked(replicas, { clusterID: 'c0ffee0000000001', ...extra }));
const three = () => [member(0), member(1), member(2)];
const etcd2 = () => etcdOf([membership(0), membership(1)]);
const etcd3 = () => etcdOf([membership(0), membership(1), membership(2)]);
/** Three members wanted, two running and in etcd: the membership concern would add demo-2. */
const growing = (opts: { services?: boolean; pdb?: boolean; etcd?: EtcdView } = {}): ClusterState =>
  state(formed(3, { nextMemberOrdinal: 2 }), [member(0), member(1)], { etcd: etcd2(), ...opts });
const progressing = (plan: ClusterPlan) => findCondition(plan.status.conditions, 'Progressing')?.reason;
const concern = (name: string) => {
  const found = CLUSTER_CONCERNS.find(c => c.name === name);
  assert.ok(found, `no concern named ${name}`);
  return found;
};

describe('the concerns of reconcile-cluster', () => {
  it('are asked in this order (a change here is a change of what pre-empts what)', () => {
    assert.deepEqual(
      CLUSTER_CONCERNS.map(c => c.name),
      [
        'deleting',
        'in-place-restore',
        'restore-latest-snapshot',
        'lock-target',
        'bootstrap-retry',
        'force-new-cluster',
        'defragmentation-claim',
        'add-member-operation',
        'new-target',
        'deadline',
        'services',
        'network-policy',
        'bootstrap',
        'nospace-alarm',
        'membership',
        'volume-growth',
        'pdb',
        'defragmentation',
        'reconciled',
      ],
    );
  });

  it('the last one always has a step: a reached target is reconciled', () => {
    const reached = state(formed(3), three(), { etcd: etcd3() });
    assert.equal(firstStep(CLUSTER_CONCERNS, reached).concern, 'reconciled');
    assert.equal(progressing(planCluster(reached)), 'Reconciled');
  });

  it('a concern with nothing to do hands on to the next', () => {
    const reached = state(formed(3), three(), { etcd: etcd3() });
    for (const c of CLUSTER_CONCERNS.slice(0, -1))
      assert.equal(c.check(reached), undefined, `${c.name} has a step in a reached world`);
  });
});

interface PreemptionRow {
  name: string;
  world: () => ClusterState;
  earlier: string;
  later: string;
  /** What planCluster then does: the earlier concern's step. */
  action: ClusterPlan['action'];
  reason?: string;
}

const newSpec = () => {
  const s = state(formed(3), three(), { etcd: etcd3(), services: false });
  s.cluster.spec.replicas = 5;
  return s;
};
const deleted = () => {
  const s = state(formed(3), three(), { etcd: etcd3(), services: false });
  s.cluster.metadata.deletionTimestamp = NOW;
  return s;
};
const nospace = () =>
  growing({ etcd: { ...(etcd2() as Extract<EtcdView, { reachable: true }>), alarms: ['NOSPACE'] } });
const biggerVolumes = () => {
  const size = { size: '2Gi', medium: '' as const };
  const c = cluster(
    { storage: size },
    locked(3, { clusterID: 'c0ffee0000000001', observed: { ...observed(3), storage: size } }),
  );
  return state(c, three(), { etcd: etcd3(), pdb: false });
};

const rows: PreemptionRow[] = [
  {
    name: 'a cluster being deleted: its missing Services are not made again',
    world: deleted,
    earlier: 'deleting',
    later: 'services',
    action: { kind: 'none' },
  },
  {
    name: 'no target locked yet: the target comes before the Services',
    world: () => state(cluster(), [], { services: false }),
    earlier: 'lock-target',
    later: 'services',
    action: { kind: 'none' },
    reason: 'NewTarget',
  },
  {
    name: 'an add-member operation recorded: it is resumed before the Services are made',
    world: () => {
      const s = growing({ services: false });
      s.cluster.status!.operation = {
        type: 'add-member',
        member: 'demo-2',
        bootstrap: false,
        startedAt: NOW.toISOString(),
      };
      return s;
    },
    earlier: 'add-member-operation',
    later: 'services',
    action: {
      kind: 'resume',
      operation: { type: 'add-member', member: 'demo-2', bootstrap: false, startedAt: NOW.toISOString() },
    },
    reason: 'AddingMember',
  },
  {
    name: 'a new spec on a reached target: adopted before the Services are repaired',
    world: newSpec,
    earlier: 'new-target',
    later: 'services',
    action: { kind: 'none' },
    reason: 'NewTarget',
  },
  {
    name: 'the Services missing while a member is to be added: the Services first',
    world: () => growing({ services: false }),
    earlier: 'services',
    later: 'membership',
    action: { kind: 'ensure-services' },
    reason: 'CreatingServices',
  },
  {
    name: 'NOSPACE raised while a member is to be added: space first',
    world: nospace,
    earlier: 'nospace-alarm',
    later: 'membership',
    action: {
      kind: 'recover-space',
      members: [
        { name: 'demo-1', endpoint: 'http://demo-1.demo.prod.svc:2379' },
        { name: 'demo-0', endpoint: 'http://demo-0.demo.prod.svc:2379' },
      ],
      quotaBytes: 512 * 1024 * 1024,
    },
    reason: 'RecoveringSpace',
  },
  {
    name: 'volumes to grow while the PDB is missing: the volumes first',
    world: biggerVolumes,
    earlier: 'volume-growth',
    later: 'pdb',
    action: { kind: 'grow-volumes', members: ['demo-0', 'demo-1', 'demo-2'], size: '2Gi' },
    reason: 'GrowingVolumes',
  },
];

describe('an earlier concern pre-empts a later one', () => {
  for (const row of rows)
    it(`${row.name} (${row.earlier} before ${row.later})`, () => {
      const world = row.world();
      const names = CLUSTER_CONCERNS.map(c => c.name);
      assert.ok(names.indexOf(row.earlier) < names.indexOf(row.later), 'the row names them in list order');
      assert.ok(concern(row.earlier).check(row.world()), `${row.earlier} has a step`);
      assert.ok(concern(row.later).check(row.world()), `${row.later} has a step too`);
      assert.equal(firstStep(CLUSTER_CONCERNS, world).concern, row.earlier);
      const plan = planCluster(row.world());
      assert.deepEqual(plan.action, row.action);
      if (row.reason) assert.equal(progressing(plan), row.reason);
    });
});

describe('firstStep and the steps the concerns build themselves', () => {
  it('a list in which no concern has a step is a bug, said as such', () => {
    const reached = state(formed(3), three(), { etcd: etcd3() });
    assert.throws(() => firstStep([{ name: 'silent', check: () => undefined }], reached), {
      message: 'no cluster concern returned a step',
    });
  });

  it('a static bootstrap recorded in status.operation is resumed, naming all its initial members', () => {
    const operation = {
      type: 'add-member' as const,
      member: 'demo-0',
      bootstrap: true,
      initialMembers: ['demo-0', 'demo-1', 'demo-2'],
      startedAt: NOW.toISOString(),
    };
    const s = state(cluster({ replicas: 3 }, locked(3, { nextMemberOrdinal: 3, operation })), []);
    assert.equal(firstStep(CLUSTER_CONCERNS, s).concern, 'add-member-operation');
    const plan = planCluster(s);
    assert.deepEqual(plan.action, { kind: 'resume', operation });
    const c = findCondition(plan.status.conditions, 'Progressing');
    assert.deepEqual(
      [c?.reason, c?.message],
      ['AddingMember', 'creating the initial members demo-0, demo-1, demo-2 together'],
    );
  });
});
