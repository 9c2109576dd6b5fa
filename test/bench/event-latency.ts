// Per-event handling latency per function, from the event bridge's own timing of each delivery
// (the HTTP call to the function, from request to answer) during a benchmark. Pure: the bridge's
// delivery records in, one p50 and one p99 row per function out.
import type { DeliveryRecord } from '../../standalone/bridge/delivery.ts';
import type { LifecycleRow } from './lifecycle-rows.ts';

/** A row of the lifecycle section's table. */
export type LatencyRow = LifecycleRow;

/** The q-quantile (0..1) of sorted values, nearest rank. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] ?? NaN;
}

/** One p50 and one p99 row (ms) per function, over every attempt the function answered. */
export function latencyRows(records: readonly DeliveryRecord[]): LatencyRow[] {
  const byFunction = new Map<string, number[]>();
  for (const r of records) {
    if (r.status === undefined) continue; // no answer (aborted, connection error): not a handling time
    const list = byFunction.get(r.subscriber) ?? [];
    list.push(r.durationMs);
    byFunction.set(r.subscriber, list);
  }
  const rows: LatencyRow[] = [];
  for (const [fn, durations] of [...byFunction].sort(([a], [b]) => a.localeCompare(b))) {
    const sorted = [...durations].sort((a, b) => a - b);
    for (const [label, q] of [
      ['p50', 0.5],
      ['p99', 0.99],
    ] as const) {
      const value = quantile(sorted, q);
      rows.push({
        measurement: `per-event handling, ${fn}: ${label}`,
        value,
        unit: 'ms',
        runs: '',
        detail: `${sorted.length} events answered over all rounds (bridge: request → answer); max ${sorted[sorted.length - 1]} ms`,
        samples: [value],
      });
    }
  }
  return rows;
}
