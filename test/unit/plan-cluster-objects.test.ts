// The objects reconcile-cluster keeps beside the members, as planCluster decides them: the two
// Services, the NetworkPolicy and the PodDisruptionBudget, created when missing and repaired when
// someone changed them. Written against the mutants StrykerJS left alive in shared/plan/cluster/plan.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import { buildNetworkPolicy } from '../../shared/builders/network-policy.ts';
import { buildPdb } from '../../shared/builders/pdb.ts';
import { findCondition } from '../../shared/conditions.ts';
import { planCluster, type ClusterPlan } from '../../shared/plan/cluster/plan.ts';
import type { ClusterState } from '../../shared/plan/cluster/types.ts';
import { cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';
import { desiredPdb } from '../../shared/plan/owned/pdb.ts';

const formed = (replicas: number, extra: EtcdClusterStatus = {}) =>
  cluster({ replicas }, locked(replicas, { clusterID: 'c0ffee0000000001', ...extra }));
/** Three ready voters that etcd agrees on: the target is reached. */
const reached = (): ClusterState =>
  state(formed(3), [member(0), member(1), member(2)], {
    etcd: etcdOf([membership(0), membership(1), membership(2)]),
  });
const progressing = (plan: ClusterPlan) => {
  const p = findCondition(plan.status.conditions, 'Progressing');
  return [p?.status, p?.reason, p?.message];
};

describe('the Services', () => {
  it('all in place: nothing to do', () => {
    assert.deepEqual(planCluster(reached()).action, { kind: 'none' });
  });
  it('the client Service deleted (the headless one still there): recreated', () => {
    const s = reached();
    delete s.services.client;
    assert.deepEqual(planCluster(s).action, { kind: 'ensure-services' });
  });
  it('the headless Service deleted: recreated', () => {
    const s = reached();
    delete s.services.headless;
    assert.deepEqual(planCluster(s).action, { kind: 'ensure-services' });
  });
  it('the headless Service edited to hide members that are not ready: repaired', () => {
    const s = reached();
    s.services.headless!.spec!.publishNotReadyAddresses = false;
    assert.deepEqual(planCluster(s).action, { kind: 'ensure-services' });
  });
  it('the client Service edited to select learners too: repaired', () => {
    const s = reached();
    s.services.client!.spec!.selector = { 'etcdfn.io/cluster': 'demo' };
    assert.deepEqual(planCluster(s).action, { kind: 'ensure-services' });
  });
});

describe('the NetworkPolicy', () => {
  it('missing while the cluster grows: created, and status says so', () => {
    const s = state(formed(3, { nextMemberOrdinal: 2 }), [member(0), member(1)], {
      networkPolicy: false,
      etcd: etcdOf([membership(0), membership(1)]),
    });
    const plan = planCluster(s);
    assert.deepEqual(plan.action, { kind: 'ensure-network-policy' });
    assert.deepEqual(progressing(plan), ['True', 'CreatingNetworkPolicy', 'creating the NetworkPolicy']);
  });
  it("it admits the operator's own namespace: one written for another namespace is repaired", () => {
    const s = reached();
    s.operatorNamespace = 'ops';
    assert.deepEqual(planCluster(s).action, { kind: 'ensure-network-policy' });
    s.networkPolicy = buildNetworkPolicy(s.cluster, { operatorNamespace: 'ops' });
    assert.deepEqual(planCluster(s).action, { kind: 'none' });
  });
});

describe('the PodDisruptionBudget', () => {
  it('edited to let more voters go than quorum can spare: repaired', () => {
    const s = reached();
    s.pdb = buildPdb(s.cluster, { voters: 1, targetReplicas: 1 });
    assert.equal(s.pdb?.spec?.minAvailable, 1);
    assert.deepEqual(planCluster(s).action, { kind: 'ensure-pdb' });
  });
  it('etcd not answering, a member that never recorded a status is not counted as a voter', () => {
    const s: ClusterState = {
      ...state(formed(3), [member(0), member(1), member(2)]),
      etcd: { reachable: false, error: 'connection refused' },
    };
    delete s.members[2].status;
    s.pdb = buildPdb(s.cluster, { voters: 2 });
    assert.deepEqual(planCluster(s).action, { kind: 'none' });
  });
  it('counts the voters etcd lists, whatever the members recorded, and not its learners', () => {
    const members = [member(0), member(1), member(2, { voter: false })];
    // A target of 3 with 4 voters in etcd keeps 3 (a majority of 4), not 2 (of the 2 recorded).
    const four = state(formed(3), members, {
      etcd: etcdOf([membership(0), membership(1), membership(2), membership(3)]),
    });
    assert.equal(desiredPdb(four)?.spec?.minAvailable, 3);
    // 3 voters and 2 learners: a majority of 3 must stay, not of 5.
    const learners = state(formed(3), members, {
      etcd: etcdOf([
        membership(0),
        membership(1),
        membership(2),
        membership(3, { learner: true }),
        membership(4, { learner: true }),
      ]),
    });
    assert.equal(desiredPdb(learners)?.spec?.minAvailable, 2);
  });
});
