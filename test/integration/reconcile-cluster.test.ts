// reconcile-cluster step by step (shared/reconcile/cluster*.ts), below e2e: the sandbox API server in
// process and real etcd 3.5 processes; each invocation is one step, and each test checks what that
// step left in the API server and in etcd. The Pods are what a kubelet would leave (ReconcileWorld).
// A new 2-member cluster is bootstrapped statically (both initial members claimed and created
// together, started in parallel); scaling it to 3 then goes through the learner path; scale-down
// goes through finalize-member, which takes the removed member out of etcd.
import assert from 'node:assert/strict';
import { networkPolicyName } from '../../shared/names.ts';
import { after, before, describe, it } from 'node:test';
import type { V1PodDisruptionBudget, V1Service } from '@kubernetes/client-node';
import { findCondition } from '../../shared/conditions.ts';
import type { HandlerOutcome } from '../../shared/events/handler.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { MEMBER_FINALIZER } from '../../shared/names.ts';
import { reconcileCluster } from '../../shared/reconcile/cluster.ts';
import { finalizeMember } from '../../shared/reconcile/finalize.ts';
import { NS, ReconcileWorld, clusterRef, type Cluster } from '../support/reconcile-world.ts';
import { waitFor } from '../support/wait.ts';
import type { EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';

const REF = { namespace: NS, name: 'demo' };
const DNS = (member: string, port: number) => `http://${member}.demo.${NS}.svc:${port}`;

describe('reconcile-cluster against the sandbox API server and real etcd', { timeout: 240_000 }, () => {
  let world: ReconcileWorld;
  const step = async (): Promise<HandlerOutcome> => reconcileCluster(world.ctx, REF);
  const progressing = async () => findCondition((await world.cluster()).status?.conditions, 'Progressing');

  before(async () => {
    world = await ReconcileWorld.start('demo');
    await world.createCluster(2);
  });
  after(async () => world?.stop());

  /**
   * A Context that records every EtcdCluster status write of the step, with the EtcdMembers that
   * existed just before it: evidence of what the claim named and that nothing came before it.
   */
  const recording = () => {
    const writes: { status: EtcdClusterStatus; membersBefore: string[] }[] = [];
    const kube = new Proxy(world.kube, {
      get(target, prop, receiver) {
        if (prop !== 'replaceStatus') return Reflect.get(target, prop, receiver) as unknown;
        return async <T extends KubeObject>(object: T) => {
          if (object.kind === 'EtcdCluster') {
            const membersBefore = (await world.members()).map(m => m.metadata.name ?? '');
            writes.push({
              status: structuredClone((object as unknown as Cluster).status ?? {}),
              membersBefore,
            });
          }
          return target.replaceStatus(object);
        };
      },
    });
    return { ctx: { ...world.ctx, kube }, writes };
  };

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

  it('a 409 on the claim write creates nothing: no member, no claim, the ordinal unmoved', async () => {
    const { ctx, raced } = world.racingContext('EtcdCluster');
    const beforeStatus = (await world.cluster()).status;
    const outcome = await reconcileCluster(ctx, REF);
    assert.ok(raced(), 'the status write was raced');
    assert.equal(outcome.result, 'done');
    assert.match(outcome.result === 'done' ? outcome.summary : '', /changed underneath \(conflict\)/);
    assert.deepEqual(await world.members(), [], 'no EtcdMember created');
    const after = (await world.cluster()).status;
    assert.equal(after?.operation, undefined, 'the claim was not written');
    assert.equal(after?.nextMemberOrdinal, beforeStatus?.nextMemberOrdinal);
    assert.equal((await world.cluster()).metadata.labels?.['test.etcdfn.io/raced'], 'yes');
  });

  it('claims both initial members in one status write, then creates them together', async () => {
    const { ctx, writes } = recording();
    const outcome = await reconcileCluster(ctx, REF);
    assert.equal(outcome.result, 'done', JSON.stringify(outcome));
    const claim = writes.find(w => w.status.operation !== undefined);
    assert.ok(claim, 'a claim was written');
    assert.deepEqual(claim.membersBefore, [], 'no member before the claim');
    assert.deepEqual((claim.status.operation as { initialMembers?: string[] }).initialMembers, [
      'demo-0',
      'demo-1',
    ]);
    assert.equal(claim.status.nextMemberOrdinal, 2, 'the ordinal moves by the count');
    assert.equal(writes.filter(w => w.status.operation !== undefined).length, 1, 'one claim write');

    const token = (await world.cluster()).status?.clusterToken;
    const initialCluster = `demo-0=${DNS('demo-0', 2380)},demo-1=${DNS('demo-1', 2380)}`;
    const members = await world.members();
    assert.deepEqual(members.map(m => m.metadata.name).sort(), ['demo-0', 'demo-1']);
    for (const m of members) {
      assert.equal(m.spec.bootstrap, true, `${m.metadata.name} starts a new cluster`);
      assert.equal(m.spec.initialCluster, initialCluster, `${m.metadata.name} knows the whole list`);
      assert.equal(m.spec.clusterToken, token, `${m.metadata.name} has the cluster's token`);
      assert.ok(m.metadata.finalizers?.includes(MEMBER_FINALIZER), 'removal waits for finalize-member');
      assert.equal(m.metadata.ownerReferences?.[0]?.kind, 'EtcdCluster');
    }
    const status = (await world.cluster()).status;
    assert.equal(status?.nextMemberOrdinal, 2);
    assert.equal(status?.operation, undefined, 'the finished operation is cleared');
    assert.deepEqual(await world.eventReasons('EtcdCluster', 'demo'), ['SeedCreated']);
    const events = await world.kube.list<KubeObject & { reason?: string; message?: string }>(
      'v1',
      'Event',
      NS,
    );
    assert.match(
      events.find(e => e.reason === 'SeedCreated')?.message ?? '',
      /initial members demo-0, demo-1 together/,
      'the Event names every member created, not a seed',
    );
  });

  it('waits while an initial member has no ready Pod, and says which one', async () => {
    const before = (await world.cluster()).metadata.resourceVersion;
    await step();
    assert.equal((await progressing())?.reason, 'WaitingForSeed');
    assert.match((await progressing())?.message ?? '', /initial member demo-0\b/);
    assert.notEqual((await world.cluster()).metadata.resourceVersion, before, 'status written');

    await world.readyPod('demo-0');
    await step();
    assert.equal((await progressing())?.reason, 'WaitingForSeed');
    assert.match((await progressing())?.message ?? '', /initial member demo-1\b/);
    assert.equal((await world.members()).length, 2, 'no other member while waiting');
    assert.equal((await world.cluster()).status?.clusterID, undefined, 'not formed yet');
  });

  it('latches the cluster ID etcd reports once both answer, with a ClusterFormed Event', async () => {
    const members = await world.members();
    await world.startEtcd(...members);
    await world.readyPod('demo-1');
    await step();
    const listed = await world.rawEtcd.listMembers([world.clientURL('demo-0')]);
    assert.equal(listed.kind, 'ok');
    if (listed.kind !== 'ok') return;
    assert.equal((await world.cluster()).status?.clusterID, listed.clusterId);
    assert.ok((await world.eventReasons('EtcdCluster', 'demo')).includes('ClusterFormed'));
  });

  it('records every initial member as a voter (etcd says voter)', async () => {
    const voters = async () => {
      const marked: string[] = [];
      for (const m of await world.members())
        if (m.status?.isVoter === true) marked.push(m.metadata.name ?? '');
      return marked.sort();
    };
    for (let i = 0; i < 4 && (await voters()).length < 2; i++) await step();
    const etcd = await world.etcdMembers('demo-1');
    assert.deepEqual(etcd.map(m => [m.name, m.isLearner]).sort(), [
      ['demo-0', false],
      ['demo-1', false],
    ]);
    assert.deepEqual(await voters(), ['demo-0', 'demo-1']);
    for (const name of ['demo-0', 'demo-1'])
      assert.equal((await world.member(name))?.status?.role, 'voter', name);
  });

  it('then reports the 2-member target reached', async () => {
    for (let i = 0; i < 4 && (await progressing())?.reason !== 'Reconciled'; i++) await step();
    assert.equal((await progressing())?.reason, 'Reconciled');
    assert.equal((await world.cluster()).status?.ready, '2/2');
  });

  it('an etcd member no EtcdMember stands for is removed only by the run whose claim wins', async () => {
    // What a run that observed the cluster before another run's add-member claim sees: a learner in
    // etcd and no EtcdMember for it. Removing it unclaimed would take a member being added out of
    // etcd underneath the run adding it (its Pod could then never join).
    await world.slot('demo-9');
    const endpoints = ['demo-0', 'demo-1'].map(n => DNS(n, 2379));
    // etcd refuses a membership change until every voter has been connected for 5 s.
    const added = await waitFor('etcd to take a learner', async () => {
      const result = await world.ctx.etcd.addLearner(endpoints, DNS('demo-9', 2380));
      return result.kind === 'unhealthy-cluster' ? false : result;
    });
    assert.equal(added.kind, 'ok', JSON.stringify(added));
    const { ctx, raced } = world.racingContext('EtcdCluster');
    const outcome = await reconcileCluster(ctx, REF);
    assert.ok(raced(), 'the status write was raced');
    assert.match(outcome.result === 'done' ? outcome.summary : '', /changed underneath \(conflict\)/);
    const kept = await world.etcdMembers('demo-0');
    assert.equal(kept.length, 3, `the run that lost its claim removed nothing: ${JSON.stringify(kept)}`);

    const removed = await step();
    assert.equal(removed.result, 'done', JSON.stringify(removed));
    assert.match(removed.result === 'done' ? removed.summary : '', /no EtcdMember stood for/);
    assert.deepEqual((await world.etcdMembers('demo-0')).map(m => m.name).sort(), ['demo-0', 'demo-1']);
    for (let i = 0; i < 4 && (await progressing())?.reason !== 'Reconciled'; i++) await step();
    assert.equal((await progressing())?.reason, 'Reconciled');
  });

  it('scale-up 2 -> 3: a 409 on the claim write stops the step: no member, no etcd change, no claim', async () => {
    const patched = await world.kube.mergePatch(clusterRef('demo'), { spec: { replicas: 3 } });
    assert.equal(patched.kind, 'written');
    await step(); // adopts the new target
    assert.equal((await world.cluster()).status?.observed?.replicas, 3);
    assert.equal(await world.member('demo-2'), undefined, 'adopting the target creates nothing');
    const { ctx, raced } = world.racingContext('EtcdCluster');
    const beforeStatus = (await world.cluster()).status;
    const outcome = await reconcileCluster(ctx, REF);
    assert.ok(raced(), 'the status write was raced');
    assert.equal(outcome.result, 'done');
    assert.match(outcome.result === 'done' ? outcome.summary : '', /changed underneath \(conflict\)/);
    assert.equal(await world.member('demo-2'), undefined, 'no EtcdMember created');
    assert.equal((await world.etcdMembers('demo-0')).length, 2, 'etcd membership unchanged');
    const after = (await world.cluster()).status;
    assert.equal(after?.operation, undefined, 'the claim was not written');
    assert.equal(after?.nextMemberOrdinal, beforeStatus?.nextMemberOrdinal);
  });

  it('adds demo-2 to etcd as a learner, wires its --initial-cluster and clears the claim', async () => {
    const outcome = await step();
    assert.equal(outcome.result, 'done', JSON.stringify(outcome));
    const joining = await world.member('demo-2');
    assert.ok(joining, 'demo-2 created');
    assert.equal(joining.spec.bootstrap, false);
    assert.deepEqual(
      joining.spec.initialCluster.split(',').sort(),
      ['demo-0', 'demo-1', 'demo-2'].map(n => `${n}=${DNS(n, 2380)}`),
    );
    const etcd = await world.etcdMembers('demo-0');
    assert.equal(etcd.length, 3);
    const learner = etcd.find(m => m.peerURLs.includes(DNS('demo-2', 2380)));
    assert.equal(learner?.isLearner, true, 'added as a learner, not a voter');
    const status = (await world.cluster()).status;
    assert.equal(status?.operation, undefined);
    assert.equal(status?.nextMemberOrdinal, 3);
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
    assert.ok(!(await world.eventReasons('EtcdCluster', 'demo')).includes('MemberPromoted'));

    await world.startEtcd((await world.member('demo-2'))!);
    await world.readyPod('demo-2');
    const promoted = await step();
    assert.equal(promoted.result, 'done', JSON.stringify(promoted));
    const etcd = await world.etcdMembers('demo-0');
    assert.deepEqual(etcd.map(m => [m.name, m.isLearner]).sort(), [
      ['demo-0', false],
      ['demo-1', false],
      ['demo-2', false],
    ]);
    assert.equal((await world.member('demo-2'))?.status?.isVoter, true);
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
    assert.equal(status?.ready, '3/3');
    assert.equal(status?.phase, 'Running');
    const rv = (await world.cluster()).metadata.resourceVersion;
    await step();
    assert.equal((await world.cluster()).metadata.resourceVersion, rv, 'a reached target writes nothing');
  });

  it('scale-down: moves leadership off the newest member, then deletes its EtcdMember', async () => {
    const patched = await world.kube.mergePatch(clusterRef('demo'), { spec: { replicas: 2 } });
    assert.equal(patched.kind, 'written');
    await step(); // adopts the new target
    assert.equal((await world.cluster()).status?.observed?.replicas, 2);
    // Hand leadership to demo-2 so the step must move it back before deleting demo-2.
    const ids = await world.etcdMembers('demo-0');
    const demo2 = ids.find(m => m.name === 'demo-2')!;
    const moved = await world.ctx.etcd.moveLeader([DNS('demo-0', 2379), DNS('demo-2', 2379)], demo2.id);
    assert.equal(moved.kind, 'ok');
    await step();
    const status = await world.ctx.etcd.memberStatus(DNS('demo-0', 2379));
    assert.equal(status.kind, 'ok');
    if (status.kind === 'ok')
      assert.notEqual(status.status.leaderId, demo2.id, 'leadership moved off demo-2');
    assert.equal((await world.member('demo-2'))?.metadata.deletionTimestamp, undefined, 'not yet deleted');
    await step();
    const victim = await world.member('demo-2');
    assert.ok(victim?.metadata.deletionTimestamp, 'demo-2 is being deleted');
    assert.equal((await world.etcdMembers('demo-0')).length, 3, 'etcd removal is finalize-member’s');
    assert.ok((await world.eventReasons('EtcdCluster', 'demo')).includes('ScalingDown'));
    await step();
    assert.equal((await progressing())?.reason, 'ScalingDown', 'waits while a member is leaving');
  });

  it('finalize-member removes the member from etcd, then its finalizer', async () => {
    const outcome = await finalizeMember(world.ctx, { namespace: NS, name: 'demo-2' });
    assert.equal(outcome.result, 'done', JSON.stringify(outcome));
    assert.deepEqual((await world.etcdMembers('demo-0')).map(m => m.name).sort(), ['demo-0', 'demo-1']);
    assert.equal(await world.member('demo-2'), undefined, 'finalizer removed, object gone');
    await world.etcdProcess('demo-2')?.stop({ force: true });
    for (let i = 0; i < 3 && (await progressing())?.reason !== 'Reconciled'; i++) await step();
    const status = (await world.cluster()).status;
    assert.equal(status?.ready, '2/2');
    assert.equal((await progressing())?.reason, 'Reconciled');
  });
});
