// Bootstrap of a cluster that restores a snapshot, as planCluster decides it: no member is created
// while the restore's source cannot work (the seed would start on a partial restore), and status
// says why; once it can, an S3 source has every initial member claimed at once (static restore), a
// PVC source one seed; once the seed exists a later block does not stop it. Written against the mutants
// StrykerJS left alive in shared/plan/membership/bootstrap.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import { findCondition } from '../../shared/conditions.ts';
import { planCluster, type ClusterPlan } from '../../shared/plan/cluster/plan.ts';
import type { ClusterState } from '../../shared/plan/cluster/types.ts';
import { NOW, cluster, locked, member, state } from '../support/cluster-world.ts';

const s3 = {
  endpoint: 'http://s3.local:9000',
  bucket: 'b',
  key: 'x/snap.db',
  credentialsSecretRef: { name: 'creds' },
};
const MISSING =
  'the S3 credentials Secret prod/creds does not exist; create it with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (the restore starts once it exists)';
const restoring = (): EtcdCluster => {
  const c = cluster({}, locked(3, { nextMemberOrdinal: 0 }));
  c.spec.bootstrap = { restore: { source: { s3 } } };
  return c;
};
const blocked = (s: ClusterState): ClusterState => ({
  ...s,
  restore: { kind: 'blocked', reason: 'SecretNotFound', message: MISSING },
});
const condition = (plan: ClusterPlan, type: string) => {
  const c = findCondition(plan.status.conditions, type);
  return c && [c.status, c.reason, c.message];
};

describe('bootstrap from a snapshot', () => {
  it('the source cannot work: no seed is created, and status says why', () => {
    const plan = planCluster(blocked(state(restoring(), [])));
    const why = `cannot restore yet: ${MISSING}`;
    assert.deepEqual(plan.action, { kind: 'wait', reason: why });
    assert.deepEqual(condition(plan, 'Progressing'), ['True', 'RestoreBlocked', why]);
    assert.deepEqual(condition(plan, 'Restored'), ['False', 'SecretNotFound', MISSING]);
    assert.equal(plan.status.operation, undefined, 'nothing claimed');
    assert.equal(plan.status.nextMemberOrdinal, 0);
  });

  it('an S3 source can work: every initial member is claimed at once, each to restore it', () => {
    const plan = planCluster({
      ...state(restoring(), []),
      restore: { kind: 'ready', restore: { source: { s3 } }, sourceName: 's3://b/x/snap.db' },
    });
    assert.deepEqual(plan.action, {
      kind: 'claim',
      operation: {
        type: 'add-member',
        member: 'demo-0',
        bootstrap: true,
        initialMembers: ['demo-0', 'demo-1', 'demo-2'],
        startedAt: NOW.toISOString(),
      },
    });
    assert.equal(plan.status.nextMemberOrdinal, 3);
    assert.deepEqual(condition(plan, 'Progressing'), [
      'True',
      'Bootstrapping',
      'creating the initial members demo-0, demo-1, demo-2 together',
    ]);
  });

  it('a PVC source can work: only the seed is claimed (one node can mount a ReadWriteOnce claim)', () => {
    const c = restoring();
    const pvc = { claimName: 'backups', path: 'snap.db' };
    c.spec.bootstrap = { restore: { source: { pvc } } };
    const plan = planCluster({
      ...state(c, []),
      restore: { kind: 'ready', restore: { source: { pvc } }, sourceName: 'pvc://backups/snap.db' },
    });
    assert.deepEqual(plan.action, {
      kind: 'claim',
      operation: { type: 'add-member', member: 'demo-0', bootstrap: true, startedAt: NOW.toISOString() },
    });
    assert.deepEqual(condition(plan, 'Progressing'), [
      'True',
      'Bootstrapping',
      'creating the seed member demo-0',
    ]);
  });

  it('a seed already created is waited for, whatever the source says now', () => {
    const c = restoring();
    c.status!.nextMemberOrdinal = 1;
    const plan = planCluster(blocked(state(c, [member(0)], { ready: [] })));
    const why = 'waiting for the seed member demo-0 to start';
    assert.deepEqual(plan.action, { kind: 'wait', reason: why });
    assert.deepEqual(condition(plan, 'Progressing'), ['True', 'WaitingForSeed', why]);
  });
});
