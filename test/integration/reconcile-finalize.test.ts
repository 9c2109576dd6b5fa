// finalize-member step by step (shared/reconcile/finalize.ts), below e2e: the sandbox API server in
// process and a real two-member etcd 3.5 cluster grown by reconcile-cluster. A member that leads is
// deleted: leadership moves off it, it leaves etcd, then its finalizer goes; a 409 on the finalizer
// write stops there and the next invocation finishes without touching etcd again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MEMBER_FINALIZER } from '../../shared/names.ts';
import { finalizeMember } from '../../shared/reconcile/finalize.ts';
import { NS, ReconcileWorld, memberRef } from '../support/reconcile-world.ts';

const VICTIM = { namespace: NS, name: 'demo-1' };

describe('finalize-member against the sandbox API server and real etcd', { timeout: 180_000 }, () => {
  let world: ReconcileWorld;
  let victimId = '';

  before(async () => {
    world = await ReconcileWorld.start('demo');
    await world.grow(2);
    const etcd = await world.etcdMembers('demo-0');
    victimId = etcd.find(m => m.name === 'demo-1')?.id ?? '';
    // The member about to be deleted leads, so finalize-member must hand leadership on first.
    const moved = await world.rawEtcd.moveLeader([world.clientURL('demo-0')], victimId);
    assert.equal(moved.kind, 'ok');
  });
  after(async () => world?.stop());

  const leader = async (via: string) => {
    const status = await world.rawEtcd.memberStatus(world.clientURL(via));
    assert.equal(status.kind, 'ok');
    return status.kind === 'ok' ? status.status.leaderId : undefined;
  };

  it('an EtcdMember not being deleted is left alone', async () => {
    const outcome = await finalizeMember(world.ctx, VICTIM);
    assert.equal(outcome.result, 'done');
    assert.equal((await world.etcdMembers('demo-0')).length, 2);
    assert.equal(await leader('demo-0'), victimId);
  });

  it('deletion waits for the finalizer: the member stays, still in etcd', async () => {
    const deleted = await world.kube.delete(memberRef('demo-1'));
    assert.equal(deleted.kind, 'deleted');
    const victim = await world.member('demo-1');
    assert.ok(victim?.metadata.deletionTimestamp);
    assert.ok(victim.metadata.finalizers?.includes(MEMBER_FINALIZER));
  });

  it('moves leadership off it, removes it from etcd; a 409 on the finalizer write stops there', async () => {
    const { ctx, raced } = world.racingContext('EtcdMember', 'replace');
    const outcome = await finalizeMember(ctx, VICTIM);
    assert.ok(raced(), 'the finalizer write was raced');
    assert.equal(outcome.result, 'retry');
    if (outcome.result === 'retry') assert.equal(outcome.status, 409);
    const etcd = await world.etcdMembers('demo-0');
    assert.deepEqual(
      etcd.map(m => m.name),
      ['demo-0'],
      'removed from etcd',
    );
    assert.equal(await leader('demo-0'), etcd[0]?.id, 'the survivor leads');
    const victim = await world.member('demo-1');
    assert.ok(victim?.metadata.finalizers?.includes(MEMBER_FINALIZER), 'finalizer kept after the 409');
    const reasons = await world.eventReasons('EtcdCluster', 'demo');
    assert.ok(reasons.includes('LeaderMoved'), reasons.join());
    assert.ok(reasons.includes('MemberRemoved'), reasons.join());
  });

  it('the next invocation finds it out of etcd and removes the finalizer: the object goes', async () => {
    const before = (await world.eventReasons('EtcdCluster', 'demo')).length;
    const outcome = await finalizeMember(world.ctx, VICTIM);
    assert.equal(outcome.result, 'done', JSON.stringify(outcome));
    assert.equal(await world.member('demo-1'), undefined);
    assert.equal((await world.etcdMembers('demo-0')).length, 1);
    assert.equal((await world.eventReasons('EtcdCluster', 'demo')).length, before, 'no second removal Event');
  });
});
