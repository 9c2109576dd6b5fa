// What carrying out one planned step of reconcile-cluster ends in: done (with a line for the log and
// the reply), or an outcome to answer the event with at once (a retry, mostly).
import type { HandlerOutcome } from '../events/handler.ts';

export type ActResult = { ok: true; summary: string } | { ok: false; outcome: HandlerOutcome };
