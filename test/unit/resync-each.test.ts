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
import {
  RESYNC_OBJECT_RETRIES,
  resyncEach,
  resyncRetryDelayMs,
  resyncSummary,
} from '../../shared/reconcile/resync-each.ts';
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

const cases: { fn: string; kind: string; handler: (ctx: Context) => EventHandler; retries: number }[] = [
  {
    fn: 'reconcile-cluster',
    kind: 'EtcdCluster',
    handler: ctx => clusterHandler(() => ctx),
    retries: 0,
  },
  { fn: 'reconcile-member', kind: 'EtcdMember', handler: ctx => memberHandler(() => ctx), retries: 0 },
  {
    fn: 'run-snapshot',
    kind: 'EtcdSnapshotSchedule',
    handler: ctx => snapshotHandler(() => ctx),
    retries: RESYNC_OBJECT_RETRIES,
  },
];

describe('a resync tick goes on past an object that throws', () => {
  for (const c of cases) {
    it(`${c.fn}: the objects after the broken one are still reconciled${c.retries ? ', the broken one tried again alone, and the tick is done' : ''}`, async () => {
      const reads: string[] = [];
      const ctx = fakeContext(c.kind, 'broken', reads);
      const outcome = await c.handler(ctx)(tick);
      assert.deepEqual(
        reads,
        ['a', ...Array<string>(c.retries + 1).fill('broken'), 'c'],
        'every object was read, in order; only the broken one again',
      );
      assert.match(
        JSON.stringify(outcome),
        /boom: the API server answered garbage/,
        'the failure is reported',
      );
      // One object failing does not send the whole tick back to the event system (a run-snapshot
      // tick used to be redelivered up to 6 times for one bad schedule, every schedule run again).
      assert.equal(outcome.result, 'done');
      assert.match(outcome.result === 'done' ? outcome.summary : '', /resync of 3 .*; 1 failed/);
      const details = (outcome.result === 'done' ? outcome.details : []) as string[];
      assert.equal(details.length, 3);
      assert.match(details[0] ?? '', /^ns\/a: /);
      assert.match(details[2] ?? '', /^ns\/c: /);
    });
  }
});

describe('resyncEach: retries of one object', () => {
  const refs = ['a', 'b', 'c'].map(name => ({ namespace: 'ns', name }));
  const now = () => new Date('2026-01-01T00:00:00Z');

  it('an object that fails once and then works is reconciled, with the back-off it was given', async () => {
    const calls: string[] = [];
    const waits: number[] = [];
    const result = await resyncEach(
      'EtcdSnapshotSchedule',
      refs,
      async ref => {
        calls.push(ref.name);
        if (ref.name === 'b' && calls.filter(n => n === 'b').length === 1) throw new Error('transient');
        return { result: 'done', summary: 'ok' };
      },
      { now, retries: 2, sleep: async ms => void waits.push(ms) },
    );
    assert.deepEqual(calls, ['a', 'b', 'b', 'c']);
    assert.deepEqual(result.failed, []);
    assert.equal(result.reconciled, 3);
    assert.deepEqual(waits, [resyncRetryDelayMs(0)]);
  });

  it('gives up after `retries` more tries, backing off 100 ms then 200 ms', async () => {
    const waits: number[] = [];
    const result = await resyncEach(
      'EtcdSnapshotSchedule',
      refs,
      async ref => {
        if (ref.name === 'b') throw new Error('still broken');
        return { result: 'done', summary: 'ok' };
      },
      { now, retries: 2, sleep: async ms => void waits.push(ms) },
    );
    assert.deepEqual(result.failed, ['EtcdSnapshotSchedule ns/b: still broken']);
    assert.deepEqual(waits, [100, 200]);
  });
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
