// The PodDisruptionBudget's identity and drift (shared/builders/pdb.ts) in the cases the mutation run
// found untested: its kind, and an existing PDB whose selector someone changed or removed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import { buildPdb, pdbDrift } from '../../shared/builders/index.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const cluster = etcdCluster({ metadata: { uid: 'cluster-uid' } });
const desired = buildPdb(cluster, { voters: 3 })!;
const voters = { 'etcdfn.io/cluster': 'demo', 'etcdfn.io/role': 'voter' };

describe('PodDisruptionBudget', () => {
  it('is a policy/v1 PodDisruptionBudget selecting the cluster’s voters', () => {
    assert.equal(desired.apiVersion, 'policy/v1');
    assert.equal(desired.kind, 'PodDisruptionBudget');
    assert.deepEqual(desired.spec?.selector, { matchLabels: voters });
  });

  it('an extra match expression someone added is removed, even with the labels right', () => {
    const existing: V1PodDisruptionBudget = structuredClone(desired);
    existing.spec!.selector!.matchExpressions = [{ key: 'tier', operator: 'In', values: ['x'] }];
    assert.deepEqual(pdbDrift(existing, desired), {
      spec: { selector: { matchLabels: {}, matchExpressions: null } },
    });
  });

  it('a PDB whose selector was removed gets the voters’ selector back', () => {
    const existing: V1PodDisruptionBudget = structuredClone(desired);
    delete existing.spec!.selector;
    assert.deepEqual(pdbDrift(existing, desired), { spec: { selector: { matchLabels: voters } } });
  });

  it('a cluster whose status has no locked target yet (only conditions) is protected by its spec', () => {
    const early: EtcdCluster = {
      ...cluster,
      spec: { ...cluster.spec, replicas: 5 },
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Pending', message: '' }] },
    } as EtcdCluster;
    // 1 voter now, 5 wanted: 3 of them must stay.
    assert.equal(buildPdb(early, { voters: 1 })?.spec?.minAvailable, 3);
  });

  it('an unchanged PDB has no drift', () => {
    assert.equal(pdbDrift(structuredClone(desired), desired), undefined);
  });
});
