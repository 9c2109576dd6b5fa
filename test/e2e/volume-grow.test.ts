// Growing volumes on the sandbox with real etcd 3.5.16 (the sandbox models StorageClasses and the
// PVC resize conditions: test/sandbox-tests/kubelet-volume-expansion.test.ts). A 3-member cluster of
// 1Gi with 200 keys grows to 2Gi: every PVC reports 2Gi, the Pods and member IDs stay, the keys are
// intact, and status.members shows 2Gi requested and capacity per member, with dbSize and
// dbSizeInUse (settled: a few more keys and a tick do not rewrite the status). A cluster whose StorageClass does not allow expansion ends in VolumeExpansionRefused
// on the member and the cluster, and nothing else changes (no retry loop either).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { NS, STEP_TIMEOUT, healingSandbox } from '../support/healing-sandbox.ts';
import { waitFor } from '../support/wait.ts';

interface Claim extends KubeObject {
  spec?: { resources?: { requests?: { storage?: string } }; storageClassName?: string };
  status?: { capacity?: { storage?: string }; conditions?: { type: string }[] };
}

describe('volumes grow (etcd 3.5.16)', { timeout: 900_000 }, () => {
  const world = healingSandbox(31, { chaos: false });
  const { start, stop, kube, cluster, members, pods, withEtcd, describeWorld } = world;
  before(start);
  after(stop);

  const claims = (name: string) =>
    kube().list<Claim>('v1', 'PersistentVolumeClaim', NS, `etcdfn.io/cluster=${name}`);
  const podUids = async (name: string) =>
    new Map((await pods(name)).map(p => [p.metadata.name ?? '', p.metadata.uid ?? '']));
  const grow = async (name: string, size: string) => {
    const patched = await kube().mergePatch(world.clusterRef(name), { spec: { storage: { size } } });
    assert.equal(patched.kind, 'written');
  };
  const progressing = async (name: string) =>
    (await cluster(name)).status?.conditions?.find(c => c.type === 'Progressing');

  it('1Gi → 2Gi: every PVC reports 2Gi, same Pods and member IDs, keys intact, status 2Gi per member', async () => {
    const name = 'grow';
    await world.create(name, 3);
    const { ids } = await world.converged(name, 3);
    await world.writeKeys(name, 'key-', 200);
    const uids = await podUids(name);
    await grow(name, '2Gi');

    const describe = describeWorld(name);
    await waitFor(
      'every PVC asks for and reports 2Gi, no resize condition left',
      async () => {
        const list = await claims(name);
        return (
          list.length === 3 &&
          list.every(
            c =>
              c.spec?.resources?.requests?.storage === '2Gi' &&
              c.status?.capacity?.storage === '2Gi' &&
              // No resize condition left; kube-controller-manager's own Unused condition may stay.
              !(c.status.conditions ?? []).some(x =>
                ['Resizing', 'FileSystemResizePending'].includes(x.type),
              ),
          )
        );
      },
      { timeoutMs: STEP_TIMEOUT },
      describe,
    );
    const done = await waitFor(
      'status.members shows 2Gi per member and the cluster is reconciled',
      async () => {
        const c = await cluster(name);
        const entries = c.status?.members ?? [];
        const progress = c.status?.conditions?.find(x => x.type === 'Progressing');
        const ok =
          entries.length === 3 &&
          entries.every(m => m.volume?.requested === '2Gi' && m.volume.capacity === '2Gi') &&
          progress?.reason === 'Reconciled';
        return ok ? c : undefined;
      },
      { timeoutMs: STEP_TIMEOUT },
      describe,
    );
    for (const m of done.status?.members ?? []) {
      assert.ok((m.dbSize ?? 0) > 0, `${m.name} dbSize ${m.dbSize}`);
      assert.ok((m.dbSizeInUse ?? 0) > 0 && (m.dbSizeInUse ?? 0) <= (m.dbSize ?? 0), `${m.name} dbSizeInUse`);
    }
    for (const m of await members(name)) {
      assert.equal(m.spec.storage.size, '2Gi');
      const cond = m.status?.conditions?.find(c => c.type === 'VolumeExpanded');
      assert.equal(cond?.status, 'True', `${m.metadata.name}: ${JSON.stringify(cond)}`);
    }
    assert.deepEqual(await podUids(name), uids, 'no Pod was replaced');
    const after = await world.converged(name, 3);
    assert.deepEqual(after.ids, ids, 'members keep their IDs');
    const kvs = await withEtcd(name, client => client.getAll().prefix('key-').strings());
    assert.equal(Object.keys(kvs).length, 200);
    for (let n = 0; n < 200; n++) assert.equal(kvs[`key-${n}`], `v${n}`);

    // A steady cluster is not rewritten because its database grew by a few pages (across a tick).
    const version = (await cluster(name)).metadata.resourceVersion;
    await world.writeKeys(name, 'more-', 50);
    await new Promise(resolve => setTimeout(resolve, 15_000));
    assert.equal((await cluster(name)).metadata.resourceVersion, version, 'status rewritten');
  });

  it('a StorageClass without expansion: VolumeExpansionRefused on the member and the cluster, nothing else changes', async () => {
    const created = await kube().create({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'fixed' },
      provisioner: 'sandbox.etcdfn.io/hostpath',
    } as KubeObject);
    assert.equal(created.kind, 'created');
    const name = 'fixed';
    await world.create(name, 1, { storage: { size: '1Gi', storageClassName: 'fixed' } });
    const { ids } = await world.converged(name, 1);
    const uids = await podUids(name);
    await grow(name, '2Gi');

    const describe = describeWorld(name);
    const refused = await waitFor(
      'Progressing VolumeExpansionRefused',
      async () => {
        const p = await progressing(name);
        return p?.reason === 'VolumeExpansionRefused' ? p : undefined;
      },
      { timeoutMs: STEP_TIMEOUT },
      describe,
    );
    assert.equal(refused.status, 'False');
    assert.match(
      refused.message,
      /^fixed-0: the API server refused to grow PVC data-fixed-0 from 1Gi to 2Gi: /,
    );
    assert.match(refused.message, /must support resize/);
    assert.match(refused.message, /StorageClass fixed does not allow volume expansion/);
    assert.match(refused.message, /kubectl patch storageclass fixed -p '\{"allowVolumeExpansion":true\}'/);
    const [member] = await members(name);
    const cond = member.status?.conditions?.find(c => c.type === 'VolumeExpanded');
    assert.equal(cond?.status, 'False');
    assert.equal(cond?.reason, 'VolumeExpansionRefused');
    assert.equal(member.status?.volume?.refused?.size, '2Gi');
    // Each function writes its Event after its status write, so the condition can be seen first.
    const warnedKinds = async () =>
      (
        await kube().list<KubeObject & { reason?: string; involvedObject?: { kind?: string } }>(
          'v1',
          'Event',
          NS,
        )
      )
        .filter(e => e.reason === 'VolumeExpansionRefused')
        .map(e => e.involvedObject?.kind);
    const warned = await waitFor(
      'VolumeExpansionRefused Events on the EtcdMember and the EtcdCluster',
      async () => {
        const kinds = await warnedKinds();
        return kinds.includes('EtcdMember') && kinds.includes('EtcdCluster') ? kinds : undefined;
      },
      { timeoutMs: 30_000 },
      async () => `Events: ${(await warnedKinds()).join(', ')}`,
    );
    assert.ok(
      warned.includes('EtcdMember') && warned.includes('EtcdCluster'),
      `Events: ${warned.join(', ')}`,
    );

    // Nothing else changes: the claim, the Pod, the member ID, availability; and no retry loop
    // (the member is not rewritten across a tick, every 10 s here).
    const memberVersion = member.metadata.resourceVersion;
    await new Promise(resolve => setTimeout(resolve, 15_000));
    const [claim] = await claims(name);
    assert.equal(claim.spec?.resources?.requests?.storage, '1Gi');
    assert.equal(claim.status?.capacity?.storage, '1Gi');
    assert.deepEqual(await podUids(name), uids);
    const [again] = await members(name);
    assert.equal(again.metadata.resourceVersion, memberVersion, 'the member is not rewritten');
    const c = await cluster(name);
    assert.equal(c.status?.conditions?.find(x => x.type === 'Available')?.status, 'True');
    assert.equal(c.status?.phase, 'Running');
    assert.deepEqual((await world.converged(name, 1)).ids, ids);
  });
});
