// reconcile-member step by step (shared/reconcile/member.ts), below e2e: the sandbox API server in
// process and a real etcd 3.5 seed. Each invocation's outcome is checked on what it left: the PVC
// and Pod it created, the member status it wrote from etcd's answer, the Pod's role label, a 409
// on its status write, and a pause that deletes the Pod and keeps the volume.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { findCondition } from '../../shared/conditions.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { ROLE_LABEL } from '../../shared/names.ts';
import { reconcileCluster } from '../../shared/reconcile/cluster.ts';
import { reconcileMember } from '../../shared/reconcile/member.ts';
import { NS, ReconcileWorld, memberRef } from '../support/reconcile-world.ts';
import { waitFor } from '../support/wait.ts';

const SEED = { namespace: NS, name: 'demo-0' };
const podRef = { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: 'demo-0' };
const pvcRef = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: NS, name: 'data-demo-0' };

describe('reconcile-member against the sandbox API server and real etcd', { timeout: 180_000 }, () => {
  let world: ReconcileWorld;
  const pod = () => world.kube.find<V1Pod & KubeObject>(podRef);
  const ready = async () => findCondition((await world.member('demo-0'))?.status?.conditions, 'Ready');

  before(async () => {
    world = await ReconcileWorld.start('demo');
    await world.kube.create({
      apiVersion: 'etcdfn.io/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: 'demo', namespace: NS },
      spec: { replicas: 1, version: '3.5.16', storage: { size: '1Gi' } },
    });
    // reconcile-cluster until the seed EtcdMember exists (target, Services, seed claim).
    for (let i = 0; i < 5 && !(await world.member('demo-0')); i++)
      await reconcileCluster(world.ctx, { namespace: NS, name: 'demo' });
    assert.ok(await world.member('demo-0'), 'seed created by reconcile-cluster');
  });
  after(async () => world?.stop());

  it('creates the PVC and then the Pod in one invocation, both controlled by the member', async () => {
    const outcome = await reconcileMember(world.ctx, SEED);
    assert.equal(outcome.result, 'done', JSON.stringify(outcome));
    const member = await world.member('demo-0');
    const pvc = await world.kube.find<V1PersistentVolumeClaim & KubeObject>(pvcRef);
    assert.equal(pvc?.metadata.ownerReferences?.[0]?.uid, member?.metadata.uid);
    assert.equal(pvc?.spec?.resources?.requests?.storage, '1Gi');
    const created = await pod();
    assert.equal(created?.metadata.ownerReferences?.[0]?.uid, member?.metadata.uid);
    const etcd = created?.spec?.containers.find(c => c.name === 'etcd');
    assert.match(etcd?.image ?? '', /:v3\.5\.16$/);
    assert.equal(created?.metadata.labels?.[ROLE_LABEL], 'voter', 'the seed is a voter from the start');
    assert.equal((await ready())?.reason, 'PodNotReady');
  });

  it('while the Pod is not ready: records the Pod once, then writes and creates nothing', async () => {
    const podUid = (await pod())?.metadata.uid;
    await reconcileMember(world.ctx, SEED);
    assert.equal((await world.member('demo-0'))?.status?.podUID, podUid);
    const rv = (await world.member('demo-0'))?.metadata.resourceVersion;
    await reconcileMember(world.ctx, SEED);
    assert.equal((await world.member('demo-0'))?.metadata.resourceVersion, rv);
    assert.equal((await pod())?.metadata.uid, podUid, 'the same Pod');
  });

  it('a 409 on the status write: observed again and written over the winner, not over stale data', async () => {
    await world.startEtcd((await world.member('demo-0'))!);
    await world.readyPod('demo-0');
    const podUid = (await pod())?.metadata.uid;
    const { ctx, raced } = world.racingContext('EtcdMember');
    const outcome = await reconcileMember(ctx, SEED);
    assert.ok(raced(), 'the status write was raced');
    assert.equal(outcome.result, 'done', JSON.stringify(outcome));
    const member = await world.member('demo-0');
    assert.equal(member?.metadata.labels?.['test.etcdfn.io/raced'], 'yes', 'the winner’s change is kept');
    const listed = await world.rawEtcd.listMembers([world.clientURL('demo-0')]);
    assert.equal(listed.kind, 'ok');
    assert.equal(member?.status?.memberID, listed.kind === 'ok' ? listed.members[0]?.id : 'none');
    assert.equal((await pod())?.metadata.uid, podUid, 'the running Pod is not replaced');
  });

  it('once the Pod is ready, records etcd’s member ID, the voter role and the running version', async () => {
    const outcome = await reconcileMember(world.ctx, SEED);
    assert.equal(outcome.result, 'done', JSON.stringify(outcome));
    const listed = await world.rawEtcd.listMembers([world.clientURL('demo-0')]);
    assert.equal(listed.kind, 'ok');
    const id = listed.kind === 'ok' ? listed.members[0]?.id : undefined;
    const status = (await world.member('demo-0'))?.status;
    assert.equal(status?.memberID, id);
    assert.equal(status?.isVoter, true);
    assert.equal(status?.role, 'voter');
    assert.equal(status?.version, '3.5.16');
    assert.equal(status?.podUID, (await pod())?.metadata.uid);
    assert.equal((await ready())?.status, 'True');
    assert.equal((await pod())?.metadata.labels?.[ROLE_LABEL], 'voter', 'Pod labelled as etcd counts it');
  });

  it('a steady member is left alone: no write, and etcd is not asked again', async () => {
    const rv = (await world.member('demo-0'))?.metadata.resourceVersion;
    const podRv = (await pod())?.metadata.resourceVersion;
    let asked = 0;
    const counting = {
      ...world.ctx,
      etcd: {
        ...world.ctx.etcd,
        listMembers: async (e: readonly string[]) => (asked++, world.ctx.etcd.listMembers(e)),
        memberStatus: async (e: string) => (asked++, world.ctx.etcd.memberStatus(e)),
      },
    };
    await reconcileMember(counting, SEED);
    assert.equal((await world.member('demo-0'))?.metadata.resourceVersion, rv);
    assert.equal((await pod())?.metadata.resourceVersion, podRv);
    assert.equal(asked, 0);
  });

  it('pausing (spec.dormant) deletes the Pod and keeps the PVC and the member ID', async () => {
    const id = (await world.member('demo-0'))?.status?.memberID;
    const patched = await world.kube.mergePatch(memberRef('demo-0'), { spec: { dormant: true } });
    assert.equal(patched.kind, 'written');
    await reconcileMember(world.ctx, SEED);
    assert.equal(await pod(), undefined, 'Pod deleted');
    assert.ok(await world.kube.find(pvcRef), 'PVC kept');
    const status = (await world.member('demo-0'))?.status;
    assert.equal(status?.memberID, id);
    assert.equal(status?.podUID, undefined);
    assert.equal((await ready())?.reason, 'Paused');
    assert.match((await ready())?.message ?? '', /data kept on data-demo-0/);
  });
});

