// The tick's loop: one object that throws is logged and counted, and every other object still gets
// its step; the loop stops within its time budget (an injected clock, no wall time).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterHandler } from '../../functions/reconcile-cluster/handler.ts';
import { createHandler as memberHandler } from '../../functions/reconcile-member/index.ts';
import { createHandler as snapshotHandler } from '../../functions/run-snapshot/index.ts';
import type { EventHandler } from '../../shared/events/handler.ts';
import type { TickEvent } from '../../shared/events/types.ts';
import type { ObjectRef } from '../../shared/k8s/objects.ts';
import { resyncEach, resyncSummary } from '../../shared/reconcile/resync-each.ts';
import { settingsFromEnv, type Context } from '../../shared/runtime/context.ts';

process.env.LOG_LEVEL ??= 'silent';

const tick: TickEvent = {
  kind: 'tick',
  id: 't1',
  source: 'test',
  type: 'dev.knative.sources.ping',
  data: {},
};

/** A Kubernetes adapter whose list names three objects and whose read of `broken` throws. */
function fakeContext(kind: string, broken: string, reads: string[]): Context {
  const objects = ['a', 'broken', 'c'].map(name => ({
    apiVersion: 'etcdfn.io/v1alpha1',
    kind,
    metadata: { namespace: 'ns', name: name === 'broken' ? broken : name },
  }));
  const kube = {
    list: async (_apiVersion: string, listed: string) => (listed === kind ? objects : []),
    get: async (ref: ObjectRef) => {
      reads.push(ref.name);
      if (ref.name === broken) throw new Error('boom: the API server answered garbage');
      return { kind: 'not-found' as const };
    },
  };
  return {
    kube: kube as unknown as Context['kube'],
    etcd: {} as Context['etcd'],
    now: () => new Date('2026-01-01T00:00:00Z'),
    settings: settingsFromEnv({}),
  };
}

const cases: { fn: string; kind: string; handler: (ctx: Context) => EventHandler; failsTick: boolean }[] = [
  {
    fn: 'reconcile-cluster',
    kind: 'EtcdCluster',
    handler: ctx => clusterHandler(() => ctx),
    failsTick: false,
  },
  { fn: 'reconcile-member', kind: 'EtcdMember', handler: ctx => memberHandler(() => ctx), failsTick: false },
  {
    fn: 'run-snapshot',
    kind: 'EtcdSnapshotSchedule',
    handler: ctx => snapshotHandler(() => ctx),
    failsTick: true,
  },
];

describe('a resync tick goes on past an object that throws', () => {
  for (const c of cases) {
    it(`${c.fn}: the objects after the broken one are still reconciled`, async () => {
      const reads: string[] = [];
      const ctx = fakeContext(c.kind, 'broken', reads);
      const outcome = await c.handler(ctx)(tick);
      assert.deepEqual(reads, ['a', 'broken', 'c'], 'every object was read, in order');
      const text = JSON.stringify(outcome);
      assert.match(text, /boom: the API server answered garbage/, 'the failure is reported');
      if (c.failsTick) {
        // A schedule must fire: the tick is redelivered, after the others ran.
        assert.equal(outcome.result, 'retry');
      } else {
        assert.equal(outcome.result, 'done');
        assert.match(outcome.result === 'done' ? outcome.summary : '', /resync of 3 .*; 1 failed/);
        const details = (outcome.result === 'done' ? outcome.details : []) as string[];
        assert.equal(details.length, 3);
        assert.match(details[0] ?? '', /^ns\/a: /);
        assert.match(details[2] ?? '', /^ns\/c: /);
      }
    });
  }
});

describe('resyncEach', () => {
  const refs = ['a', 'b', 'c', 'd'].map(name => ({ namespace: 'ns', name }));

  it('counts the failures and reconciles the rest', async () => {
    const seen: string[] = [];
    const result = await resyncEach(
      'Thing',
      refs,
      async ref => {
        seen.push(ref.name);
        if (ref.name === 'b' || ref.name === 'c') throw new Error(`${ref.name} broke`);
        return { result: 'done', summary: 'ok' };
      },
      { now: () => new Date(0) },
    );
    assert.deepEqual(seen, ['a', 'b', 'c', 'd']);
    assert.equal(result.reconciled, 2);
    assert.deepEqual(result.failed, ['Thing ns/b: b broke', 'Thing ns/c: c broke']);
    assert.equal(resyncSummary('thing(s)', 4, result), 'resync of 4 thing(s); 2 failed');
  });

  it('stops once the budget is spent and says how many wait', async () => {
    let clock = 0;
    const seen: string[] = [];
    const result = await resyncEach(
      'Thing',
      refs,
      async ref => {
        seen.push(ref.name);
        clock += 40; // each step takes 40 ms of the injected clock
        return { result: 'retry', reason: 'later' };
      },
      { now: () => new Date(clock), budgetMs: 100 },
    );
    assert.deepEqual(seen, ['a', 'b', 'c']);
    assert.equal(result.skipped, 1);
    assert.equal(result.details[0], 'ns/a: retry: later');
    assert.match(resyncSummary('thing(s)', 4, result), /1 left for the next tick/);
  });

  it('works on `concurrency` objects at once, failures not stopping the others, details and failures in list order', async () => {
    const many = Array.from({ length: 10 }, (_, i) => ({ namespace: 'ns', name: `o${i}` }));
    let inFlight = 0;
    let most = 0;
    const gates: (() => void)[] = [];
    const running = resyncEach(
      'Thing',
      many,
      async ref => {
        inFlight++;
        most = Math.max(most, inFlight);
        // Later objects finish first: each waits for the test to let it go.
        await new Promise<void>(resolve => gates.push(resolve));
        inFlight--;
        if (ref.name === 'o0' || ref.name === 'o4') throw new Error(`${ref.name} broke`);
        return { result: 'done', summary: 'ok' };
      },
      { now: () => new Date(0), concurrency: 3 },
    );
    let settled = false;
    void running.finally(() => (settled = true));
    while (!settled) {
      await new Promise(resolve => setImmediate(resolve));
      gates.pop()?.();
    }
    const result = await running;
    assert.equal(most, 3, 'three at a time, never more');
    assert.equal(result.reconciled, 8);
    assert.deepEqual(result.failed, ['Thing ns/o0: o0 broke', 'Thing ns/o4: o4 broke'], 'o4 ended before o0');
    assert.deepEqual(
      result.details.map(d => d.split(':')[0]),
      many.map(r => (r.name === 'o0' || r.name === 'o4' ? `Thing ns/${r.name}` : `ns/${r.name}`)),
    );
  });
});
