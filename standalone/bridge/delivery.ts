// At-least-once delivery to subscribers, as Knative's dispatcher does it (pkg/kncloudevents): POST the
// event (binary mode unless told otherwise), retry on transport errors, timeouts and 5xx, 404, 408,
// 409, 429 (SelectiveRetry) with the delivery spec's back-off, and give up on anything else: the
// event is dead-lettered (logged with the response body, and kept in a short in-memory list).
// Concurrency is bounded; deliveries that share a key are made one after the other.
// The queue is bounded too: anyone who can create a Pod labelled etcdfn.io/cluster feeds it. A
// delivery waiting to be sent absorbs a later one of the same object, trigger and type (the function
// reads the object when the first arrives, so it sees the later change too), and once `maxQueued`
// deliveries wait, a new one is shed and counted; the resync tick, never shed, covers what was.
import type { CloudEvent, CloudEventV1 } from 'cloudevents';
import type { Logger } from 'pino';
import { log as rootLog } from '../../shared/log.ts';
import { toHttpMessage } from './format.ts';
import type { DeliverySpec } from './sources.ts';

export interface DeliveryJob {
  /** The Trigger's subscriber name (e.g. reconcile-member). */
  subscriber: string;
  url: string;
  trigger: string;
  event: CloudEvent<unknown>;
  policy: DeliverySpec;
  /** Deliveries with the same key are made in order, one at a time; undefined = no ordering. */
  key?: string;
  /** Never shed when the queue is full (the resync tick, which re-covers whatever was shed). */
  keep?: boolean;
}

export type AttemptOutcome =
  | 'delivered'
  | 'retry'
  | 'dead-lettered'
  | 'aborted'
  /** Not sent: a delivery of the same object, trigger and type was still waiting to be sent. */
  | 'coalesced'
  /** Not sent: the queue was full. */
  | 'shed';

export interface DeliveryRecord {
  subscriber: string;
  trigger: string;
  url: string;
  eventId: string;
  type: string;
  subject?: string;
  /** 1 for the first try. */
  attempt: number;
  status?: number;
  error?: string;
  outcome: AttemptOutcome;
  durationMs: number;
  at: Date;
}

export interface DeadLetter {
  subscriber: string;
  trigger: string;
  url: string;
  event: CloudEventV1<unknown>;
  status?: number;
  body?: string;
  error?: string;
  attempts: number;
  at: Date;
}

export interface DeliveryStats {
  submitted: number;
  attempts: number;
  delivered: number;
  retries: number;
  deadLettered: number;
  /** Deliveries absorbed by one of the same object still waiting to be sent. */
  coalesced: number;
  /** Deliveries dropped because `maxQueued` were waiting. */
  shed: number;
  /** Deliveries waiting to be sent (queued behind their key or for a free slot) right now. */
  queued: number;
}

export interface DispatcherOptions {
  /** Requests in flight at most (default 16). */
  concurrency?: number;
  /** Dead letters kept in memory (default 100; oldest dropped first). */
  deadLetterLimit?: number;
  /** Deliveries waiting to be sent at most; more are shed (default 10,000). */
  maxQueued?: number;
  /** Absorb a delivery into a waiting one of the same key, URL and type (default true; chaos turns it off). */
  coalesce?: boolean;
  /** Told of every delivery coalesced or shed (the bridge counts them in its metrics). */
  onDropped?: (reason: 'coalesced' | 'shed', job: DeliveryJob) => void;
  onAttempt?: (record: DeliveryRecord) => void;
  log?: Logger;
}

/** Knative's SelectiveRetry; `undefined` stands for a transport error or a timeout. */
export function isRetryable(status: number | undefined): boolean {
  if (status === undefined || status === -1) return true;
  return status >= 500 || status === 404 || status === 408 || status === 409 || status === 429;
}

/**
 * The wait before retry number `retryIndex` (0 = the first retry), as Knative computes it from the
 * delivery spec: exponential = delay·2^n, linear = delay·n.
 */
export function backoffMs(
  policy: Pick<DeliverySpec, 'backoffPolicy' | 'backoffDelayMs'>,
  retryIndex: number,
) {
  if (policy.backoffPolicy === 'linear') return policy.backoffDelayMs * retryIndex;
  return policy.backoffDelayMs * 2 ** retryIndex;
}

