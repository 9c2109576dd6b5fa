// Issue 29, security 4: anyone who can post an event can post a resync tick, and each tick lists and
// reconciles every object. Full resyncs are coalesced per function and process: at most one running
// and one queued; a tick that finds both is answered at once (covered by the queued one) and counted
// in etcdfn_resyncs_total{outcome="coalesced"}. Each function's handler, with ticks posted while a
// resync is held in the middle of its list.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterHandler } from '../../functions/reconcile-cluster/handler.ts';
import { createHandler as memberHandler } from '../../functions/reconcile-member/index.ts';
import { createHandler as snapshotHandler } from '../../functions/run-snapshot/index.ts';
import type { EventHandler, HandlerOutcome } from '../../shared/events/handler.ts';
import type { TickEvent } from '../../shared/events/types.ts';
import { resyncGate } from '../../shared/reconcile/resync-gate.ts';
import { settingsFromEnv, type Context } from '../../shared/runtime/context.ts';
import { metrics } from '../../shared/runtime/metrics.ts';

process.env.LOG_LEVEL ??= 'silent';

const tick: TickEvent = {
  kind: 'tick',
  id: 't',
  source: 'forged',
  type: 'dev.knative.sources.ping',
  data: {},
};

/** A context whose list of `kind` waits until released; counts the lists (one per full resync). */
function heldContext(kind: string) {
  let lists = 0;
  const waiting: (() => void)[] = [];
  const kube = {
    list: async (_apiVersion: string, listed: string) => {
      if (listed !== kind) return [];
      lists++;
      await new Promise<void>(resolve => waiting.push(resolve));
      return [];
    },
    get: async () => ({ kind: 'not-found' as const }),
  };
  const ctx: Context = {
    kube: kube as unknown as Context['kube'],
    etcd: {} as Context['etcd'],
    now: () => new Date('2026-01-01T00:00:00Z'),
    settings: settingsFromEnv({}),
  };
  return {
    ctx,
    lists: () => lists,
    /** Lets every list that is waiting go on. */
    release: () => waiting.splice(0).forEach(go => go()),
  };
}

const settle = () => new Promise(resolve => setImmediate(resolve));
const coalesced = async (fn: string) =>
  (await metrics.resyncs.get()).values.find(v => v.labels.function === fn && v.labels.outcome === 'coalesced')
    ?.value ?? 0;

const cases: { fn: string; kind: string; handler: (ctx: Context) => EventHandler }[] = [
  { fn: 'reconcile-cluster', kind: 'EtcdCluster', handler: ctx => clusterHandler(() => ctx) },
  { fn: 'reconcile-member', kind: 'EtcdMember', handler: ctx => memberHandler(() => ctx) },
  { fn: 'run-snapshot', kind: 'EtcdSnapshotSchedule', handler: ctx => snapshotHandler(() => ctx) },
];

describe('forged resync ticks are coalesced: one running, one queued, the rest answered at once', () => {
  for (const c of cases) {
    it(`${c.fn}: 10 ticks during one resync make 2 full resyncs; 8 are answered at once and counted`, async () => {
      const world = heldContext(c.kind);
      const handler = c.handler(world.ctx);
      const before = await coalesced(c.fn);
      const outcomes: Promise<HandlerOutcome>[] = [];
      for (let i = 0; i < 10; i++) outcomes.push(handler({ ...tick, id: `t${i}` }));
      await settle();
      assert.equal(world.lists(), 1, 'one resync runs');
      const early = await Promise.race([
        Promise.all(outcomes.slice(2)),
        new Promise(resolve => setTimeout(resolve, 200, 'still waiting')),
      ]);
      assert.notEqual(early, 'still waiting', 'the 8 coalesced ticks are answered without waiting');
      for (const o of early as HandlerOutcome[]) {
        assert.equal(o.result, 'done');
        assert.match(o.result === 'done' ? o.summary : '', /another is queued/);
      }
      assert.equal((await coalesced(c.fn)) - before, 8);
      world.release();
      await settle();
      assert.equal(world.lists(), 2, 'the queued resync starts once the first ends');
      world.release();
      await Promise.all(outcomes.slice(0, 2));
      assert.equal(world.lists(), 2, 'no more than two full resyncs for ten ticks');
      // Afterwards a tick starts a resync of its own again.
      const later = handler({ ...tick, id: 'later' });
      await settle();
      assert.equal(world.lists(), 3);
      world.release();
      await later;
    });
  }
});

describe('resyncGate', () => {
  it('a resync that throws frees the gate for the queued one and the next', async () => {
    const gate = resyncGate('test');
    let calls = 0;
    const failing = gate(async () => {
      calls++;
      throw new Error('boom');
    });
    const queued = gate(async () => {
      calls++;
      return { result: 'done', summary: 'second' };
    });
    await assert.rejects(failing, /boom/);
    assert.deepEqual(await queued, { result: 'done', summary: 'second' });
    const third = await gate(async () => {
      calls++;
      return { result: 'done', summary: 'third' };
    });
    assert.deepEqual(third, { result: 'done', summary: 'third' });
    assert.equal(calls, 3, 'each of the three ran its own work');
  });
});
