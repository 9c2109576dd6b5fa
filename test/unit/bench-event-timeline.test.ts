// The lifecycle benchmark's apply timeline from the functions' own lines (test/bench/event-timeline.ts):
// only handled or sent-back events, only the cluster's, in the order they started, and the time in
// which some function was working (overlapping events counted once).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  busySeconds,
  eventTimeline,
  formatRow,
  ofCluster,
  parseFunctionLine,
  type HandledLine,
} from '../bench/event-timeline.ts';

const T0 = 1_800_000_000_000;

const line = (fields: Record<string, unknown>): string =>
  `reconcile-member ${JSON.stringify({ level: 30, function: 'reconcile-member', msg: 'handled event', ...fields })}`;

describe('bench: event timeline', () => {
  it('reads handled and sent-back lines, with their call times, and nothing else', () => {
    const done = parseFunctionLine(
      line({
        time: T0 + 500,
        ms: 120,
        name: 'demo-1',
        cluster: 'demo',
        step: 'create-pod',
        kubeMs: 40,
        etcdMs: 7,
        slowest: 'kube create Pod 30 ms at +50 ms',
        summary: 'Pod demo-1 created',
      }),
    );
    assert.deepEqual(done, {
      function: 'reconcile-member',
      time: T0 + 500,
      ms: 120,
      name: 'demo-1',
      cluster: 'demo',
      step: 'create-pod',
      kubeMs: 40,
      etcdMs: 7,
      slowest: 'kube create Pod 30 ms at +50 ms',
      outcome: 'Pod demo-1 created',
    });
    const retried = parseFunctionLine(
      line({ msg: 'event to be retried', time: T0, ms: 9, name: 'demo', reason: 'conflict' }),
    );
    assert.equal(retried?.outcome, 'conflict');
    assert.equal(retried?.kubeMs, undefined);
    assert.equal(parseFunctionLine(line({ msg: 'rejected event', time: T0, ms: 1 })), undefined);
    assert.equal(parseFunctionLine(line({ time: 'soon', ms: 1 })), undefined);
    assert.equal(parseFunctionLine('reconcile-member not json at all'), undefined);
    assert.equal(parseFunctionLine(JSON.stringify({ msg: 'handled event', time: T0, ms: 3 }))?.function, '');
  });

  it("keeps the cluster's own events and its members', not another cluster's with a longer name", () => {
    const lines = [
      { name: 'demo', outcome: 'a' },
      { name: 'demo-2', outcome: 'b' },
      { name: 'x', cluster: 'demo', outcome: 'c' },
      { name: 'demox-0', outcome: 'd' },
      { name: 'other', cluster: 'other', outcome: 'e' },
      { outcome: 'tick' },
    ].map(l => ({ function: 'f', time: T0, ms: 1, ...l }));
    assert.deepEqual(
      ofCluster(lines, 'demo').map(l => l.outcome),
      ['a', 'b', 'c'],
    );
  });

  it('orders events by their start within the window and counts overlapping work once', () => {
    const at = (endMs: number, ms: number, outcome: string): HandledLine => ({
      function: 'reconcile-cluster',
      time: T0 + endMs,
      ms,
      name: 'demo',
      outcome,
    });
    const rows = eventTimeline(
      [
        at(1_000, 200, 'third'), // 0.8–1.0 s
        at(300, 300, 'first'), // 0.0–0.3 s
        at(400, 200, 'second'), // 0.2–0.4 s, overlapping the first
        at(100, 300, 'before the window'),
        at(2_600, 100, 'after the window'),
      ],
      T0,
      T0 + 2_000,
    );
    assert.deepEqual(
      rows.map(r => [r.outcome, r.at]),
      [
        ['first', 0],
        ['second', 0.2],
        ['third', 0.8],
      ],
    );
    assert.equal(busySeconds(rows), 0.6);
    assert.equal(busySeconds([]), 0);
    assert.equal(
      formatRow({ ...rows[2], step: 'add-member', kubeMs: 12, etcdMs: 150 }),
      '+0.80 s reconcile-cluster demo [add-member] 200 ms (kube 12 ms, etcd 150 ms): third',
    );
  });
});
