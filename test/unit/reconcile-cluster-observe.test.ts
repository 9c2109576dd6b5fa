// reconcile-cluster's observation (shared/reconcile/cluster-observe.ts) over plain fakes: which
// objects it reads (by the cluster's selector and names), which it keeps (its own members, their
// Pods), what it asks etcd and of which members, and what the plan is then told: etcd's view
// (reachable or why not, leader, alarms), sizes, the restore's source and Secret, a Pod's facts
// (ready, stuck image pulls, --force-new-cluster, --snapshot-count, a failed restore step).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { observeCluster, podFacts, podSnapshotCount } from '../../shared/reconcile/cluster-observe.ts';
import { locked, membership } from '../support/cluster-world.ts';
import { etcdCluster, etcdMember } from '../support/etcd-objects.ts';
import { StoreKube, storeContext } from '../support/store-kube.ts';

const REF = { namespace: 'prod', name: 'demo' };
const client = (n: number) => `http://demo-${n}.demo.prod.svc:2379`;
const owner = (uid: string) => [
  { apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdCluster', name: 'demo', uid, controller: true },
];
const readyPod = (name: string, extra: Partial<V1Pod> = {}) =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'prod' },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    ...extra,
  }) as KubeObject;

function world(o: { status?: object; spec?: object; members?: EtcdMember[]; extra?: KubeObject[] } = {}) {
  const cluster = etcdCluster({
    metadata: { resourceVersion: '5' },
    spec: o.spec as never,
    status: { ...locked(3), clusterID: 'c0ffee', ...o.status },
  });
  const members =
    o.members ??
    [0, 1, 2].map(n =>
      etcdMember(`demo-${n}`, {
        metadata: { ownerReferences: owner('uid-1') },
        status: { isVoter: true, role: 'voter', version: '3.5.16' } as never,
      }),
    );
  return new StoreKube([
    cluster,
    ...(members as KubeObject[]),
    ...[0, 1, 2].map(n => readyPod(`demo-${n}`)),
    ...(o.extra ?? []),
  ]);
}

const status = {
  leaderId: '0000000000001001',
  errors: [],
  dbSize: 100,
  dbSizeInUse: 60,
  raftIndex: 9,
  raftAppliedIndex: 8,
};
function fakeEtcd(o: Partial<Record<keyof EtcdAdapter, (...a: never[]) => unknown>> = {}) {
  const calls: string[] = [];
  const answer =
    (name: keyof EtcdAdapter, dflt: (...a: never[]) => unknown) =>
    (...args: unknown[]) => {
      calls.push(`${name} ${args.map(a => (Array.isArray(a) ? a.join(',') : String(a))).join(' ')}`);
      return Promise.resolve((o[name] ?? dflt)(...(args as never[])));
    };
  const etcd = {
    listMembers: answer('listMembers', () => ({
      kind: 'ok',
      members: [membership(0), membership(1), membership(2)],
      clusterId: 'c0ffee',
      endpoint: client(1),
    })),
    memberStatus: answer('memberStatus', () => ({ kind: 'ok', status })),
    clusterStatus: answer('clusterStatus', (e: string[]) => e.map(() => ({ kind: 'ok', status }))),
    storageState: answer('storageState', (e: string) => ({
      kind: 'ok',
      state: { memberId: `id-${e.slice(12, 13)}`, storageVersion: '3.6', downgradeEnabled: e === client(1) },
    })),
  } as unknown as EtcdAdapter;
  return { etcd, calls };
}

