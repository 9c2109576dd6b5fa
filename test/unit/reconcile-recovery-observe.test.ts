// What the two quorum-loss recoveries read beyond the ordinary observation, over plain fakes:
// shared/reconcile/cluster-observe-recovery.ts (RestoreLatestSnapshot: the namespace's EtcdSnapshots,
// then the newest verified one's Secret or claim; nothing at all unless the policy is on and quorum
// is lost) and shared/reconcile/cluster-recovery-observe.ts (ForceNewCluster: each running member's
// own report, asked on its own endpoint, only of members whose Pod is up).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { observeRecoverySnapshot } from '../../shared/reconcile/cluster-observe-recovery.ts';
import { selfReports } from '../../shared/reconcile/cluster-recovery-observe.ts';
import { cluster as clusterOf, locked, member, state as stateOf } from '../support/cluster-world.ts';
import { StoreKube, storeContext } from '../support/store-kube.ts';

const client = (n: number) => `http://demo-${n}.demo.prod.svc:2379`;
const s3 = { bucket: 'b', key: 'k', endpoint: 'https://s3.example', credentialsSecretRef: { name: 'creds' } };

function snapshot(name: string, completionTime: string, destination: object = { s3 }, verified = true) {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: { name, namespace: 'prod' },
    spec: { clusterRef: { name: 'demo' }, destination },
    status: {
      phase: 'Complete',
      completionTime,
      artifact: { revision: 7, uri: 'pvc' in destination ? 'pvc://backups/snap.db' : 's3://b/k' },
      conditions: [{ type: 'Verified', status: verified ? 'True' : 'False' }],
    },
  } as unknown as KubeObject;
}

/** 3 members, only demo-0 ready, etcd unreachable: quorum lost. */
function lost(policy: string | undefined, ready = [0]) {
  const cluster = clusterOf(
    policy ? { recovery: { policy } as never } : {},
    locked(3, { clusterID: 'c0ffee' }),
  );
  return stateOf(cluster, [member(0), member(1), member(2)], {
    ready,
    etcd: { reachable: false, error: 'x' } as never,
  });
}

describe('observeRecoverySnapshot', () => {
  it('reads nothing without the policy, or while quorum holds', async () => {
    for (const state of [lost(undefined), lost('ReportOnly'), lost('RestoreLatestSnapshot', [0, 1])]) {
      const kube = new StoreKube([snapshot('s1', '2026-11-29T10:00:00Z')]);
      assert.equal(await observeRecoverySnapshot(storeContext(kube, {}), state), undefined);
      assert.deepEqual(kube.calls, []);
    }
  });

  it('lists the namespace’s EtcdSnapshots and reads the newest verified one’s Secret', async () => {
    const kube = new StoreKube([
      snapshot('older', '2026-11-29T09:00:00Z'),
      snapshot('newest', '2026-11-29T11:00:00Z', {
        s3: { ...s3, credentialsSecretRef: { name: 'newest-creds' } },
      }),
      snapshot('unverified', '2026-11-29T11:30:00Z', { s3 }, false),
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'newest-creds', namespace: 'prod' },
        data: { AWS_ACCESS_KEY_ID: 'YQ==', AWS_SECRET_ACCESS_KEY: 'Yg==' },
      } as KubeObject,
    ]);
    const found = await observeRecoverySnapshot(storeContext(kube, {}), lost('RestoreLatestSnapshot'));
    assert.deepEqual(
      kube.calls.map(c => [c.verb, c.apiVersion, c.kind, c.namespace, c.name]),
      [
        ['list', 'etcdfn.io/v1alpha1', 'EtcdSnapshot', 'prod', ''],
        ['get', 'v1', 'Secret', 'prod', 'newest-creds'],
      ],
    );
    assert.equal(found?.kind, 'ready');
    assert.equal(found?.kind === 'ready' && found.snapshot.name, 'newest');

    const noSecret = new StoreKube([snapshot('s1', '2026-11-29T11:00:00Z')]);
    const blocked = await observeRecoverySnapshot(storeContext(noSecret, {}), lost('RestoreLatestSnapshot'));
    assert.equal(blocked?.kind, 'blocked');
    assert.match(blocked?.kind === 'blocked' ? blocked.message : '', /creds/);
  });

  it('a PVC snapshot: its claim is read; missing blocks, present is ready', async () => {
    const kube = new StoreKube([snapshot('p', '2026-11-29T11:00:00Z', { pvc: { claimName: 'backups' } })]);
    const blocked = await observeRecoverySnapshot(storeContext(kube, {}), lost('RestoreLatestSnapshot'));
    const claim = kube.calls.find(c => c.kind === 'PersistentVolumeClaim');
    assert.deepEqual([claim?.apiVersion, claim?.namespace, claim?.name], ['v1', 'prod', 'backups']);
    assert.equal(
      kube.calls.some(c => c.kind === 'Secret'),
      false,
    );
    assert.equal(blocked?.kind, 'blocked');
    kube.put({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'backups', namespace: 'prod' },
    });
    assert.equal(
      (await observeRecoverySnapshot(storeContext(kube, {}), lost('RestoreLatestSnapshot')))?.kind,
      'ready',
    );
  });

  it('no verified snapshot: none, and no Secret read', async () => {
    const kube = new StoreKube([snapshot('u', '2026-11-29T11:00:00Z', { s3 }, false)]);
    const none = await observeRecoverySnapshot(storeContext(kube, {}), lost('RestoreLatestSnapshot'));
    assert.equal(none?.kind, 'none');
    assert.equal(kube.calls.length, 1);
  });
});

describe('selfReports', () => {
  const report = (n: number) => ({
    memberId: `id${n}`,
    clusterId: 'c0ffee',
    raftIndex: 10 + n,
    leaderId: '',
  });

  it('asks each running member whose Pod is up and not going, on its own endpoint; failures are left out', async () => {
    const cluster = clusterOf({}, locked(3, { clusterID: 'c0ffee' }));
    const state = stateOf(cluster, [member(0), member(1), member(2), member(3, { dormant: true })], {
      ready: [],
    });
    state.pods = [
      { name: 'demo-0', ready: false, phase: 'Running', deleting: false },
      { name: 'demo-1', ready: false, phase: 'Running', deleting: false },
      { name: 'demo-2', ready: false, phase: 'Pending', deleting: false },
      { name: 'demo-3', ready: false, phase: 'Running', deleting: false },
    ];
    const asked: string[] = [];
    const etcd = {
      memberStatus: (e: string) => {
        asked.push(e);
        return Promise.resolve(
          e === client(1) ? { kind: 'unavailable', message: 'x' } : { kind: 'ok', status: report(0) },
        );
      },
    } as unknown as EtcdAdapter;
    const reports = await selfReports(storeContext(new StoreKube(), etcd), state);
    assert.deepEqual(asked, [client(0), client(1)]);
    assert.deepEqual(reports, { 'demo-0': report(0) });

    state.pods[0] = { name: 'demo-0', ready: false, phase: 'Running', deleting: true };
    asked.length = 0;
    await selfReports(storeContext(new StoreKube(), etcd), state);
    assert.deepEqual(asked, [client(1)]);
    state.pods = [];
    asked.length = 0;
    assert.deepEqual(await selfReports(storeContext(new StoreKube(), etcd), state), {});
    assert.deepEqual(asked, []);
  });
});
