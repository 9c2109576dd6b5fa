// What every log line of one event carries, without threading a logger through the library: the
// function, the event's id and the object it names, and as the reconcile learns them, the cluster,
// member or snapshot and the plan step. Kept per event (AsyncLocalStorage), read by the logger's
// mixin (shared/log.ts), so concurrent events in the standalone runner never mix their fields.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface LogContext {
  function?: string;
  eventId?: string;
  namespace?: string;
  kind?: string;
  name?: string;
  cluster?: string;
  member?: string;
  snapshot?: string;
  /** The step the plan chose (its kind). */
  step?: string;
}

const store = new AsyncLocalStorage<LogContext>();

/** Runs `fn` with `context` on every log line it (and what it awaits) writes. */
export function withLogContext<T>(context: LogContext, fn: () => T): T {
  return store.run({ ...context }, fn);
}

/** Adds what a reconcile has learnt (cluster, member, step) to the current event's lines. */
export function noteLogContext(more: LogContext): void {
  const current = store.getStore();
  if (current) Object.assign(current, more);
}

/** The fields for the line being written (pino's mixin); none outside an event. */
export function logContextFields(): LogContext {
  return { ...(store.getStore() ?? {}) };
}