describe('observeCluster: reads', () => {
  it('a cluster that is not there is undefined, after one read', async () => {
    const kube = new StoreKube();
    assert.equal(await observeCluster(storeContext(kube, fakeEtcd().etcd), REF), undefined);
    assert.deepEqual(
      kube.calls.map(c => [c.verb, c.apiVersion, c.kind, c.namespace, c.name]),
      [['get', 'etcdfn.io/v1alpha1', 'EtcdCluster', 'prod', 'demo']],
    );
  });

  it('lists members and Pods by the cluster’s selector and reads its Services, PDB and NetworkPolicy by name', async () => {
    const kube = world({
      extra: [
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'demo', namespace: 'prod' } },
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'demo-client', namespace: 'prod' } },
        {
          apiVersion: 'policy/v1',
          kind: 'PodDisruptionBudget',
          metadata: { name: 'demo', namespace: 'prod' },
        },
        {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          metadata: { name: 'demo', namespace: 'prod' },
        },
      ] as KubeObject[],
    });
    const state = await observeCluster(
      storeContext(kube, fakeEtcd().etcd, { operatorNamespace: 'ops' }),
      REF,
    );
    const reads = kube.calls
      .slice(1, 7)
      .map(c => [c.verb, c.apiVersion, c.kind, c.namespace, c.name, c.options]);
    assert.deepEqual(reads, [
      ['list', 'etcdfn.io/v1alpha1', 'EtcdMember', 'prod', '', 'etcdfn.io/cluster=demo'],
      ['list', 'v1', 'Pod', 'prod', '', 'etcdfn.io/cluster=demo'],
      ['get', 'v1', 'Service', 'prod', 'demo', undefined],
      ['get', 'v1', 'Service', 'prod', 'demo-client', undefined],
      ['get', 'policy/v1', 'PodDisruptionBudget', 'prod', 'demo', undefined],
      ['get', 'networking.k8s.io/v1', 'NetworkPolicy', 'prod', 'demo', undefined],
    ]);
    assert.equal(state?.services.headless?.metadata?.name, 'demo');
    assert.equal(state?.services.client?.metadata?.name, 'demo-client');
    assert.equal(state?.pdb?.metadata?.name, 'demo');
    assert.equal(state?.networkPolicy?.metadata?.name, 'demo');
    assert.equal(state?.operatorNamespace, 'ops');
    assert.deepEqual(state?.now, new Date('2026-11-29T12:00:00Z'));
    assert.equal(state?.restore, undefined);
    assert.equal(state?.inPlaceRestore, undefined);
  });

  it('keeps only its own members (not an earlier cluster’s of the same name) and their Pods', async () => {
    const mine = etcdMember('demo-0', { metadata: { ownerReferences: owner('uid-1'), uid: 'm0' } });
    const old = etcdMember('demo-1', { metadata: { ownerReferences: owner('old-uid'), uid: 'm1' } });
    const kube = world({ members: [mine, old] });
    const oldPod = readyPod('demo-1', {
      metadata: {
        name: 'demo-1',
        namespace: 'prod',
        ownerReferences: [
          { apiVersion: 'x', kind: 'EtcdMember', name: 'demo-1', uid: 'm1', controller: true },
        ],
      },
    });
    kube.put(oldPod);
    const state = await observeCluster(storeContext(kube, fakeEtcd().etcd), REF);
    assert.deepEqual(
      state?.members.map(m => m.metadata.name),
      ['demo-0'],
    );
    assert.deepEqual(state?.pods.map(p => p.name).sort(), ['demo-0', 'demo-2']);
    assert.equal(state?.operatorNamespace, undefined);
  });
});

