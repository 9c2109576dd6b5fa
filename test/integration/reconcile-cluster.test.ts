// reconcile-cluster step by step (shared/reconcile/cluster*.ts), below e2e: the sandbox API server in
// process and real etcd 3.5 processes; each invocation is one step, and each test checks what that
// step left in the API server and in etcd. The Pods are what a kubelet would leave (ReconcileWorld).
// Then scale-down through finalize-member, which takes the removed member out of etcd.
import assert from 'node:assert/strict';
import { networkPolicyName } from '../../shared/names.ts';
import { after, before, describe, it } from 'node:test';
import type { V1PodDisruptionBudget, V1Service } from '@kubernetes/client-node';
import { API_VERSION } from '../../shared/api/group.ts';
import { findCondition } from '../../shared/conditions.ts';
import type { HandlerOutcome } from '../../shared/events/handler.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { MEMBER_FINALIZER } from '../../shared/names.ts';
import { reconcileCluster } from '../../shared/reconcile/cluster.ts';
import { finalizeMember } from '../../shared/reconcile/finalize.ts';
import { NS, ReconcileWorld, clusterRef } from '../support/reconcile-world.ts';

const REF = { namespace: NS, name: 'demo' };
const DNS = (member: string, port: number) => `http://${member}.demo.${NS}.svc:${port}`;

