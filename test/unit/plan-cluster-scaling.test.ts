// Scaling as planCluster decides it, the words a person reads at each step: a scale-up with nothing
// left to join through, a scale-up that replaces a lost member, the leader handed off before it is
// removed, the last member paused without etcd's answer, and a member that stays but has not started
// in etcd. Written against the mutants StrykerJS left alive in shared/plan/membership/scaling.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import { findCondition } from '../../shared/conditions.ts';
import { planCluster, type ClusterPlan } from '../../shared/plan/cluster/plan.ts';
import { NOW, cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';

const formed = (replicas: number, extra: EtcdClusterStatus = {}) =>
  cluster({ replicas }, locked(replicas, { clusterID: 'c0ffee0000000001', ...extra }));
const condition = (plan: ClusterPlan, type: string) => {
  const c = findCondition(plan.status.conditions, type);
  return c && [c.status, c.reason, c.message];
};

describe('scaling up', () => {
  it('no member left to join through: waits, and says the data is gone and what to do', () => {
    const why =
      'no member of this cluster is left to add a new one through: its data is gone with its members; delete the EtcdCluster, or create a new one restoring a snapshot';
    const plan = planCluster(state(formed(3), []));
    assert.deepEqual(plan.action, { kind: 'wait', reason: why });
    assert.deepEqual(condition(plan, 'Progressing'), ['True', 'NoMemberLeft', why]);
  });

  it('a plain scale-up records no replacement', () => {
    const plan = planCluster(
      state(formed(3, { nextMemberOrdinal: 2 }), [member(0), member(1)], {
        etcd: etcdOf([membership(0), membership(1)]),
      }),
    );
    assert.equal(plan.action.kind, 'claim');
    assert.deepEqual(condition(plan, 'Progressing'), ['True', 'ScalingUp', 'adding member demo-2']);
    assert.equal(plan.status.replacement, undefined);
    assert.equal(condition(plan, 'MemberReplacement'), undefined);
  });

  it('the member added after a lost one was removed is its replacement, and status says so', () => {
    const replacement = { member: 'demo-1', oldID: 'aa', reason: 'gone', startedAt: '2026-11-22T09:59:00Z' };
    const plan = planCluster(
      state(formed(3, { nextMemberOrdinal: 3, replacement }), [member(0), member(2)], {
        ready: [0, 2],
        etcd: etcdOf([membership(0), membership(2)]),
      }),
    );
    assert.deepEqual(plan.action, {
      kind: 'claim',
      operation: { type: 'add-member', member: 'demo-3', bootstrap: false, startedAt: NOW.toISOString() },
    });
    assert.deepEqual(condition(plan, 'Progressing'), ['True', 'ReplacingMember', 'adding member demo-3']);
    assert.deepEqual(plan.status.replacement, { ...replacement, newMember: 'demo-3' });
  });
});

describe('scaling down', () => {
  it('the leader is the newest: leadership moves to a started voter first, and status says so', () => {
    const plan = planCluster(
      state(formed(2), [member(0), member(1), member(2)], {
        etcd: etcdOf([membership(0), membership(1), membership(2)], 2),
      }),
    );
    assert.deepEqual(plan.action, { kind: 'move-leader', from: 'demo-2', toId: membership(0).id });
    assert.deepEqual(condition(plan, 'Progressing'), [
      'True',
      'ScalingDown',
      'moving leadership off demo-2 before removing it',
    ]);
    assert.deepEqual(plan.events, []);
  });

  it('pausing the last member needs no answer from etcd', () => {
    const why = 'pausing: stopping member demo-0 and keeping its data';
    for (const etcd of [undefined, { reachable: false as const, error: 'connection refused' }]) {
      const plan = planCluster(state(formed(0, { nextMemberOrdinal: 1 }), [member(0)], etcd ? { etcd } : {}));
      assert.deepEqual(plan.action, { kind: 'set-dormant', member: 'demo-0', dormant: true });
      assert.deepEqual(condition(plan, 'Progressing'), ['True', 'Pausing', why]);
      assert.deepEqual(plan.events, [{ type: 'Normal', reason: 'Pausing', message: why }]);
    }
  });

  it('a member that stays but etcd does not list at all: nothing is removed', () => {
    const plan = planCluster(
      state(formed(2), [member(0), member(1), member(2)], {
        etcd: etcdOf([membership(1), membership(2)], 1),
      }),
    );
    const why = 'not removing member demo-2 yet: member demo-0, which stays, has not started in etcd';
    assert.deepEqual(plan.action, { kind: 'wait', reason: why });
    assert.deepEqual(condition(plan, 'Progressing'), ['True', 'ScalingDown', why]);
  });
});
