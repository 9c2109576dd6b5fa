// The resync gate (shared/reconcile/resync-gate.ts) on its own: what etcdfn_resyncs_total says for
// each outcome, and that a finished resync frees the gate at once (the next tick starts, it is not
// queued behind a resync that is over). resync-gate.test.ts drives the gate through the functions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HandlerOutcome } from '../../shared/events/handler.ts';
import { resyncGate } from '../../shared/reconcile/resync-gate.ts';
import { metrics } from '../../shared/runtime/metrics.ts';

const count = async (fn: string, outcome: string) =>
  (await metrics.resyncs.get()).values.find(v => v.labels.function === fn && v.labels.outcome === outcome)
    ?.value ?? 0;
const done: HandlerOutcome = { result: 'done', summary: 'resynced' };

describe('resync gate: counts and release', () => {
  it('one running, one queued, one coalesced: each counted under its outcome', async () => {
    const gate = resyncGate('gate-counts');
    let finish: () => void = () => {};
    const held = () => new Promise<HandlerOutcome>(resolve => (finish = () => resolve(done)));
    const first = gate(held);
    const second = gate(() => Promise.resolve(done));
    const third = await gate(() => Promise.resolve(done));
    assert.equal(third.result, 'done');
    assert.deepEqual(
      [
        await count('gate-counts', 'started'),
        await count('gate-counts', 'queued'),
        await count('gate-counts', 'coalesced'),
      ],
      [1, 1, 1],
    );
    finish();
    await first;
    await second;
    assert.equal(await count('gate-counts', 'started'), 2);
  });

  it('a resync that is over frees the gate: the next tick starts at once, not queued', async () => {
    const gate = resyncGate('gate-free');
    await gate(() => Promise.resolve(done));
    let ran = false;
    const next = gate(() => ((ran = true), Promise.resolve(done)));
    assert.equal(ran, true, 'started in the same turn');
    await next;
    assert.equal(await count('gate-free', 'queued'), 0);
  });
});