describe(
  'reconcile-member beside a Pod an earlier member of the same name left',
  { timeout: 180_000 },
  () => {
    // A cluster deleted and made again under its name: until garbage collection removes the old Pods,
    // they run the old cluster's etcd, and the new member's name reaches them.
    let world: ReconcileWorld;
    const ref = { namespace: NS, name: 'again-0' };
    const podRef = { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: 'again-0' };

    before(async () => {
      world = await ReconcileWorld.start('again');
      await world.grow(1);
    });
    after(async () => world?.stop());

    it('does not take that etcd’s member ID as its own, and replaces the Pod', async () => {
      const old = (await world.member('again-0'))!;
      assert.ok(old.metadata.uid);
      // The old member goes; its Pod stays, controlled by no one (what the garbage collector's
      // orphaning leaves), its etcd still answering on the member's name.
      assert.equal(
        (await world.kube.delete(memberRef('again-0'), { propagationPolicy: 'Orphan' })).kind,
        'deleted',
      );
      await waitFor(
        'the Pod orphaned',
        async () => !(await world.kube.find<V1Pod & KubeObject>(podRef))?.metadata.ownerReferences?.length,
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      await world.kube.mergePatch(memberRef('again-0'), { metadata: { finalizers: null } });
      await waitFor('the old member gone', async () => (await world.member('again-0')) === undefined, {
        timeoutMs: 30_000,
        intervalMs: 200,
      });
      const created = await world.kube.create({
        apiVersion: old.apiVersion,
        kind: old.kind,
        metadata: {
          name: 'again-0',
          namespace: NS,
          labels: old.metadata.labels,
          ownerReferences: old.metadata.ownerReferences,
        },
        spec: old.spec,
      });
      assert.equal(created.kind, 'created');
      const listed = await world.rawEtcd.listMembers([world.clientURL('again-0')]);
      assert.equal(listed.kind, 'ok', 'the old etcd still answers');

      await reconcileMember(world.ctx, ref);

      const status = (await world.member('again-0'))?.status;
      assert.equal(status?.memberID, undefined, 'no member ID taken from a Pod that is not this member’s');
      assert.notEqual(status?.hasData, true, 'its volume is not said to hold data');
      const ready = findCondition(status?.conditions, 'Ready');
      assert.equal(ready?.reason, 'PodConflict', JSON.stringify(ready));
      const pod = await world.kube.find<V1Pod & KubeObject>(podRef);
      assert.ok(!pod || pod.metadata.deletionTimestamp, 'the earlier member’s Pod is deleted');
    });
  },
);
