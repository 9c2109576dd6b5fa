// The PingSource-style tick: on the manifest's cron schedule (croner), or every N seconds when the
// sandbox wants faster ticks than cron's one minute, build the PingSource's CloudEvent and hand it on.
import { Cron } from 'croner';
import type { CloudEvent } from 'cloudevents';
import type { Logger } from 'pino';
import { log as rootLog } from '../../shared/log.ts';
import { pingEvent } from './format.ts';
import type { PingSourceSpec } from './sources.ts';

export interface TickerOptions {
  ping: PingSourceSpec;
  /** Tick every this many seconds instead of on the cron schedule. */
  tickSeconds?: number;
  onTick: (event: CloudEvent<unknown>) => void;
  log?: Logger;
}

export class Ticker {
  private cron: Cron | undefined;
  private interval: NodeJS.Timeout | undefined;
  private readonly log: Logger;

  private readonly options: TickerOptions;
  constructor(options: TickerOptions) {
    this.options = options;
    this.log = options.log ?? rootLog.child({ component: 'bridge-tick', ping: options.ping.name });
  }

  start(): void {
    if (this.cron || this.interval) return;
    const { ping, tickSeconds } = this.options;
    if (tickSeconds !== undefined) {
      if (!(tickSeconds > 0)) throw new Error(`tickSeconds must be positive, not ${tickSeconds}`);
      this.interval = setInterval(() => this.tickNow(), tickSeconds * 1000);
      this.interval.unref();
      this.log.info({ everySeconds: tickSeconds }, 'tick started');
      return;
    }
    const options = ping.timezone ? { timezone: ping.timezone } : {};
    this.cron = new Cron(ping.schedule, { ...options, mode: '5-part', catch: true, unref: true }, () => {
      this.tickNow();
    });
    this.log.info({ schedule: ping.schedule, next: this.cron.nextRun()?.toISOString() }, 'tick started');
  }

  /** Sends one tick now; returns the event. */
  tickNow(): CloudEvent<unknown> {
    const event = pingEvent(this.options.ping);
    try {
      this.options.onTick(event);
    } catch (err) {
      this.log.error({ err: err instanceof Error ? err.message : String(err) }, 'tick handler threw');
    }
    return event;
  }

  /** When the next scheduled tick fires (undefined when stopped or on a fixed interval). */
  nextRun(): Date | undefined {
    return this.cron?.nextRun() ?? undefined;
  }

  stop(): void {
    this.cron?.stop();
    this.cron = undefined;
    if (this.interval) clearInterval(this.interval);
    this.interval = undefined;
  }
}
