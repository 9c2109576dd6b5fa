// reconcile-cluster takes its steps in a row (settings.chainSteps): after a step that changed
// something, the cluster is observed afresh and the next step taken in the same invocation, so a
// new cluster does not wait on the events its own writes cause. Sandbox API server in process and
// real etcd 3.5 processes, as in reconcile-cluster.test.ts (which takes one step per call).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findCondition } from '../../shared/conditions.ts';
import { reconcileCluster } from '../../shared/reconcile/cluster.ts';
import type { Context } from '../../shared/runtime/context.ts';
import { NS, ReconcileWorld } from '../support/reconcile-world.ts';

const REF = { namespace: NS, name: 'chain' };

describe('reconcile-cluster chains its steps', { timeout: 120_000 }, () => {
  let world: ReconcileWorld;
  const chained = (steps: number): Context => ({
    ...world.ctx,
    settings: { ...world.ctx.settings, chainSteps: steps },
  });
  const progressing = async () => findCondition((await world.cluster()).status?.conditions, 'Progressing');

  before(async () => {
    world = await ReconcileWorld.start('chain');
    await world.createCluster(3);
  });
  after(async () => world?.stop());

  it('stops at chainSteps: two steps lock the target and create the Services, nothing more', async () => {
    const outcome = await reconcileCluster(chained(2), REF);
    assert.equal(outcome.result, 'done');
    assert.deepEqual(outcome.result === 'done' && outcome.details, { action: ['none', 'ensure-services'] });
    const status = (await world.cluster()).status;
    assert.equal(status?.observed?.replicas, 3, 'the target is locked');
    assert.ok(await world.kube.find({ apiVersion: 'v1', kind: 'Service', namespace: NS, name: 'chain' }));
    assert.deepEqual(await world.members(), [], 'no member yet');
  });

  it('one invocation goes on until it must wait: policy, then all three initial members', async () => {
    const outcome = await reconcileCluster(chained(6), REF);
    assert.equal(outcome.result, 'done');
    const members = await world.members();
    assert.deepEqual(members.map(m => m.metadata.name).sort(), ['chain-0', 'chain-1', 'chain-2']);
    const status = (await world.cluster()).status;
    assert.equal(status?.operation, undefined, 'the claim was carried out and cleared');
    assert.equal(status?.nextMemberOrdinal, 3);
    assert.equal((await progressing())?.reason, 'WaitingForSeed', 'it ends on the wait for the Pods');
    const details = outcome.result === 'done' ? (outcome.details as { action: string[] }).action : [];
    assert.equal(details.at(-1), 'wait', `steps: ${details.join(', ')}`);
  });

  it('a step that must wait ends the invocation after one step', async () => {
    const before = (await world.cluster()).metadata.resourceVersion;
    const outcome = await reconcileCluster(chained(6), REF);
    assert.equal(outcome.result, 'done');
    assert.deepEqual(outcome.result === 'done' && outcome.details, { action: 'wait' });
    assert.equal((await world.cluster()).metadata.resourceVersion, before, 'nothing written');
  });
});