describe('reconcile-cluster against the sandbox API server and real etcd', { timeout: 240_000 }, () => {
  let world: ReconcileWorld;
  const step = async (): Promise<HandlerOutcome> => reconcileCluster(world.ctx, REF);
  const progressing = async () => findCondition((await world.cluster()).status?.conditions, 'Progressing');

  before(async () => {
    world = await ReconcileWorld.start('demo');
    const created = await world.kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: 'demo', namespace: NS },
      spec: { replicas: 2, version: '3.5.16', storage: { size: '1Gi' } },
    });
    assert.equal(created.kind, 'created');
  });
  after(async () => world?.stop());

  it('first locks the target: token, observed spec and deadline in status, nothing else', async () => {
    const outcome = await step();
    assert.equal(outcome.result, 'done');
    const status = (await world.cluster()).status;
    assert.match(status?.clusterToken ?? '', /^prod-demo-/);
    assert.equal(status?.observed?.replicas, 2);
    assert.equal(status?.observed?.version, '3.5.16');
    assert.ok(status?.progressDeadline, 'a deadline is set');
    assert.equal((await progressing())?.reason, 'NewTarget');
    assert.deepEqual(await world.members(), []);
  });

  it('creates the headless and client Services', async () => {
    await step();
    const find = (name: string) =>
      world.kube.find<V1Service & KubeObject>({ apiVersion: 'v1', kind: 'Service', namespace: NS, name });
    const headless = await find('demo');
    const client = await find('demo-client');
    assert.equal(headless?.spec?.clusterIP, 'None');
    assert.ok(client, 'client Service created');
    assert.deepEqual(await world.members(), []);
  });

  it('creates the NetworkPolicy before any member: peers only from members, clients only if labelled', async () => {
    await step();
    const policy = await world.kube.find<KubeObject & { spec?: { ingress?: unknown[] } }>({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      namespace: NS,
      name: networkPolicyName('demo'),
    });
    assert.ok(policy, 'NetworkPolicy created');
    assert.ok((policy.spec?.ingress?.length ?? 0) >= 2, 'client and peer rules');
    assert.deepEqual(await world.members(), []);
  });

  it('claims the seed in status, creates EtcdMember demo-0 and clears the claim', async () => {
    const outcome = await step();
    assert.equal(outcome.result, 'done');
    const seed = await world.member('demo-0');
    assert.ok(seed, 'demo-0 created');
    assert.equal(seed.spec.bootstrap, true);
    assert.equal(seed.spec.initialCluster, `demo-0=${DNS('demo-0', 2380)}`);
    assert.ok(seed.metadata.finalizers?.includes(MEMBER_FINALIZER), 'removal waits for finalize-member');
    assert.equal(seed.metadata.ownerReferences?.[0]?.kind, 'EtcdCluster');
    const status = (await world.cluster()).status;
    assert.equal(status?.nextMemberOrdinal, 1);
    assert.equal(status?.operation, undefined, 'the finished operation is cleared');
    assert.deepEqual(await world.eventReasons('EtcdCluster', 'demo'), ['SeedCreated']);
  });

  it('waits for the seed while it has no ready Pod, and says so', async () => {
    const before = (await world.cluster()).metadata.resourceVersion;
    await step();
    assert.equal((await progressing())?.reason, 'WaitingForSeed');
    assert.notEqual((await world.cluster()).metadata.resourceVersion, before, 'status written');
    assert.equal((await world.members()).length, 1, 'no second member while waiting');
  });

  it('latches the cluster ID etcd reports once the seed answers, with a ClusterFormed Event', async () => {
    const seed = await world.member('demo-0');
    await world.startEtcd(seed!);
    await world.readyPod('demo-0');
    await step();
    const listed = await world.rawEtcd.listMembers([world.clientURL('demo-0')]);
    assert.equal(listed.kind, 'ok');
    if (listed.kind !== 'ok') return;
    assert.equal((await world.cluster()).status?.clusterID, listed.clusterId);
    assert.ok((await world.eventReasons('EtcdCluster', 'demo')).includes('ClusterFormed'));
  });

  it('records the seed as a voter on its EtcdMember (etcd says voter)', async () => {
    await step();
    const seed = await world.member('demo-0');
    assert.equal(seed?.status?.isVoter, true);
    assert.equal(seed?.status?.role, 'voter');
  });

  it('a 409 on the claim write stops the step: no member, no etcd change, no claim', async () => {
    const { ctx, raced } = world.racingContext('EtcdCluster');
    const beforeStatus = (await world.cluster()).status;
    const outcome = await reconcileCluster(ctx, REF);
    assert.ok(raced(), 'the status write was raced');
    assert.equal(outcome.result, 'done');
    assert.match(outcome.result === 'done' ? outcome.summary : '', /changed underneath \(conflict\)/);
    assert.equal(await world.member('demo-1'), undefined, 'no EtcdMember created');
    assert.equal((await world.etcdMembers('demo-0')).length, 1, 'etcd membership unchanged');
    const after = (await world.cluster()).status;
    assert.equal(after?.operation, undefined, 'the claim was not written');
    assert.equal(after?.nextMemberOrdinal, beforeStatus?.nextMemberOrdinal);
    assert.equal((await world.cluster()).metadata.labels?.['test.etcdfn.io/raced'], 'yes');
  });

  it('adds demo-1 to etcd as a learner, wires its --initial-cluster and clears the claim', async () => {
    const outcome = await step();
    assert.equal(outcome.result, 'done', JSON.stringify(outcome));
    const joining = await world.member('demo-1');
    assert.ok(joining, 'demo-1 created');
    assert.equal(joining.spec.bootstrap, false);
    assert.equal(joining.spec.initialCluster, `demo-0=${DNS('demo-0', 2380)},demo-1=${DNS('demo-1', 2380)}`);
    const etcd = await world.etcdMembers('demo-0');
    assert.equal(etcd.length, 2);
    const learner = etcd.find(m => m.peerURLs.includes(DNS('demo-1', 2380)));
    assert.equal(learner?.isLearner, true, 'added as a learner, not a voter');
    const status = (await world.cluster()).status;
    assert.equal(status?.operation, undefined);
    assert.equal(status?.nextMemberOrdinal, 2);
    assert.ok((await world.eventReasons('EtcdCluster', 'demo')).includes('MemberAdded'));
  });

  it('waits while the learner has not started, then promotes it once its Pod is ready', async () => {
    const waiting = await step();
    assert.equal(waiting.result, 'done');
    assert.equal((await progressing())?.reason, 'ScalingUp');
    assert.ok(
      (await world.etcdMembers('demo-0')).some(m => m.isLearner),
      'still a learner',
    );

    await world.startEtcd((await world.member('demo-1'))!);
    await world.readyPod('demo-1');
    const promoted = await step();
    assert.equal(promoted.result, 'done', JSON.stringify(promoted));
    const etcd = await world.etcdMembers('demo-0');
    assert.deepEqual(etcd.map(m => [m.name, m.isLearner]).sort(), [
      ['demo-0', false],
      ['demo-1', false],
    ]);
    assert.equal((await world.member('demo-1'))?.status?.isVoter, true);
    assert.ok((await world.eventReasons('EtcdCluster', 'demo')).includes('MemberPromoted'));
  });

  it('then keeps a PodDisruptionBudget for the voters and reports the target reached', async () => {
    for (let i = 0; i < 4 && (await progressing())?.reason !== 'Reconciled'; i++) await step();
    const pdb = await world.kube.find<V1PodDisruptionBudget & KubeObject>({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      namespace: NS,
      name: 'demo',
    });
    assert.ok(pdb, 'PDB created');
    const status = (await world.cluster()).status;
    assert.equal((await progressing())?.reason, 'Reconciled');
    assert.equal(status?.ready, '2/2');
    assert.equal(status?.phase, 'Running');
    const rv = (await world.cluster()).metadata.resourceVersion;
    await step();
    assert.equal((await world.cluster()).metadata.resourceVersion, rv, 'a reached target writes nothing');
  });

  it('scale-down: moves leadership off the newest member, then deletes its EtcdMember', async () => {
    const patched = await world.kube.mergePatch(clusterRef('demo'), { spec: { replicas: 1 } });
    assert.equal(patched.kind, 'written');
    await step(); // adopts the new target
    assert.equal((await world.cluster()).status?.observed?.replicas, 1);
    // Hand leadership to demo-1 so the step must move it back before deleting demo-1.
    const ids = await world.etcdMembers('demo-0');
    const demo1 = ids.find(m => m.name === 'demo-1')!;
    const moved = await world.ctx.etcd.moveLeader([DNS('demo-0', 2379), DNS('demo-1', 2379)], demo1.id);
    assert.equal(moved.kind, 'ok');
    await step();
    const status = await world.ctx.etcd.memberStatus(DNS('demo-0', 2379));
    assert.equal(status.kind, 'ok');
    if (status.kind === 'ok')
      assert.notEqual(status.status.leaderId, demo1.id, 'leadership moved off demo-1');
    assert.equal((await world.member('demo-1'))?.metadata.deletionTimestamp, undefined, 'not yet deleted');
    await step();
    const victim = await world.member('demo-1');
    assert.ok(victim?.metadata.deletionTimestamp, 'demo-1 is being deleted');
    assert.equal((await world.etcdMembers('demo-0')).length, 2, 'etcd removal is finalize-member’s');
    assert.ok((await world.eventReasons('EtcdCluster', 'demo')).includes('ScalingDown'));
    await step();
    assert.equal((await progressing())?.reason, 'ScalingDown', 'waits while a member is leaving');
  });

  it('finalize-member removes the member from etcd, then its finalizer', async () => {
    const outcome = await finalizeMember(world.ctx, { namespace: NS, name: 'demo-1' });
    assert.equal(outcome.result, 'done', JSON.stringify(outcome));
    assert.deepEqual(
      (await world.etcdMembers('demo-0')).map(m => m.name),
      ['demo-0'],
    );
    assert.equal(await world.member('demo-1'), undefined, 'finalizer removed, object gone');
    await world.etcdProcess('demo-1')?.stop({ force: true });
    for (let i = 0; i < 3 && (await progressing())?.reason !== 'Reconciled'; i++) await step();
    const status = (await world.cluster()).status;
    assert.equal(status?.ready, '1/1');
    assert.equal((await progressing())?.reason, 'Reconciled');
  });
});
