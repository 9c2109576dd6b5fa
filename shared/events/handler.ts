// Wraps a function's event handler as an HTTP function for the functions framework, so the HTTP
// status tells the event system the truth (a cloudEvent-signature function can only say 204/500):
//   200  done, including "nothing to do", with no body → never redelivered
//   4xx  this event can never succeed (malformed)  → not retried, message in the body
//   409/429/503  try again later (lost a race, backing off)
//   500  unexpected failure                        → retried
// GET /metrics serves the process's Prometheus metrics (shared/runtime/metrics.ts).
// A retry or error reply carries only the event's id and the outcome: what was done, to which object, and why, goes
// to the log, never to the caller (anyone who can reach the endpoint could otherwise learn about
// objects in any namespace, e.g. from a forged tick).
import type { Request, Response } from 'express';
import { log } from '../log.ts';
import { withLogContext } from '../log-context.ts';
import { metrics, registry } from '../runtime/metrics.ts';
import { spans, spanTotals, withSpans } from '../runtime/spans.ts';
import { decodeEvent, EventDecodeError } from './decode.ts';
import { eventMetricLabels, type OperatorEvent } from './types.ts';

export type HandlerOutcome =
  | { result: 'done'; summary: string; details?: unknown }
  | { result: 'retry'; reason: string; status?: 409 | 429 | 503 };

export type EventHandler = (event: OperatorEvent) => Promise<HandlerOutcome>;
export type HttpHandler = (req: Request, res: Response) => Promise<void>;

export function eventFunction(name: string, handle: EventHandler): HttpHandler {
  return async (req, res) => {
    if (req.method === 'GET' && req.path === '/metrics') {
      res
        .status(200)
        .set('Content-Type', registry.contentType)
        .send(await registry.metrics());
      return;
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      res.status(200).json({ function: name, ready: true });
      return;
    }
    if (req.method !== 'POST') {
      res
        .status(405)
        .set('Allow', 'GET, POST')
        .json({ error: `${req.method} is not supported; POST a CloudEvent` });
      return;
    }
    let event: OperatorEvent;
    try {
      event = decodeEvent({ headers: req.headers, body: req.body });
    } catch (err) {
      const status = err instanceof EventDecodeError ? err.status : 400;
      const message = err instanceof Error ? err.message : String(err);
      log.warn({ function: name, status, err: message }, 'rejected event');
      metrics.events.inc({ function: name, ...eventMetricLabels(undefined), outcome: 'rejected' });
      res.status(status).json({ error: message });
      return;
    }
    await answer(name, event, handle, res);
  };
}

async function answer(
  name: string,
  event: OperatorEvent,
  handle: EventHandler,
  res: Response,
): Promise<void> {
  // Every line about this event, here and deep in the reconcile, carries these (and what the
  // reconcile notes: cluster, member, step).
  const context = {
    function: name,
    eventId: event.id,
    ...(event.kind === 'object'
      ? { kind: event.ref.kind, namespace: event.ref.namespace, name: event.ref.name }
      : {}),
  };
  const timer = metrics.eventSeconds.startTimer({ function: name });
  // How long the event took, on its line: where a chain of events spends its time shows in the log.
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  const counted = (outcome: 'done' | 'retry' | 'error') => {
    timer({ outcome });
    metrics.events.inc({ function: name, ...eventMetricLabels(event), outcome });
  };
  await withLogContext(context, () =>
    withSpans(async () => {
      try {
        const outcome = await handle(event);
        counted(outcome.result);
        // Where the time went: the Kubernetes and etcd calls' totals and the slowest one.
        const timing = { ms: ms(), ...spanTotals(spans()) };
        if (outcome.result === 'done') {
          const details = outcome.details === undefined ? {} : { details: outcome.details };
          log.info({ type: event.type, ...timing, summary: outcome.summary, ...details }, 'handled event');
          // No body: behind a Knative Broker, a non-empty reply that is not a CloudEvent is a failed
          // delivery (the broker filter answers 502 and the event is retried, then dead-lettered).
          res.status(200).end();
        } else {
          log.info({ type: event.type, ...timing, reason: outcome.reason }, 'event to be retried');
          res.status(outcome.status ?? 503).json({ id: event.id, result: 'retry' });
        }
      } catch (err) {
        counted('error');
        log.error({ type: event.type, err }, 'event handler failed');
        res.status(500).json({ id: event.id, result: 'error' });
      }
    }),
  );
}
