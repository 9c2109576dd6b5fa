// "Nothing happened" in e2e tests, shown across a window bounded by the events that would have
// caused a write: the resync ticks. A window closes once every named function has answered (2xx)
// `count` more ticks than when it opened; whatever a tick writes is written before its answer.
import type { FullSandbox } from './sandbox.ts';
import { waitFor } from './wait.ts';

export const TICK_TYPE = 'dev.knative.sources.ping';

export interface TickWindow {
  /** Waits until each function has answered `count` ticks since the window opened. */
  close(count?: number): Promise<void>;
}

export function openTickWindow(sandbox: FullSandbox, functions: string[]): TickWindow {
  const start = new Map(functions.map(fn => [fn, sandbox.delivered(fn, TICK_TYPE)]));
  return {
    close: async (count = 2) => {
      await waitFor(
        `${count} ticks answered by ${functions.join(', ')}`,
        async () => functions.every(fn => sandbox.delivered(fn, TICK_TYPE) >= (start.get(fn) ?? 0) + count),
        { timeoutMs: 180_000, intervalMs: 250 },
        () =>
          functions
            .map(fn => `${fn}: ${sandbox.delivered(fn, TICK_TYPE) - (start.get(fn) ?? 0)} tick(s) answered`)
            .join(', '),
      );
    },
  };
}
