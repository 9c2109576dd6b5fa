// The tick's loop over many objects: each object on its own, so that one that throws (an API error,
// a bug its data triggers) is logged and counted and the rest still get their step; and within a
// time budget, so that a tick ends before the event system's request timeout and the objects not
// reached wait for the next tick (or their own events).
import { log } from '../log.ts';
import type { HandlerOutcome } from '../events/handler.ts';

export interface ObjectRef {
  namespace: string;
  name: string;
}

export interface ResyncResult {
  /** One line per object reached: its outcome or its error. */
  details: string[];
  /** Objects whose step threw. */
  failed: string[];
  /** Objects not reached because the budget was spent. */
  skipped: number;
  /** Objects whose step ran (done or to be retried). */
  reconciled: number;
}

/** How many objects a tick works on at once (clusters and members; each object still one at a time). */
export const RESYNC_CONCURRENCY = 4;

/** How long one tick may spend on its objects by default (below Knative's 300 s request limit). */
export const DEFAULT_RESYNC_BUDGET_MS = 240_000;

/**
 * The wait before another try of an object whose step threw (`attempt` 0 = before the second try):
 * 100 ms, then doubling. A bounded retry inside the request, of that object alone, instead of the
 * event system redelivering the whole tick.
 */
export function resyncRetryDelayMs(attempt: number): number {
  return 100 * 2 ** attempt;
}

/** How many more times the run-snapshot tick tries an object whose step threw. */
export const RESYNC_OBJECT_RETRIES = 2;

const sleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms));

export async function resyncEach(
  kind: string,
  refs: readonly ObjectRef[],
  step: (ref: ObjectRef) => Promise<HandlerOutcome>,
  options: {
    now: () => Date;
    budgetMs?: number;
    concurrency?: number;
    /** Tries more of an object whose step threw, within the budget (default 0). */
    retries?: number;
    sleep?: (ms: number) => Promise<void>;
  },
): Promise<ResyncResult> {
  const budget = options.budgetMs ?? DEFAULT_RESYNC_BUDGET_MS;
  const start = options.now().getTime();
  const result: ResyncResult = { details: [], failed: [], skipped: 0, reconciled: 0 };
  // Each object's line at its own index: details and failures keep the list's order whatever ends first.
  const lines: (string | undefined)[] = new Array<string | undefined>(refs.length);
  const failures: (string | undefined)[] = new Array<string | undefined>(refs.length);
  let next = 0;
  const spent = () => options.now().getTime() - start >= budget;
  // A few objects at a time: most of a healthy object's step is waiting on the API server and etcd.
  const worker = async (): Promise<void> => {
    while (next < refs.length && !spent()) {
      const index = next++;
      const ref = refs[index];
      const id = `${kind} ${ref.namespace}/${ref.name}`;
      for (let attempt = 0; ; attempt++) {
        try {
          const outcome = await step(ref);
          result.reconciled++;
          lines[index] =
            `${ref.namespace}/${ref.name}: ${outcome.result === 'done' ? outcome.summary : `retry: ${outcome.reason}`}`;
          break;
        } catch (err) {
          if (attempt < (options.retries ?? 0) && !spent()) {
            log.warn(
              { kind, ...ref, err, attempt: attempt + 1 },
              'resync of one object failed; trying it again',
            );
            await (options.sleep ?? sleep)(resyncRetryDelayMs(attempt));
            continue;
          }
          const message = `${id}: ${err instanceof Error ? err.message : String(err)}`;
          log.error({ kind, ...ref, err }, 'resync of one object failed; going on with the others');
          failures[index] = message;
          lines[index] = message;
          break;
        }
      }
    }
  };
  const workers = Math.max(1, Math.min(options.concurrency ?? 1, refs.length));
  await Promise.all(Array.from({ length: workers }, () => worker()));
  const present = (line: string | undefined): line is string => line !== undefined;
  result.details = lines.filter(present);
  result.failed = failures.filter(present);
  result.skipped = refs.length - next;
  if (result.skipped > 0)
    log.warn({ kind, skipped: result.skipped, budgetMs: budget }, 'resync budget spent; the rest wait');
  return result;
}

/** "resync of 3 cluster(s)", with what failed or was left for later. */
export function resyncSummary(noun: string, total: number, result: ResyncResult): string {
  const parts = [`resync of ${total} ${noun}`];
  if (result.failed.length > 0) parts.push(`${result.failed.length} failed`);
  if (result.skipped > 0) parts.push(`${result.skipped} left for the next tick (time budget spent)`);
  return parts.join('; ');
}
