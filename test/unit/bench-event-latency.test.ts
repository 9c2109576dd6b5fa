// test/bench/event-latency.ts: per-function p50/p99 of the bridge's delivery times.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DeliveryRecord } from '../../standalone/bridge/delivery.ts';
import { latencyRows, quantile } from '../bench/event-latency.ts';

const record = (subscriber: string, durationMs: number, status?: number): DeliveryRecord => ({
  subscriber,
  trigger: 't',
  url: 'http://127.0.0.1:1',
  eventId: 'e',
  type: 'dev.knative.apiserver.ref.update',
  attempt: 1,
  outcome: 'delivered',
  durationMs,
  at: new Date(0),
  ...(status === undefined ? {} : { status }),
});

describe('quantile (nearest rank)', () => {
  const cases: [number[], number, number][] = [
    [[5], 0.5, 5],
    [[1, 2, 3, 4], 0.5, 2],
    [[1, 2, 3, 4, 5], 0.5, 3],
    [Array.from({ length: 100 }, (_, i) => i + 1), 0.99, 99],
    [Array.from({ length: 10 }, (_, i) => i + 1), 0.99, 10],
  ];
  for (const [sorted, q, want] of cases)
    it(`q=${q} of ${sorted.length} values is ${want}`, () => assert.equal(quantile(sorted, q), want));
  it('of nothing is NaN', () => assert.ok(Number.isNaN(quantile([], 0.5))));
});

describe('latencyRows', () => {
  it('gives p50 and p99 per function, sorted by name, over answered attempts only', () => {
    const rows = latencyRows([
      record('reconcile-member', 40, 200),
      record('reconcile-cluster', 10, 200),
      record('reconcile-cluster', 30, 503),
      record('reconcile-cluster', 20, 200),
      record('reconcile-cluster', 9_999), // no answer: left out
    ]);
    assert.deepEqual(
      rows.map(r => [r.measurement, r.value, r.samples]),
      [
        ['per-event handling, reconcile-cluster: p50', 20, [20]],
        ['per-event handling, reconcile-cluster: p99', 30, [30]],
        ['per-event handling, reconcile-member: p50', 40, [40]],
        ['per-event handling, reconcile-member: p99', 40, [40]],
      ],
    );
    assert.match(rows[0]?.detail ?? '', /^3 events answered/);
  });
});