describe('observeCluster: etcd', () => {
  it('asks etcd through the ready members; the leader, the sizes; no downgrade, space or raft reads when not needed', async () => {
    const { etcd, calls } = fakeEtcd();
    const state = await observeCluster(storeContext(world(), etcd), REF);
    assert.deepEqual(calls, [
      `listMembers ${client(0)},${client(1)},${client(2)}`,
      `memberStatus ${client(1)}`,
      `clusterStatus ${client(0)},${client(1)},${client(2)}`,
    ]);
    assert.deepEqual(state?.etcd, {
      reachable: true,
      members: [membership(0), membership(1), membership(2)],
      clusterId: 'c0ffee',
      leaderId: '0000000000001001',
    });
    assert.deepEqual(state?.dbSizes?.['demo-2'], { dbSize: 100, dbSizeInUse: 60 });
    assert.equal(state?.space, undefined);
    assert.equal(state?.raftIndexes, undefined);
    assert.equal(state?.selfReports, undefined);
    assert.equal(state?.recoverySnapshot, undefined);
  });

  it('etcd that does not answer: unreachable with its error, and nothing more is asked', async () => {
    const { etcd, calls } = fakeEtcd({ listMembers: () => ({ kind: 'unavailable', message: 'no leader' }) });
    const state = await observeCluster(storeContext(world(), etcd), REF);
    assert.deepEqual(state?.etcd, { reachable: false, error: 'no leader' });
    assert.deepEqual(calls, [`listMembers ${client(0)},${client(1)},${client(2)}`]);
    assert.equal(state?.dbSizes, undefined);
  });

  it('no ready member: etcd is not asked at all', async () => {
    const kube = world();
    for (const n of [0, 1, 2]) kube.objects.delete(`Pod/prod/demo-${n}`);
    const { etcd, calls } = fakeEtcd();
    const state = await observeCluster(storeContext(kube, etcd), REF);
    assert.equal(state?.etcd, undefined);
    assert.deepEqual(calls, []);
  });

  it('alarms come from the status errors; a leader of 0 or an unanswered status is left out', async () => {
    const errors = ['memberID:1 alarm:NOSPACE', 'memberID:2 alarm:CORRUPT'];
    const alarmed = await observeCluster(
      storeContext(
        world(),
        fakeEtcd({ memberStatus: () => ({ kind: 'ok', status: { ...status, errors } }) }).etcd,
      ),
      REF,
    );
    assert.deepEqual(alarmed?.etcd?.reachable && alarmed.etcd.alarms, ['NOSPACE', 'CORRUPT']);
    const nospace = await observeCluster(
      storeContext(
        world(),
        fakeEtcd({ memberStatus: () => ({ kind: 'ok', status: { ...status, errors: [errors[0]] } }) }).etcd,
      ),
      REF,
    );
    assert.deepEqual(nospace?.etcd?.reachable && nospace.etcd.alarms, ['NOSPACE']);
    const noLeader = await observeCluster(
      storeContext(
        world(),
        fakeEtcd({ memberStatus: () => ({ kind: 'ok', status: { ...status, leaderId: '' } }) }).etcd,
      ),
      REF,
    );
    assert.equal(noLeader?.etcd?.reachable && 'leaderId' in noLeader.etcd, false);
    assert.equal(noLeader?.etcd?.reachable && 'alarms' in noLeader.etcd, false);
    const silent = await observeCluster(
      storeContext(world(), fakeEtcd({ memberStatus: () => ({ kind: 'unavailable', message: 'x' }) }).etcd),
      REF,
    );
    assert.deepEqual(silent?.etcd, {
      reachable: true,
      members: [membership(0), membership(1), membership(2)],
      clusterId: 'c0ffee',
    });
  });

  it('a downgrade in play: each member’s storage version and whether the downgrade is enabled', async () => {
    const members = [0, 1, 2].map(n =>
      etcdMember(`demo-${n}`, {
        metadata: { ownerReferences: owner('uid-1') },
        status: { isVoter: true, version: n === 0 ? '3.6.0' : '3.5.16' },
      }),
    );
    const { etcd, calls } = fakeEtcd({
      storageState: (e: string) =>
        e === client(2)
          ? { kind: 'unavailable', message: 'x' }
          : {
              kind: 'ok',
              state: {
                memberId: e === client(0) ? 'a0' : '',
                storageVersion: '3.6',
                downgradeEnabled: e === client(1),
              },
            },
    });
    const state = await observeCluster(storeContext(world({ members }), etcd), REF);
    assert.ok(calls.includes(`storageState ${client(0)}`));
    assert.deepEqual(state?.etcd?.reachable && state.etcd.downgrade, {
      enabled: true,
      storage: { a0: '3.6' },
    });
    const off = await observeCluster(
      storeContext(
        world({ members }),
        fakeEtcd({
          storageState: () => ({
            kind: 'ok',
            state: { memberId: 'a', storageVersion: '3.5', downgradeEnabled: false },
          }),
        }).etcd,
      ),
      REF,
    );
    assert.deepEqual(off?.etcd?.reachable && off.etcd.downgrade, { enabled: false, storage: { a: '3.5' } });
    const plain = await observeCluster(storeContext(world(), fakeEtcd().etcd), REF);
    assert.equal(plain?.etcd?.reachable && plain.etcd.downgrade, undefined);
  });

  it('a defragmentation policy: each running member’s space is read too', async () => {
    const { etcd } = fakeEtcd();
    const state = await observeCluster(
      storeContext(world({ spec: { maintenance: { defrag: { schedule: '0 3 * * *' } } } }), etcd),
      REF,
    );
    assert.deepEqual(state?.space?.['demo-0'], { dbSize: 100, dbSizeInUse: 60 });
    const down = await observeCluster(
      storeContext(
        world({ spec: { maintenance: { defrag: {} } } }),
        fakeEtcd({ listMembers: () => ({ kind: 'unavailable', message: 'x' }) }).etcd,
      ),
      REF,
    );
    assert.equal(down?.space, undefined);
  });

  it('members on 3.6 with no record of legacy raft entries: each ready member’s raft indexes', async () => {
    const members = [0, 1, 2].map(n =>
      etcdMember(`demo-${n}`, {
        metadata: { ownerReferences: owner('uid-1') },
        spec: { version: '3.6.0' },
        status: { isVoter: true, version: '3.6.0' },
      }),
    );
    const state = await observeCluster(
      storeContext(
        world({
          members,
          spec: { version: '3.6.0' },
          status: { observed: { ...locked(3).observed, version: '3.6.0' } },
        }),
        fakeEtcd({
          clusterStatus: (e: string[]) =>
            e.map((_, i) =>
              i === 2
                ? { kind: 'unavailable', message: 'x' }
                : { kind: 'ok', status: { ...status, raftIndex: 10 + i, raftAppliedIndex: 9 + i } },
            ),
        }).etcd,
      ),
      REF,
    );
    assert.deepEqual(state?.raftIndexes, {
      'demo-0': { raftIndex: 10, applied: 9 },
      'demo-1': { raftIndex: 11, applied: 10 },
    });
    const notReady = world({
      members,
      spec: { version: '3.6.0' },
      status: { observed: { ...locked(3).observed, version: '3.6.0' } },
    });
    notReady.put(
      readyPod('demo-2', { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] } }),
    );
    const asked = fakeEtcd();
    await observeCluster(storeContext(notReady, asked.etcd), REF);
    assert.deepEqual(asked.calls.filter(c => c.startsWith('clusterStatus')).slice(-1), [
      `clusterStatus ${client(0)},${client(1)}`,
    ]);
  });
});

