// A cluster's wake-up PingSource (shared/plan/wake/cluster-wake.ts): there while its restore waits on
// the user (at bootstrap or in place), routed to reconcile-cluster by its name's suffix, and read
// only when one may exist.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterTarget } from '../../functions/reconcile-cluster/targets.ts';
import { snapshotTarget } from '../../functions/run-snapshot/targets.ts';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import {
  CLUSTER_WAKE_SUFFIX,
  clusterOfWake,
  clusterWakeName,
  desiredClusterWake,
  mayHaveWake,
  restoreWaits,
} from '../../shared/plan/wake/cluster-wake.ts';
import { boundedName } from '../../shared/builders/ping-source.ts';
import { wakeStep } from '../../shared/plan/wake/wake.ts';
import type { RestoreResolution } from '../../shared/plan/restore/types.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const SINK = { uri: 'http://broker.example/etcdfn' };
type Cluster = EtcdCluster & KubeObject;

/** Cluster restored (uid c-uid) with `conditions` in its status. */
function restoredCluster(conditions: { type: string; status: string }[] = [], deleting = false): Cluster {
  return etcdCluster({
    metadata: {
      name: 'restored',
      uid: 'c-uid',
      deletionTimestamp: deleting ? new Date('2026-11-26T12:00:00Z') : undefined,
    },
    status: {
      conditions: conditions.map(c => ({ ...c, reason: 'R', message: 'm', lastTransitionTime: '' })),
    } as Cluster['status'],
  });
}

const blocked: RestoreResolution = { kind: 'blocked', reason: 'SecretNotFound', message: 'create it' };
const ready: RestoreResolution = {
  kind: 'ready',
  restore: { source: { pvc: { claimName: 'c' } } },
  sourceName: 'x',
};

describe('restoreWaits', () => {
  const rows: [string, { restore?: RestoreResolution; inPlaceRestore?: RestoreResolution }, boolean][] = [
    ['no restore', {}, false],
    ['restore at bootstrap blocked', { restore: blocked }, true],
    ['restore at bootstrap ready', { restore: ready }, false],
    ['in-place request blocked', { inPlaceRestore: blocked }, true],
    ['in-place request ready', { inPlaceRestore: ready }, false],
  ];
  for (const [what, state, waits] of rows)
    it(`${what}: ${waits}`, () => assert.equal(restoreWaits(state), waits));
});

describe('desiredClusterWake', () => {
  it('while waiting: every minute, owned by the cluster, naming it, its name ending in the routed suffix', () => {
    const wake = desiredClusterWake(restoredCluster(), true, SINK)!;
    assert.equal(wake.metadata.name, 'restored-etcdfn-cluster-wake');
    assert.ok(wake.metadata.name?.endsWith(CLUSTER_WAKE_SUFFIX));
    assert.equal(wake.metadata.namespace, 'prod');
    assert.equal(wake.spec.schedule, '* * * * *');
    assert.equal(wake.spec.sink.uri, SINK.uri);
    assert.deepEqual(JSON.parse(wake.spec.data), { etcdCluster: { namespace: 'prod', name: 'restored' } });
    assert.deepEqual(
      wake.metadata.ownerReferences?.map(o => [o.kind, o.name, o.uid, o.controller]),
      [['EtcdCluster', 'restored', 'c-uid', true]],
    );
  });
  it('not waiting, or being deleted: none', () => {
    assert.equal(desiredClusterWake(restoredCluster(), false, SINK), undefined);
    assert.equal(desiredClusterWake(restoredCluster([], true), true, SINK), undefined);
  });
  it('a long cluster name keeps the suffix and stays within 63 characters', () => {
    const name = clusterWakeName('c'.repeat(60));
    assert.equal(name.length, 63);
    assert.ok(name.endsWith(CLUSTER_WAKE_SUFFIX), name);
    assert.notEqual(name, clusterWakeName(`${'c'.repeat(59)}d`));
    assert.equal(boundedName('p-', 'short', '-s'), 'p-short-s');
  });
});

describe('mayHaveWake: the PingSource is read only when a blocked restore may have made one', () => {
  it('Restored=False: read', () =>
    assert.equal(mayHaveWake(restoredCluster([{ type: 'Restored', status: 'False' }])), true));
  for (const conditions of [
    [],
    [{ type: 'Restored', status: 'True' }],
    [{ type: 'Restored', status: 'Unknown' }],
    [{ type: 'Available', status: 'False' }],
  ])
    it(`${JSON.stringify(conditions)}: no read`, () =>
      assert.equal(mayHaveWake(restoredCluster(conditions)), false));
});

describe('the wake-up event', () => {
  const envelope = {
    id: '1',
    source: '/apis/v1/namespaces/prod/pingsources/restored-etcdfn-cluster-wake',
    type: 'dev.knative.sources.ping',
  };
  const data = { etcdCluster: { namespace: 'prod', name: 'restored' } };
  it('reconcile-cluster reconciles the cluster it names (object or JSON text); the resync tick still means all', () => {
    for (const d of [data, JSON.stringify(data)])
      assert.deepEqual(clusterTarget({ ...envelope, kind: 'tick', data: d } as never), {
        kind: 'cluster',
        namespace: 'prod',
        name: 'restored',
        woken: true,
      });
    assert.deepEqual(clusterTarget({ ...envelope, kind: 'tick', data: { tick: 'resync' } } as never), {
      kind: 'all-clusters',
    });
  });
  it('run-snapshot, which takes every PingSource, leaves it alone (no resync of every snapshot each minute)', () => {
    const target = snapshotTarget({ ...envelope, kind: 'tick', data } as never);
    assert.equal(target.kind, 'ignore');
  });
  it('data that does not name a cluster names none', () => {
    for (const d of [
      undefined,
      null,
      '{',
      { etcdCluster: { name: 'a' } },
      { etcdSnapshot: { namespace: 'a', name: 'b' } },
    ])
      assert.equal(clusterOfWake(d), undefined, JSON.stringify(d));
  });
});

describe('the shared wake-up pieces, at their edges', () => {
  it('a name of exactly 63 characters is kept whole; 64 is shortened', () => {
    assert.equal(boundedName('etcdfn-wake-', 'n'.repeat(51)), `etcdfn-wake-${'n'.repeat(51)}`);
    assert.match(boundedName('etcdfn-wake-', 'n'.repeat(52)), /^etcdfn-wake-n{42}-[0-9a-f]{8}$/);
  });
  it('a cut that ends in dashes drops all of them, and only at the end', () => {
    const name = `x-${'a'.repeat(48)}--${'b'.repeat(20)}`;
    assert.match(boundedName('p-', name), new RegExp(`^p-x-a{48}-[0-9a-f]{8}$`));
  });
  it('a wake-up whose owner references include ours as controller among others is ours', () => {
    const c = restoredCluster();
    const mine = desiredClusterWake(c, true, SINK)!;
    const existing = {
      ...mine,
      metadata: {
        ...mine.metadata,
        uid: 'p',
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'other', uid: 'x' },
          ...(mine.metadata.ownerReferences ?? []),
        ],
      },
    };
    assert.deepEqual(wakeStep(c, undefined, existing), {
      kind: 'delete',
      name: 'restored-etcdfn-cluster-wake',
      uid: 'p',
    });
  });
  it('a cluster without status has no wake-up to read', () => {
    const c = restoredCluster();
    delete c.status;
    assert.equal(mayHaveWake(c), false);
  });
  it('data whose namespace is not a string names nothing', () => {
    assert.equal(clusterOfWake({ etcdCluster: { namespace: 3, name: 'a' } }), undefined);
  });
});
