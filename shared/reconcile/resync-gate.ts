// Full resyncs of one process, coalesced: at most one running and one waiting per function. A tick
// is only a hint, yet anyone who can post an event can post a tick, and each one lists and
// reconciles every object of the cluster; without a gate, a flood of forged ticks is a flood of full
// resyncs. A tick that finds one running queues (it will read everything afresh once that ends); a
// tick that finds one running and one queued is answered at once as covered by the queued one, and
// counted (etcdfn_resyncs_total{outcome="coalesced"}). Nothing a genuine tick asks for is lost: the
// queued resync starts after the running one and reads the world as it is then.
import type { HandlerOutcome } from '../events/handler.ts';
import { metrics } from '../runtime/metrics.ts';

export type ResyncGate = (work: () => Promise<HandlerOutcome>) => Promise<HandlerOutcome>;

export function resyncGate(fn: string): ResyncGate {
  let running: Promise<HandlerOutcome> | undefined;
  let queued: Promise<HandlerOutcome> | undefined;
  const start = (work: () => Promise<HandlerOutcome>): Promise<HandlerOutcome> => {
    metrics.resyncs.inc({ function: fn, outcome: 'started' });
    const run: Promise<HandlerOutcome> = work().finally(() => {
      if (running === run) running = undefined;
    });
    running = run;
    return run;
  };
  return work => {
    if (!running) return start(work);
    if (!queued) {
      metrics.resyncs.inc({ function: fn, outcome: 'queued' });
      const after = running.then(
        () => undefined,
        () => undefined,
      );
      const next = after.then(() => {
        queued = undefined;
        return start(work);
      });
      queued = next;
      return next;
    }
    metrics.resyncs.inc({ function: fn, outcome: 'coalesced' });
    return Promise.resolve({
      result: 'done',
      summary: 'a full resync is running and another is queued, which will cover this tick',
    });
  };
}