describe('observeCluster: restore sources', () => {
  const s3 = {
    bucket: 'b',
    key: 'k',
    endpoint: 'https://s3.example',
    credentialsSecretRef: { name: 'creds' },
  };

  it('before the cluster formed: the S3 source’s Secret is read, and its keys told to the plan', async () => {
    const kube = world({
      status: { clusterID: undefined },
      spec: { bootstrap: { restore: { source: { s3 } } } },
      extra: [
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'creds', namespace: 'prod' },
          data: { AWS_ACCESS_KEY_ID: 'YQ==', AWS_SECRET_ACCESS_KEY: 'Yg==' },
        } as KubeObject,
      ],
    });
    const state = await observeCluster(storeContext(kube, fakeEtcd().etcd), REF);
    const secret = kube.calls.find(c => c.kind === 'Secret');
    assert.deepEqual([secret?.apiVersion, secret?.namespace, secret?.name], ['v1', 'prod', 'creds']);
    assert.equal(state?.restore?.kind, 'ready');
    const missing = world({
      status: { clusterID: undefined },
      spec: { bootstrap: { restore: { source: { s3 } } } },
    });
    const blocked = await observeCluster(storeContext(missing, fakeEtcd().etcd), REF);
    assert.equal(blocked?.restore?.kind, 'blocked');
  });

  it('once formed, the bootstrap restore is not read again', async () => {
    const kube = world({ spec: { bootstrap: { restore: { source: { s3 } } } } });
    const state = await observeCluster(storeContext(kube, fakeEtcd().etcd), REF);
    assert.equal(state?.restore, undefined);
    assert.equal(
      kube.calls.some(c => c.kind === 'Secret'),
      false,
    );
  });

  it('a snapshotRef source: the EtcdSnapshot is read, then its Secret; a PVC source: the claim', async () => {
    const snapshot = {
      apiVersion: 'etcdfn.io/v1alpha1',
      kind: 'EtcdSnapshot',
      metadata: { name: 'snap', namespace: 'prod' },
      spec: {
        clusterName: 'demo',
        destination: { s3: { ...s3, credentialsSecretRef: { name: 'snap-creds' } } },
      },
    } as KubeObject;
    const kube = world({
      status: { clusterID: undefined },
      spec: { bootstrap: { restore: { source: { snapshotRef: { name: 'snap' } } } } },
      extra: [snapshot],
    });
    await observeCluster(storeContext(kube, fakeEtcd().etcd), REF);
    const reads = kube.calls
      .filter(c => c.kind === 'EtcdSnapshot' || c.kind === 'Secret')
      .map(c => [c.apiVersion, c.kind, c.namespace, c.name]);
    assert.deepEqual(reads, [
      ['etcdfn.io/v1alpha1', 'EtcdSnapshot', 'prod', 'snap'],
      ['v1', 'Secret', 'prod', 'snap-creds'],
    ]);
    const gone = world({
      status: { clusterID: undefined },
      spec: { bootstrap: { restore: { source: { snapshotRef: { name: 'snap' } } } } },
    });
    const g = await observeCluster(storeContext(gone, fakeEtcd().etcd), REF);
    assert.equal(g?.restore?.kind, 'blocked');

    const pvc = world({
      status: { clusterID: undefined },
      spec: { bootstrap: { restore: { source: { pvc: { claimName: 'backups', path: 's.db' } } } } },
    });
    const p = await observeCluster(storeContext(pvc, fakeEtcd().etcd), REF);
    const claim = pvc.calls.find(c => c.kind === 'PersistentVolumeClaim');
    assert.deepEqual([claim?.apiVersion, claim?.namespace, claim?.name], ['v1', 'prod', 'backups']);
    assert.equal(p?.restore?.kind, 'blocked');
    pvc.put({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'backups', namespace: 'prod' },
    });
    const found = await observeCluster(storeContext(pvc, fakeEtcd().etcd), REF);
    assert.equal(found?.restore?.kind, 'ready');
  });

  it('a seed created with a restore stands for the source: nothing is read', async () => {
    const members = [
      etcdMember('demo-0', {
        metadata: { ownerReferences: owner('uid-1') },
        spec: { bootstrap: true, restore: { source: { s3 } } },
      }),
    ];
    const kube = world({
      members,
      status: { clusterID: undefined },
      spec: { bootstrap: { restore: { source: { s3 } } } },
    });
    const state = await observeCluster(storeContext(kube, fakeEtcd().etcd), REF);
    assert.equal(state?.restore?.kind, 'ready');
    assert.equal(
      kube.calls.some(c => c.kind === 'Secret'),
      false,
    );
  });

  it('an in-place restore request not yet accepted: its EtcdSnapshot and Secret are read', async () => {
    const snapshot = {
      apiVersion: 'etcdfn.io/v1alpha1',
      kind: 'EtcdSnapshot',
      metadata: { name: 'snap', namespace: 'prod' },
      spec: {
        clusterName: 'demo',
        destination: {
          s3: { ...s3, credentialsSecretRef: { name: 'snap-creds' } },
          pvc: { claimName: 'pc' },
        },
      },
    } as KubeObject;
    const kube = world({
      spec: { inPlaceRestore: { requestID: 'r1', snapshotRef: { name: 'snap' } } },
      extra: [snapshot],
    });
    const state = await observeCluster(storeContext(kube, fakeEtcd().etcd), REF);
    const reads = kube.calls
      .filter(c => ['EtcdSnapshot', 'Secret', 'PersistentVolumeClaim'].includes(c.kind))
      .map(c => [c.apiVersion, c.kind, c.namespace, c.name]);
    assert.deepEqual(reads, [
      ['etcdfn.io/v1alpha1', 'EtcdSnapshot', 'prod', 'snap'],
      ['v1', 'Secret', 'prod', 'snap-creds'],
      ['v1', 'PersistentVolumeClaim', 'prod', 'pc'],
    ]);
    assert.ok(state?.inPlaceRestore);
    const done = world({
      spec: { inPlaceRestore: { requestID: 'r1', snapshotRef: { name: 'snap' } } },
      status: { inPlaceRestore: { requestID: 'r1', step: 'Done' } },
    });
    const d = await observeCluster(storeContext(done, fakeEtcd().etcd), REF);
    assert.equal(d?.inPlaceRestore, undefined);
    assert.equal(
      done.calls.some(c => c.kind === 'EtcdSnapshot'),
      false,
    );
  });
});

