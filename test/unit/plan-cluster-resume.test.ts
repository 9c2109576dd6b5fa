// Issue 29: a paused cluster whose kept (dormant) member was deleted, and a 1-member cluster whose
// only member was deleted. finalize-member holds that deletion (the member has the only data); the
// cluster then resumes from it: the held member runs again as the seed (its own data and member ID),
// the members asked for join it one at a time, and once they are ready voters the seed is released
// and removed from etcd like any deleted member. Each step, and the words a person reads at each.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { findCondition } from '../../shared/conditions.ts';
import { planCluster, type ClusterPlan } from '../../shared/plan/cluster/plan.ts';
import { planFinalize } from '../../shared/plan/member/finalize.ts';
import { planMember } from '../../shared/plan/member/plan.ts';
import { RESUME_SEED_ANNOTATION } from '../../shared/plan/cluster/members.ts';
import { cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';
import * as mw from '../support/member-world.ts';

const ID = 'c0ffee0000000001';
const formed = (replicas: number, extra: EtcdClusterStatus = {}) =>
  cluster({ replicas }, locked(replicas, { clusterID: ID, nextMemberOrdinal: 3, ...extra }));
const condition = (plan: ClusterPlan, type: string) => {
  const c = findCondition(plan.status.conditions, type);
  return c && [c.status, c.reason, c.message];
};
const FINALIZER = 'etcdfn.io/member-cleanup';
/** demo-0, deleted while it held the data: its finalizer holds it. */
const held = (dormant = true): EtcdMember => {
  const m = member(0, { deleting: true, dormant });
  return { ...m, metadata: { ...m.metadata, finalizers: [FINALIZER] } };
};
const asSeed = (m: EtcdMember, dormant = false): EtcdMember => ({
  ...m,
  metadata: { ...m.metadata, annotations: { [RESUME_SEED_ANNOTATION]: 'true' } },
  spec: { ...m.spec, dormant },
});

describe('paused, and the kept member deleted (held)', () => {
  it('paused: waits without Progressing, Available=False Paused names the held PVC and the way back', () => {
    const plan = planCluster(state(formed(0), [held()]));
    assert.equal(plan.action.kind, 'wait');
    assert.equal(condition(plan, 'Progressing')?.[0], 'False');
    assert.equal(condition(plan, 'Progressing')?.[1], 'Paused');
    const available = condition(plan, 'Available');
    assert.equal(available?.[1], 'Paused');
    assert.match(String(available?.[2]), /member demo-0 was deleted but holds the cluster's only data/);
    assert.match(String(available?.[2]), /PersistentVolumeClaim data-demo-0/);
    assert.match(String(available?.[2]), /scale up to resume/);
    assert.equal(plan.status.phase, 'Paused');
    assert.deepEqual(plan.events, []);
  });

  it('scaling up is adopted as the new target (it was stuck at observed 0 before)', () => {
    const c = formed(0);
    c.spec.replicas = 3;
    const plan = planCluster(state(c, [held()]));
    assert.equal(plan.status.observed?.replicas, 3);
    assert.equal(condition(plan, 'Progressing')?.[1], 'NewTarget');
  });

  it('resuming: the held member runs again as the seed, and the event says what happens next', () => {
    const plan = planCluster(state(formed(3), [held()]));
    assert.deepEqual(plan.action, { kind: 'set-dormant', member: 'demo-0', dormant: false, seed: true });
    const why =
      "resuming from member demo-0, deleted while it held the cluster's only data: it runs again on its kept data as the seed, the 3 members asked for join it, then demo-0 is removed";
    assert.deepEqual(condition(plan, 'Progressing'), ['True', 'Resuming', why]);
    assert.deepEqual(plan.events, [{ type: 'Normal', reason: 'Resuming', message: why }]);
  });

  it("a 1-member cluster's running member deleted: the same (it becomes the seed of its replacement)", () => {
    const plan = planCluster(state(formed(1), [held(false)], { ready: [] }));
    assert.deepEqual(plan.action, { kind: 'set-dormant', member: 'demo-0', dormant: false, seed: true });
  });

  it('a Memory-medium member keeps nothing: not held, no seed', () => {
    const m = held();
    m.spec.storage = { size: '1Gi', medium: 'Memory' };
    const plan = planCluster(state(formed(3), [m]));
    assert.notEqual(plan.action.kind, 'set-dormant');
  });
});

describe('the seed and the members joining it', () => {
  it('the seed runs and answers: the first member is added through it', () => {
    const plan = planCluster(state(formed(3), [asSeed(held())], { etcd: etcdOf([membership(0)]) }));
    assert.equal(plan.action.kind, 'claim');
    assert.equal((plan.action as { operation: { member: string } }).operation.member, 'demo-3');
  });

  it('the seed paused again before it was released goes dormant, keeping its mark', () => {
    const plan = planCluster(state(formed(0), [asSeed(held())], { etcd: etcdOf([membership(0)]) }));
    assert.deepEqual(plan.action, { kind: 'set-dormant', member: 'demo-0', dormant: true });
  });

  it('the seed dormant again and resumed: it starts again', () => {
    const plan = planCluster(state(formed(3), [asSeed(held(), true)]));
    assert.equal(plan.action.kind, 'set-dormant');
    assert.equal((plan.action as { dormant: boolean }).dormant, false);
  });

  it('two of three joined: the third is added (the seed is not counted as one of the three)', () => {
    const plan = planCluster(
      state(formed(3, { nextMemberOrdinal: 5 }), [asSeed(held()), member(3), member(4)], {
        ready: [0, 3, 4],
        etcd: etcdOf([membership(0), membership(3), membership(4)]),
      }),
    );
    assert.equal(plan.action.kind, 'claim');
    assert.equal((plan.action as { operation: { member: string } }).operation.member, 'demo-5');
  });

  it('three joined but one is still a learner: it is promoted, the seed stays', () => {
    const plan = planCluster(
      state(formed(3, { nextMemberOrdinal: 6 }), [asSeed(held()), member(3), member(4), member(5)], {
        ready: [0, 3, 4, 5],
        etcd: etcdOf([membership(0), membership(3), membership(4), membership(5, { learner: true })]),
      }),
    );
    assert.equal(plan.action.kind, 'promote');
  });

  it('three joined, ready voters: the seed is released, and the event says so', () => {
    const plan = planCluster(
      state(formed(3, { nextMemberOrdinal: 6 }), [asSeed(held()), member(3), member(4), member(5)], {
        ready: [0, 3, 4, 5],
        etcd: etcdOf([membership(0), membership(3), membership(4), membership(5)]),
      }),
    );
    assert.deepEqual(plan.action, { kind: 'release-seed', member: 'demo-0' });
    assert.equal(plan.events[0]?.reason, 'SeedReleased');
    assert.equal(condition(plan, 'Progressing')?.[1], 'Resuming');
  });

  it('released: the cluster waits for its removal (finalize-member), and is not complete', () => {
    const plan = planCluster(
      state(formed(3, { nextMemberOrdinal: 6 }), [held(false), member(3), member(4), member(5)], {
        ready: [0, 3, 4, 5],
        etcd: etcdOf([membership(0), membership(3), membership(4), membership(5)]),
      }),
    );
    assert.deepEqual(plan.action, { kind: 'wait', reason: 'removing member demo-0 from etcd' });
  });
});

describe('finalize-member and reconcile-member for the seed', () => {
  const seedMember = (status?: EtcdMember['status']) => {
    const m = mw.member({}, status, true);
    return { ...m, metadata: { ...m.metadata, annotations: { [RESUME_SEED_ANNOTATION]: 'true' } } };
  };
  it('finalize keeps the seed while it is marked, even with the others running', () => {
    const others = [mw.member({}, undefined, false)].map(m => ({
      ...m,
      metadata: { ...m.metadata, name: 'demo-3' },
    }));
    const action = planFinalize({ member: seedMember(), cluster: mw.cluster(), others, tried: [] });
    assert.equal(action.kind, 'keep');
    assert.match((action as { reason: string }).reason, /runs as the seed/);
    // The whole answer, the Event a user reads in `kubectl describe` included.
    const message =
      "deletion of demo-1 is held: it runs as the seed of EtcdCluster demo's resume (it had the only copy of the data); it is removed from etcd once the other members have joined it";
    assert.deepEqual(action, {
      kind: 'keep',
      reason: message,
      event: { type: 'Normal', reason: 'DeletionHeld', message },
    });
  });

  it('the mark is the annotation etcdfn.io/resume-seed as stored in the API server (it outlives an operator upgrade)', () => {
    const m = mw.member({}, undefined, true);
    const stored = { ...m, metadata: { ...m.metadata, annotations: { 'etcdfn.io/resume-seed': 'true' } } };
    assert.equal(planFinalize({ member: stored, cluster: mw.cluster(), others: [], tried: [] }).kind, 'keep');
    assert.equal(planMember(mw.running(stored)).action.kind, 'create-pod');
  });

  it("reconcile-member starts the seed's Pod although it is being deleted; not an unmarked one", () => {
    const seedPlan = planMember(mw.running(seedMember()));
    assert.equal(seedPlan.action.kind, 'create-pod');
    const plain = mw.member({}, undefined, true);
    assert.equal(planMember(mw.running(plain)).action.kind, 'none');
  });
});
