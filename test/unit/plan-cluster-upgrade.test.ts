// Who receives leadership, and who goes next, as planCluster decides them during an upgrade or a
// scale-down: only a started voter that is one of the candidates, never the leader itself or a
// learner; a one-member cluster upgrades its only member; a member etcd never listed leaves without a
// leadership move. Written against the mutants StrykerJS left alive in shared/plan/upgrade/upgrade.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { findCondition } from '../../shared/conditions.ts';
import { planCluster, type ClusterPlan } from '../../shared/plan/cluster/plan.ts';
import { leaderSuccessor } from '../../shared/plan/upgrade/upgrade.ts';
import { cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';

const OLD = '3.4.23';
const NEW = '3.5.16';
const formed = (replicas: number, extra: EtcdClusterStatus = {}) =>
  cluster({ replicas }, locked(replicas, { clusterID: 'c0ffee0000000001', ...extra }));
const on = (ordinal: number, version: string): EtcdMember => {
  const m = member(ordinal);
  m.spec.version = version;
  m.status = { ...m.status, version };
  return m;
};
const progressing = (plan: ClusterPlan) => {
  const p = findCondition(plan.status.conditions, 'Progressing');
  return [p?.status, p?.reason, p?.message];
};

describe('leadership during an upgrade', () => {
  it('the leader goes last, and hands leadership to an upgraded member etcd lists as started', () => {
    // demo-1 runs the new release but etcd lists it as not started: demo-2 takes over.
    const plan = planCluster(
      state(formed(3), [on(0, OLD), on(1, NEW), on(2, NEW)], {
        etcd: etcdOf([membership(0), membership(1, { started: false }), membership(2)], 0),
      }),
    );
    assert.deepEqual(plan.action, { kind: 'move-leader', from: 'demo-0', toId: membership(2).id });
    assert.deepEqual(progressing(plan), [
      'True',
      'Upgrading',
      'moving leadership off demo-0 before upgrading it (2/3 members on 3.5.16)',
    ]);
  });

  it('a one-member cluster upgrades its only member, which leads: nobody to hand leadership to', () => {
    const one = formed(1);
    one.status!.observed!.version = NEW;
    const plan = planCluster(state(one, [on(0, OLD)], { etcd: etcdOf([membership(0)], 0) }));
    const why = 'upgrading member demo-0 from etcd 3.4.23 to 3.5.16';
    assert.deepEqual(plan.action, { kind: 'upgrade-member', member: 'demo-0', from: OLD, version: NEW });
    assert.deepEqual(progressing(plan), ['True', 'Upgrading', `${why} (0/1 members on 3.5.16)`]);
    assert.deepEqual(plan.events, [{ type: 'Normal', reason: 'UpgradingMember', message: why }]);
  });

  it('leadership is never handed to the leader itself, nor to a learner', () => {
    const s = state(formed(3), [member(0), member(1), member(2)], {
      etcd: etcdOf([membership(0), membership(1, { learner: true }), membership(2)], 0),
    });
    const [leader, learner, voter] = s.members as [EtcdMember, EtcdMember, EtcdMember];
    assert.equal(leaderSuccessor(s, leader, [leader]), undefined);
    assert.equal(leaderSuccessor(s, leader, [leader, learner]), undefined);
    assert.equal(leaderSuccessor(s, leader, [leader, learner, voter]), membership(2).id);
    assert.equal(leaderSuccessor(s, voter, [leader]), undefined, 'a follower has no leadership to hand over');
  });
});

describe('a scale-down whose victim etcd never listed', () => {
  it('is removed without a leadership move', () => {
    const plan = planCluster(
      state(formed(2), [member(0), member(1), member(2)], {
        ready: [0, 1],
        etcd: etcdOf([membership(0), membership(1)], 0),
      }),
    );
    const why = 'removing member demo-2 (3 → 2)';
    assert.deepEqual(plan.action, { kind: 'delete-member', member: 'demo-2' });
    assert.deepEqual(progressing(plan), ['True', 'ScalingDown', why]);
    assert.deepEqual(plan.events, [{ type: 'Normal', reason: 'ScalingDown', message: why }]);
  });
});

describe('a spec edit while a member has not written its status yet', () => {
  it('is adopted: a member with no reported version cannot skip a minor', () => {
    const members = [member(0), member(1), member(2)];
    delete members[2].status;
    const plan = planCluster(
      state(cluster({ replicas: 5 }, locked(3, { clusterID: 'c0ffee0000000001' })), members, {
        etcd: etcdOf([membership(0), membership(1), membership(2)]),
      }),
    );
    assert.deepEqual(progressing(plan), ['True', 'NewTarget', '5 members of etcd 3.5.16']);
    assert.equal(plan.status.observed?.replicas, 5);
  });
});