describe('observeCluster: edges the survivors showed', () => {
  it('a new cluster (no status) with a restore source: read, nothing throws; bootstrap without restore reads nothing', async () => {
    const s3 = {
      bucket: 'b',
      key: 'k',
      endpoint: 'https://s3.example',
      credentialsSecretRef: { name: 'creds' },
    };
    const fresh = new StoreKube([etcdCluster({ spec: { bootstrap: { restore: { source: { s3 } } } } })]);
    const state = await observeCluster(storeContext(fresh, fakeEtcd().etcd), REF);
    assert.equal(state?.restore?.kind, 'blocked');
    const empty = new StoreKube([etcdCluster({ spec: { bootstrap: {} } })]);
    const e = await observeCluster(storeContext(empty, fakeEtcd().etcd), REF);
    assert.equal(e?.restore, undefined);
    assert.equal(
      empty.calls.some(c => c.kind === 'Secret' || c.kind === 'EtcdSnapshot'),
      false,
    );
  });

  it('a PVC restore source reads no Secret', async () => {
    const kube = world({
      status: { clusterID: undefined },
      spec: { bootstrap: { restore: { source: { pvc: { claimName: 'backups', path: 's.db' } } } } },
    });
    await observeCluster(storeContext(kube, fakeEtcd().etcd), REF);
    assert.equal(
      kube.calls.some(c => c.kind === 'Secret'),
      false,
    );
  });

  it('in place: a snapshot that is gone blocks; a PVC-only one reads no Secret, an S3-only one no claim', async () => {
    const request = { inPlaceRestore: { requestID: 'r1', snapshotRef: { name: 'snap' } } };
    const gone = world({ spec: request });
    const g = await observeCluster(storeContext(gone, fakeEtcd().etcd), REF);
    assert.equal(g?.inPlaceRestore?.kind, 'blocked');
    assert.equal(
      gone.calls.some(c => c.kind === 'Secret' || c.kind === 'PersistentVolumeClaim'),
      false,
    );
    const snap = (destination: object) =>
      ({
        apiVersion: 'etcdfn.io/v1alpha1',
        kind: 'EtcdSnapshot',
        metadata: { name: 'snap', namespace: 'prod' },
        spec: { clusterName: 'demo', destination },
      }) as KubeObject;
    const pvc = world({ spec: request, extra: [snap({ pvc: { claimName: 'pc' } })] });
    await observeCluster(storeContext(pvc, fakeEtcd().etcd), REF);
    assert.equal(
      pvc.calls.some(c => c.kind === 'Secret'),
      false,
    );
    assert.equal(
      pvc.calls.some(c => c.kind === 'PersistentVolumeClaim'),
      true,
    );
    const s3only = world({
      spec: request,
      extra: [snap({ s3: { bucket: 'b', key: 'k', credentialsSecretRef: { name: 'c' } } })],
    });
    await observeCluster(storeContext(s3only, fakeEtcd().etcd), REF);
    assert.equal(
      s3only.calls.some(c => c.kind === 'PersistentVolumeClaim'),
      false,
    );
    assert.equal(
      s3only.calls.some(c => c.kind === 'Secret'),
      true,
    );
  });

  it('quorum lost: the recovery snapshot under RestoreLatestSnapshot, the self reports under ForceNewCluster', async () => {
    const lostWorld = (policy: string) => {
      const kube = world({ spec: { recovery: { policy } } });
      for (const n of [1, 2]) kube.objects.delete(`Pod/prod/demo-${n}`);
      return kube;
    };
    const down = () => fakeEtcd({ listMembers: () => ({ kind: 'unavailable', message: 'no leader' }) });
    const restore = await observeCluster(storeContext(lostWorld('RestoreLatestSnapshot'), down().etcd), REF);
    assert.equal(restore?.recoverySnapshot?.kind, 'none');
    const { etcd, calls } = down();
    const force = await observeCluster(storeContext(lostWorld('ForceNewCluster'), etcd), REF);
    assert.deepEqual(Object.keys(force?.selfReports ?? {}), ['demo-0']);
    assert.ok(calls.includes(`memberStatus ${client(0)}`));
  });
});