const BODY_LIMIT = 2048;

export class Dispatcher {
  readonly deadLetters: DeadLetter[] = [];
  readonly stats: DeliveryStats = {
    submitted: 0,
    attempts: 0,
    delivered: 0,
    retries: 0,
    deadLettered: 0,
    coalesced: 0,
    shed: 0,
    queued: 0,
  };
  private readonly log: Logger;
  private readonly limit: number;
  private readonly deadLetterLimit: number;
  private readonly stopping = new AbortController();
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly waiters: (() => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private readonly sleepers = new Set<() => void>();
  private inFlight = 0;
  private pending = 0;
  private readonly maxQueued: number;
  /** Deliveries not yet sent, by key, URL and type: a later equal one is absorbed. */
  private readonly waiting = new Map<string, DeliveryJob>();

  private readonly options: DispatcherOptions;
  constructor(options: DispatcherOptions = {}) {
    this.options = options;
    this.log = options.log ?? rootLog.child({ component: 'bridge-delivery' });
    this.limit = Math.max(1, options.concurrency ?? 16);
    this.deadLetterLimit = options.deadLetterLimit ?? 100;
    this.maxQueued = Math.max(1, options.maxQueued ?? 10_000);
  }

  /** Queues a delivery; resolves with its final outcome (never rejects). */
  submit(job: DeliveryJob): Promise<AttemptOutcome> {
    this.stats.submitted++;
    const same =
      job.key !== undefined && this.options.coalesce !== false
        ? `${job.key}\n${job.url}\n${job.event.type}`
        : undefined;
    if (same !== undefined && this.waiting.has(same)) return Promise.resolve(this.dropped('coalesced', job));
    if (!job.keep && this.stats.queued >= this.maxQueued) return Promise.resolve(this.dropped('shed', job));
    this.pending++;
    this.stats.queued++;
    if (same !== undefined) this.waiting.set(same, job);
    let sent = false;
    /** Called once the delivery holds a slot for its first attempt (or ends without one). */
    const leaveQueue = () => {
      if (sent) return;
      sent = true;
      this.stats.queued--;
      if (same !== undefined && this.waiting.get(same) === job) this.waiting.delete(same);
    };
    const previous = job.key !== undefined ? this.chains.get(job.key) : undefined;
    const run = (previous ?? Promise.resolve()).then(() => this.deliver(job, leaveQueue)).finally(leaveQueue);
    if (job.key !== undefined) {
      const key = job.key;
      const tail = run.finally(() => {
        if (this.chains.get(key) === tail) this.chains.delete(key);
      });
      this.chains.set(key, tail);
    }
    return run.finally(() => {
      this.pending--;
      if (this.pending === 0) this.idleWaiters.splice(0).forEach(resolve => resolve());
    });
  }

  private dropped(reason: 'coalesced' | 'shed', job: DeliveryJob): AttemptOutcome {
    this.stats[reason]++;
    // The first shed, then one line in a thousand: a flood must not become a flood of log lines.
    if (reason === 'shed' && this.stats.shed % 1000 === 1) {
      this.log.warn(
        { shed: this.stats.shed, queued: this.stats.queued, maxQueued: this.maxQueued, trigger: job.trigger },
        'delivery queue full: events shed (the resync tick covers them)',
      );
    }
    try {
      this.options.onDropped?.(reason, job);
    } catch (err) {
      this.log.error({ err: errorText(err) }, 'onDropped observer threw');
    }
    return reason;
  }

  /** Resolves when every submitted delivery has finished (delivered, dead-lettered or aborted). */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise(resolve => this.idleWaiters.push(resolve));
  }

