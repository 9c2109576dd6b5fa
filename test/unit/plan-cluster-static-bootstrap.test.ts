// Static bootstrap of a new, empty cluster, as planCluster decides it: every initial member is
// claimed in one status write (names from the ordinal counter, so the whole --initial-cluster is
// known before any member or Pod exists), the cluster ID is latched only when etcd answers with
// exactly those members; anything that holds data, restores in place or from a PVC keeps the one-seed path.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findCondition } from '../../shared/conditions.ts';
import { planCluster, type ClusterPlan } from '../../shared/plan/cluster/plan.ts';
import { staticBootstrap } from '../../shared/plan/membership/bootstrap.ts';
import { NOW, cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';

const progressing = (plan: ClusterPlan) => {
  const c = findCondition(plan.status.conditions, 'Progressing');
  return c && [c.status, c.reason, c.message];
};
const initial = (n: number) => Array.from({ length: n }, (_, i) => member(i, { bootstrap: true }));

describe('static bootstrap', () => {
  it('five members: one claim names demo-3..demo-7 after an earlier counter, in order', () => {
    const plan = planCluster(state(cluster({ replicas: 5 }, locked(5, { nextMemberOrdinal: 3 })), []));
    assert.deepEqual(plan.action, {
      kind: 'claim',
      operation: {
        type: 'add-member',
        member: 'demo-3',
        bootstrap: true,
        initialMembers: ['demo-3', 'demo-4', 'demo-5', 'demo-6', 'demo-7'],
        startedAt: NOW.toISOString(),
      },
    });
    assert.equal(plan.status.nextMemberOrdinal, 8, 'no name is ever used twice');
  });

  it('only for a cluster with no member object, no restore in place and no restore but from S3', () => {
    const fresh = state(cluster({}, locked(3)), []);
    assert.equal(staticBootstrap(fresh, 3), true);
    assert.equal(staticBootstrap(fresh, 1), false, 'one member is its own seed');
    assert.equal(staticBootstrap(state(cluster({}, locked(3)), [member(1, { bootstrap: false })]), 3), false);
    const deleting = state(cluster({}, locked(3)), [member(0, { deleting: true })]);
    assert.equal(staticBootstrap(deleting, 3), false, 'a member being deleted may still hold data');
    const restoring = cluster({}, locked(3));
    const pvc = { source: { pvc: { claimName: 'x', path: 'snap.db' } } } as never;
    restoring.spec.bootstrap = { restore: pvc };
    const pvcReady = { kind: 'ready', restore: pvc, sourceName: 'pvc://x/snap.db' } as const;
    assert.equal(staticBootstrap(state(restoring, []), 3), false, 'a restore not resolved yet');
    assert.equal(staticBootstrap({ ...state(restoring, []), restore: pvcReady }, 3), false, 'a PVC source');
    const s3 = {
      source: { s3: { endpoint: 'https://s3', bucket: 'b', key: 'k', credentialsSecretRef: { name: 'c' } } },
    };
    const fromS3 = cluster({}, locked(3));
    fromS3.spec.bootstrap = { restore: s3 };
    const s3Ready = { kind: 'ready', restore: s3, sourceName: 's3://b/k' } as const;
    assert.equal(staticBootstrap({ ...state(fromS3, []), restore: s3Ready }, 3), true, 'an S3 source');
    const s3Blocked = { kind: 'blocked', reason: 'SecretNotFound', message: 'no' } as const;
    assert.equal(staticBootstrap({ ...state(fromS3, []), restore: s3Blocked }, 3), false, 'a blocked one');
    const inPlace = cluster({}, locked(3, { inPlaceRestore: { step: 'Restoring' } as never }));
    assert.equal(staticBootstrap(state(inPlace, []), 3), false);
  });

  it('latches the cluster ID once etcd lists exactly the initial members', () => {
    const s = state(cluster({}, locked(3, { nextMemberOrdinal: 3 })), initial(3), {
      etcd: etcdOf([membership(0), membership(1, { started: false }), membership(2)]),
    });
    const plan = planCluster(s);
    assert.deepEqual(plan.action, { kind: 'none' });
    assert.equal(plan.status.clusterID, 'c0ffee0000000001');
    assert.deepEqual(progressing(plan), [
      'True',
      'Bootstrapped',
      'etcd cluster c0ffee0000000001 formed with initial members demo-0, demo-1, demo-2',
    ]);
  });

  it('as many members as the initial ones, but one a stranger: not this bootstrap either', () => {
    const stranger = {
      ...membership(5),
      name: 'other-0',
      peerURLs: ['http://other-0.other.prod.svc:2380'],
    };
    const s = state(cluster({}, locked(3, { nextMemberOrdinal: 3 })), initial(3), {
      etcd: etcdOf([membership(0), membership(1), stranger]),
    });
    const plan = planCluster(s);
    assert.equal(plan.status.clusterID, undefined);
    assert.equal(plan.action.kind, 'wait');
  });

  it('every initial member started: waits for etcd to answer, naming its error', () => {
    const world = (etcd?: { reachable: false; error: string }) =>
      state(cluster({}, locked(3, { nextMemberOrdinal: 3 })), initial(3), etcd ? { etcd } : {});
    const refused = planCluster(world({ reachable: false, error: 'connection refused' }));
    const why = 'waiting for the initial members to answer: connection refused';
    assert.deepEqual(refused.action, { kind: 'wait', reason: why });
    assert.deepEqual(progressing(refused), ['True', 'WaitingForSeed', why]);
    assert.deepEqual(planCluster(world()).action, {
      kind: 'wait',
      reason: 'waiting for the initial members to answer: no answer yet',
    });
  });

  it('a different membership is not this bootstrap: no cluster ID is latched', () => {
    const s = state(cluster({}, locked(3, { nextMemberOrdinal: 3 })), initial(3), {
      etcd: etcdOf([membership(0), membership(1)]),
    });
    const plan = planCluster(s);
    assert.equal(plan.status.clusterID, undefined);
    assert.equal(plan.action.kind, 'wait');
  });

  it('waits for the initial member that has not started and names it', () => {
    const s = state(cluster({}, locked(3, { nextMemberOrdinal: 3 })), initial(3), { ready: [0, 2] });
    const plan = planCluster(s);
    const why = 'waiting for initial member demo-1 to start';
    assert.deepEqual(plan.action, { kind: 'wait', reason: why });
    assert.deepEqual(progressing(plan), ['True', 'WaitingForSeed', why]);
    assert.equal(plan.status.clusterID, undefined);
  });
});