describe('podFacts', () => {
  const pod = (o: Partial<V1Pod>): V1Pod => ({ metadata: { name: 'demo-0' }, ...o });

  it('ready, phase, deleting', () => {
    assert.deepEqual(podFacts(pod({})), { name: 'demo-0', ready: false, phase: 'Pending', deleting: false });
    assert.deepEqual(podFacts({}), { name: '', ready: false, phase: 'Pending', deleting: false });
    assert.equal(
      podFacts(pod({ status: { conditions: [{ type: 'Ready', status: 'False' }] } })).ready,
      false,
    );
    assert.equal(
      podFacts(pod({ status: { conditions: [{ type: 'PodScheduled', status: 'True' }] } })).ready,
      false,
    );
    assert.equal(
      podFacts(pod({ status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } })).ready,
      true,
    );
    assert.equal(podFacts(pod({ status: { phase: 'Failed' } })).phase, 'Failed');
    const readyAmongOthers = pod({
      status: {
        conditions: [
          { type: 'PodScheduled', status: 'True' },
          { type: 'Ready', status: 'True' },
        ],
      },
    });
    assert.equal(podFacts(readyAmongOthers).ready, true);
    assert.equal(podFacts(pod({ metadata: { name: 'x', deletionTimestamp: new Date() } })).deleting, true);
    assert.equal(
      podFacts(pod({ metadata: { name: 'x', deletionTimestamp: null as never } })).deleting,
      false,
    );
  });

  it('a container stuck pulling or crashing is its problem, with the message when there is one', () => {
    const waiting = (reason: string, message?: string, init = false): V1Pod =>
      pod({
        status: {
          [init ? 'initContainerStatuses' : 'containerStatuses']: [
            {
              name: 'c',
              image: 'i',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { waiting: { reason, message } },
            },
          ],
        },
      });
    assert.equal(
      podFacts(waiting('ImagePullBackOff', 'Back-off pulling image')).problem,
      'ImagePullBackOff: Back-off pulling image',
    );
    assert.equal(podFacts(waiting('CrashLoopBackOff', undefined, true)).problem, 'CrashLoopBackOff');
    for (const r of [
      'ErrImagePull',
      'InvalidImageName',
      'CreateContainerConfigError',
      'CreateContainerError',
    ])
      assert.equal(podFacts(waiting(r)).problem, r);
    assert.equal('problem' in podFacts(waiting('ContainerCreating')), false);
  });

  it('--force-new-cluster and --snapshot-count (either spelling) on the etcd container', () => {
    const etcd = (command: string[], args: string[] = [], name = 'etcd'): V1Pod =>
      pod({ spec: { containers: [{ name, command, args }] } });
    assert.equal(podFacts(etcd(['etcd', '--force-new-cluster'])).forceNewCluster, true);
    assert.equal('forceNewCluster' in podFacts(etcd(['etcd'])), false);
    assert.equal(podFacts(etcd(['etcd', '--snapshot-count=5000'])).snapshotCount, 5000);
    assert.equal(podSnapshotCount(etcd(['etcd'], ['--snapshot-count', '7'])), 7);
    assert.equal(podSnapshotCount(etcd(['etcd', '--snapshot-count=lots'])), undefined);
    assert.equal(podSnapshotCount(etcd(['etcd', '--snapshot-count=5x'])), undefined);
    assert.equal(podSnapshotCount(etcd(['etcd', '--snapshot-count=x5'])), undefined);
    assert.equal(podSnapshotCount(etcd(['etcd', '--quota-backend-bytes', '1024'])), undefined);
    assert.equal(podSnapshotCount(etcd(['etcd', '--snapshot-count'])), undefined);
    assert.equal(podSnapshotCount(etcd(['--snapshot-count=9'], [], 'sidecar')), undefined);
    assert.equal('snapshotCount' in podFacts(etcd(['etcd'])), false);
  });

  it('the restore step that failed last, from its termination message; a passed step is skipped', () => {
    const init = (statuses: object[]): V1Pod => pod({ status: { initContainerStatuses: statuses as never } });
    const failedFetch = {
      name: 'restore-fetch',
      state: { terminated: { exitCode: 1, message: 'AccessDenied: the bucket refused the credentials' } },
    };
    assert.deepEqual(podFacts(init([failedFetch])).restoreFailure, {
      reason: 'AccessDenied',
      message: 'the bucket refused the credentials',
    });
    const passed = { name: 'restore-fetch', state: { terminated: { exitCode: 0 } } };
    const restarting = {
      name: 'restore',
      state: { waiting: { reason: 'PodInitializing' } },
      lastState: { terminated: { exitCode: 2, message: 'SnapshotNotFound: no such key' } },
    };
    assert.deepEqual(
      podFacts(init([{ name: 'other', state: { terminated: { exitCode: 1 } } }, passed, restarting]))
        .restoreFailure,
      {
        reason: 'SnapshotNotFound',
        message: 'no such key',
      },
    );
    const earlierPass = {
      name: 'restore',
      state: { running: {} },
      lastState: { terminated: { exitCode: 0, message: 'SnapshotNotFound: old words' } },
    };
    assert.equal(
      'restoreFailure' in podFacts(init([earlierPass])),
      false,
      'an earlier run that passed is no failure',
    );
    const noState = podFacts(init([{ name: 'restore-fetch' }]));
    assert.equal('restoreFailure' in noState, false);
    assert.equal(
      'problem' in podFacts(pod({ status: { containerStatuses: [{ name: 'etcd' } as never] } })),
      false,
    );
    const running = { name: 'restore-commit', state: { running: {} } };
    assert.equal('restoreFailure' in podFacts(init([running, failedFetch])), false);
    const noMessage = podFacts(
      init([{ name: 'restore-commit', state: { terminated: { exitCode: 3 } } }]),
    ).restoreFailure;
    assert.match(noMessage?.message ?? '', /exit code 3/);
  });
});