  /** Aborts requests in flight and pending back-offs; queued deliveries end as `aborted`. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.sleepers.forEach(wake => wake());
    this.waiters.splice(0).forEach(resolve => resolve());
    await this.idle();
  }

  private async deliver(job: DeliveryJob, leaveQueue: () => void): Promise<AttemptOutcome> {
    const { policy } = job;
    for (let attempt = 1; ; attempt++) {
      if (this.stopping.signal.aborted) return 'aborted';
      const result = await this.attempt(job, attempt, leaveQueue);
      if (result.outcome === 'delivered') return 'delivered';
      if (this.stopping.signal.aborted) return this.record(job, attempt, result, 'aborted');
      const retryable = isRetryable(result.status);
      if (!retryable || attempt > policy.retry) {
        this.record(job, attempt, result, 'dead-lettered');
        this.deadLetter(job, attempt, result);
        return 'dead-lettered';
      }
      this.record(job, attempt, result, 'retry');
      this.stats.retries++;
      await this.sleep(backoffMs(policy, attempt - 1));
    }
  }

  private async attempt(job: DeliveryJob, attempt: number, onSlot: () => void): Promise<AttemptResult> {
    await this.acquire();
    onSlot();
    const started = Date.now();
    this.stats.attempts++;
    try {
      if (this.stopping.signal.aborted) return { outcome: 'aborted', durationMs: 0, error: 'stopped' };
      const message = toHttpMessage(job.event, job.policy.format ?? 'binary');
      const signals = [this.stopping.signal];
      if (job.policy.timeoutMs !== undefined) signals.push(AbortSignal.timeout(job.policy.timeoutMs));
      const res = await fetch(job.url, {
        method: 'POST',
        headers: { ...message.headers, prefer: 'reply' },
        body: message.body,
        signal: AbortSignal.any(signals),
      });
      const body = (await res.text()).slice(0, BODY_LIMIT);
      const durationMs = Date.now() - started;
      if (res.status >= 200 && res.status < 300) {
        this.stats.delivered++;
        this.record(job, attempt, { status: res.status, durationMs }, 'delivered');
        return { outcome: 'delivered', status: res.status, durationMs };
      }
      return { outcome: 'retry', status: res.status, body, durationMs };
    } catch (err) {
      return { outcome: 'retry', error: errorText(err), durationMs: Date.now() - started };
    } finally {
      this.release();
    }
  }

  private record(job: DeliveryJob, attempt: number, result: Partial<AttemptResult>, outcome: AttemptOutcome) {
    const record: DeliveryRecord = {
      subscriber: job.subscriber,
      trigger: job.trigger,
      url: job.url,
      eventId: job.event.id,
      type: job.event.type,
      attempt,
      outcome,
      durationMs: result.durationMs ?? 0,
      at: new Date(),
    };
    if (job.event.subject !== undefined) record.subject = job.event.subject;
    if (result.status !== undefined) record.status = result.status;
    if (result.error !== undefined) record.error = result.error;
    this.log.debug({ ...record, at: undefined }, 'delivery attempt');
    try {
      this.options.onAttempt?.(record);
    } catch (err) {
      this.log.error({ err: errorText(err) }, 'onDelivery observer threw');
    }
    return outcome;
  }

  private deadLetter(job: DeliveryJob, attempts: number, result: AttemptResult): void {
    this.stats.deadLettered++;
    const letter: DeadLetter = {
      subscriber: job.subscriber,
      trigger: job.trigger,
      url: job.url,
      event: job.event.toJSON() as CloudEventV1<unknown>,
      attempts,
      at: new Date(),
    };
    if (result.status !== undefined) letter.status = result.status;
    if (result.body !== undefined) letter.body = result.body;
    if (result.error !== undefined) letter.error = result.error;
    this.deadLetters.push(letter);
    if (this.deadLetters.length > this.deadLetterLimit) this.deadLetters.shift();
    this.log.warn(
      {
        subscriber: job.subscriber,
        trigger: job.trigger,
        id: job.event.id,
        type: job.event.type,
        subject: job.event.subject,
        status: result.status,
        body: result.body,
        error: result.error,
        attempts,
      },
      'event dead-lettered',
    );
  }

  private async acquire(): Promise<void> {
    while (this.inFlight >= this.limit && !this.stopping.signal.aborted) {
      await new Promise<void>(resolve => this.waiters.push(resolve));
    }
    this.inFlight++;
  }

  private release(): void {
    this.inFlight--;
    this.waiters.shift()?.();
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise(resolve => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }
}

interface AttemptResult {
  outcome: 'delivered' | 'retry' | 'aborted';
  status?: number;
  body?: string;
  error?: string;
  durationMs: number;
}

function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  if (err.name === 'TimeoutError') return 'request timed out';
  return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
}
