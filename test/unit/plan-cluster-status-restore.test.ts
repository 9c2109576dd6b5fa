// The status a person reads, where plan-cluster-status.test.ts checks less: the Restored condition
// of a cluster created from a snapshot (which member's Pod speaks for the restore, a recorded
// cluster ID, a condition already True), a QuorumLost message in name order and for members with
// no status yet, a paused cluster whose member is not dormant, and a cluster with no generation or
// no prior status. Written against the mutants StrykerJS left alive in plan/cluster/status.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import { findCondition } from '../../shared/conditions.ts';
import { computeStatus } from '../../shared/plan/cluster/status.ts';
import type { ClusterState } from '../../shared/plan/cluster/types.ts';
import { cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';
import type { Progress } from '../../shared/plan/cluster/step.ts';

const idle: Progress = { active: false, reason: 'Idle', message: '' };
const S3 = {
  endpoint: 'https://s3.example',
  bucket: 'b',
  key: 'k.db',
  credentialsSecretRef: { name: 'creds' },
};
const restoring = (status: EtcdClusterStatus) =>
  cluster({ replicas: 3, bootstrap: { restore: { source: { s3: S3 } } } }, status);
const statusOf = (s: ClusterState) => computeStatus(s, s.cluster.status ?? {}, idle);
const condition = (status: EtcdClusterStatus, type: string) => {
  const c = findCondition(status.conditions, type);
  return c && [c.status, c.reason, c.message];
};
const cond = (type: string, status: 'True' | 'False' | 'Unknown') => ({
  type,
  status,
  reason: 'R',
  message: 'm',
  lastTransitionTime: '2026-11-22T09:00:00Z',
});

describe('Restored, for a cluster created from a snapshot', () => {
  // A non-seed member listed first, so "any member" and "the seed" differ.
  const world = (status: EtcdClusterStatus = locked(3)) =>
    state(restoring(status), [member(1, { bootstrap: false }), member(0, { bootstrap: true })], {
      ready: [],
    });

  it("a static restore (every initial member restores): any member Pod's failure is what Restored says", () => {
    const s = state(restoring(locked(3)), [member(0, { bootstrap: true }), member(1, { bootstrap: true })], {
      ready: [],
    });
    assert.deepEqual(condition(statusOf(s), 'Restored'), [
      'Unknown',
      'Restoring',
      'restoring s3://b/k.db into each of the 2 initial members',
    ]);
    s.pods[1] = { ...s.pods[1], restoreFailure: { reason: 'RestoreFailed', message: 'etcdutl exited 1' } };
    const restored = condition(statusOf(s), 'Restored');
    assert.equal(restored?.[0], 'False');
    assert.equal(restored?.[1], 'RestoreFailed');
    assert.match(restored?.[2] ?? '', /etcdutl exited 1; .*delete the Pod of demo-1 to start over\)$/);
  });

  it("the seed Pod's failed restore step is what Restored says; another member's Pod is not the seed", () => {
    const s = world();
    s.pods[0] = { ...s.pods[0], restoreFailure: { reason: 'AccessDenied', message: 'not the seed' } };
    assert.deepEqual(condition(statusOf(s), 'Restored'), [
      'Unknown',
      'Restoring',
      'restoring s3://b/k.db into the seed member',
    ]);
    s.pods[1] = { ...s.pods[1], restoreFailure: { reason: 'ChecksumMismatch', message: 'sha256 differs' } };
    const restored = condition(statusOf(s), 'Restored');
    assert.equal(restored?.[0], 'False');
    assert.equal(restored?.[1], 'ChecksumMismatch');
    assert.match(
      restored?.[2] ?? '',
      /^restoring s3:\/\/b\/k\.db failed: sha256 differs; no member runs until it succeeds/,
    );
  });

  it('a recorded cluster ID: Restored True', () => {
    assert.deepEqual(condition(statusOf(world(locked(3, { clusterID: 'c0ffee' }))), 'Restored'), [
      'True',
      'Restored',
      'the cluster was restored from s3://b/k.db',
    ]);
  });

  it('Restored already True stays True (even before the ID is recorded); another condition does not count', () => {
    const trueBefore = world(locked(3, { conditions: [cond('Restored', 'True')] }));
    assert.equal(condition(statusOf(trueBefore), 'Restored')?.[0], 'True');
    const otherTrue = world(
      locked(3, { conditions: [cond('Available', 'True'), cond('Restored', 'False')] }),
    );
    assert.equal(condition(statusOf(otherTrue), 'Restored')?.[0], 'Unknown');
  });
});

describe('QuorumLost, member by member', () => {
  it('members are named in name order whatever order they are listed in, and one with no status yet is named without an ID', () => {
    const members = [member(2), member(0), member(1)];
    delete members[0].status;
    const s = state(cluster({ replicas: 3 }, locked(3, { clusterID: 'c0ffee' })), members, {
      etcd: etcdOf([membership(0), membership(1), membership(2)]),
      ready: [0],
    });
    const message = condition(statusOf(s), 'Available')?.[2] ?? '';
    assert.match(
      message,
      /; demo-0 ready; demo-1 not ready \(Pod Running\); demo-2 not ready \(Pod Running\); etcdfn changes nothing/,
    );
  });
});

describe('paused', () => {
  it('a member that is not dormant does not stand for the kept data', () => {
    const s = state(cluster({ replicas: 0 }, locked(0)), [member(0)], { ready: [] });
    assert.deepEqual(condition(statusOf(s), 'Available'), [
      'False',
      'Paused',
      'paused (spec.replicas=0) before the cluster formed, so there is no data',
    ]);
  });
});

describe('bookkeeping', () => {
  it('no generation on the object: no observedGeneration anywhere', () => {
    const c = cluster({ replicas: 3 }, locked(3, { clusterID: 'c0ffee' }));
    delete c.metadata.generation;
    const s = state(c, [member(0), member(1), member(2)], {
      etcd: etcdOf([membership(0), membership(1), membership(2)]),
    });
    const status = statusOf(s);
    assert.equal('observedGeneration' in status, false);
    for (const c of status.conditions ?? []) assert.equal('observedGeneration' in c, false, c.type);
  });

  it('no status yet: the ready count is of 0 desired, and the conditions are exactly the ones computed', () => {
    const s = state(cluster({ replicas: 3 }), [], {});
    const status = computeStatus(s, {}, idle);
    assert.equal(status.ready, '0/0');
    assert.deepEqual((status.conditions ?? []).map(c => typeof c === 'object' && c.type).sort(), [
      'Available',
      'Degraded',
      'Progressing',
    ]);
  });
});
