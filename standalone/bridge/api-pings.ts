// PingSources found in the API server, ticked by the bridge as Knative's ping adapter would: the
// ones run-snapshot makes for EtcdSnapshotSchedules (label etcdfn.io/schedule-timing, see
// shared/plan/schedule/ping.ts). Watched (list + watch), so a schedule created, changed or deleted
// starts, moves or stops its timer. Where the API server serves no PingSource (a cluster without
// Knative's CRDs) the bridge says so once and goes on without them.
//
// Each timer checks the clock every second against the cron's next time (croner) rather than
// sleeping until it, so a clock that moves (a suspended machine, the sandbox's test clock) still
// fires at the right minute, once, however far it moved.
import { Cron } from 'croner';
import type { CloudEvent } from 'cloudevents';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { SCHEDULE_PING_LABEL } from '../../shared/plan/schedule/ping.ts';
import { pingEvent, type WatchedObject } from './format.ts';
import type { PingSourceSpec } from './sources.ts';
import { ResourceWatcher } from './watcher.ts';

const CHECK_MS = 1000;

export interface ApiPingsOptions {
  kubeConfig: KubeConfig;
  onTick: (event: CloudEvent<unknown>) => void;
  /** The clock (ms since the epoch); default Date.now. */
  now?: () => number;
  log: Logger;
  /** Watch these namespaces only (a namespaced install); default every namespace. */
  namespaces?: string[];
}

/** The bridge's view of one PingSource object (the fields a tick needs). */
export function pingSpecOf(object: WatchedObject): PingSourceSpec | undefined {
  const spec = (object.spec ?? {}) as Record<string, unknown>;
  if (typeof spec.schedule !== 'string' || spec.schedule === '') return undefined;
  const ping: PingSourceSpec = {
    name: object.metadata.name ?? '',
    namespace: object.metadata.namespace ?? '',
    schedule: spec.schedule,
  };
  for (const key of ['timezone', 'contentType', 'data', 'dataBase64'] as const) {
    const value = spec[key];
    if (typeof value === 'string') ping[key] = value;
  }
  return ping;
}

/** One PingSource's timer: fires once each time the clock passes the cron's next time. */
export class ClockTicker {
  private readonly cron: Cron;
  private next: Date | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly ping: PingSourceSpec;
  private readonly now: () => number;
  private readonly fire: (ping: PingSourceSpec) => void;

  constructor(ping: PingSourceSpec, now: () => number, fire: (ping: PingSourceSpec) => void) {
    this.ping = ping;
    this.now = now;
    this.fire = fire;
    this.cron = new Cron(ping.schedule, {
      paused: true,
      mode: '5-part',
      ...(ping.timezone && { timezone: ping.timezone }),
    });
  }

  start(): void {
    this.next = this.cron.nextRun(new Date(this.now())) ?? undefined;
    this.timer = setInterval(() => this.check(), CHECK_MS);
    this.timer.unref();
  }

  /** Fires if the next time has come; returns whether it did. */
  check(): boolean {
    const at = this.now();
    if (!this.next || at < this.next.getTime()) return false;
    this.next = this.cron.nextRun(new Date(at)) ?? undefined;
    this.fire(this.ping);
    return true;
  }

  nextRun(): Date | undefined {
    return this.next;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

export class ApiPings {
  private readonly tickers = new Map<string, { spec: string; ticker: ClockTicker }>();
  private watchers: ResourceWatcher[] = [];
  private readonly options: ApiPingsOptions;

  constructor(options: ApiPingsOptions) {
    this.options = options;
  }

  async start(): Promise<void> {
    const watchers = (this.options.namespaces ?? [undefined]).map(
      namespace =>
        new ResourceWatcher({
          kubeConfig: this.options.kubeConfig,
          target: {
            apiVersion: 'sources.knative.dev/v1',
            kind: 'PingSource',
            labelSelector: `${SCHEDULE_PING_LABEL}=true`,
            ...(namespace !== undefined && { namespace }),
          },
          replayInitialList: true,
          log: this.options.log,
          onEvent: (verb, object) => this.apply(verb, object),
        }),
    );
    try {
      await Promise.all(watchers.map(w => w.start()));
      this.watchers = watchers;
    } catch (err) {
      await Promise.all(watchers.map(w => w.stop()));
      this.options.log.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'PingSources cannot be watched (no PingSource API?): EtcdSnapshotSchedules run on the resync tick only',
      );
    }
  }

  /** The PingSources ticking now, by namespace/name. */
  names(): string[] {
    return [...this.tickers.keys()].sort();
  }

  private apply(verb: string, object: WatchedObject): void {
    const key = `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
    const current = this.tickers.get(key);
    const ping = verb === 'delete' ? undefined : pingSpecOf(object);
    const spec = JSON.stringify(ping ?? null);
    if (current && current.spec === spec) return;
    current?.ticker.stop();
    this.tickers.delete(key);
    if (!ping) return;
    try {
      const ticker = new ClockTicker(ping, this.options.now ?? Date.now, p => {
        this.options.onTick(pingEvent(p));
      });
      ticker.start();
      this.tickers.set(key, { spec, ticker });
      this.options.log.info(
        {
          ping: key,
          schedule: ping.schedule,
          timezone: ping.timezone,
          next: ticker.nextRun()?.toISOString(),
        },
        'PingSource ticking',
      );
    } catch (err) {
      this.options.log.warn(
        { ping: key, err: err instanceof Error ? err.message : String(err) },
        'PingSource schedule not usable',
      );
    }
  }

  async stop(): Promise<void> {
    for (const { ticker } of this.tickers.values()) ticker.stop();
    this.tickers.clear();
    await Promise.all(this.watchers.map(w => w.stop()));
    this.watchers = [];
  }
}
