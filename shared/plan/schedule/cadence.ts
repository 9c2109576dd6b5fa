// A schedule string (5-part cron in a time zone, or @every <h>h<m>m) as the runs it names: shared
// by everything in etcdfn that runs on a schedule. Pure: the caller passes the time.
import { Cron } from 'croner';
import { scheduleProblem } from './cron-grammar.ts';
import { DEFAULT_TIME_ZONE } from '../../api/defaults.ts';

/** A parsed schedule: the most recent run at or before a time, and the next one after it. */
export interface Cadence {
  previous(at: Date): Date | undefined;
  next(at: Date): Date | undefined;
}

const EVERY = /^@every (?:(\d+)h)?(?:(\d+)m)?$/;

/** Parses spec.schedule in the time zone; a string saying what is wrong when it cannot be used. */
export function parseCadence(schedule: string, timeZone = DEFAULT_TIME_ZONE): Cadence | string {
  // Only what Knative's PingSource runs alike (the CRDs refuse the rest; this says why in status).
  const problem = scheduleProblem(schedule.trim());
  if (problem) return `schedule "${schedule}" cannot be used: ${problem}`;
  const every = EVERY.exec(schedule.trim());
  if (every) {
    const ms = (Number(every[1] ?? 0) * 60 + Number(every[2] ?? 0)) * 60_000;
    if (ms <= 0) return `schedule "${schedule}" has an interval of zero; use at least "@every 1m"`;
    // Counted from the Unix epoch, so runs fall on the same times whoever evaluates them:
    // @every 6h runs at 00:00, 06:00, 12:00 and 18:00 UTC. The time zone does not apply.
    return {
      previous: at => new Date(Math.floor(at.getTime() / ms) * ms),
      next: at => new Date((Math.floor(at.getTime() / ms) + 1) * ms),
    };
  }
  let cron: Cron;
  try {
    cron = new Cron(schedule.trim(), { paused: true, mode: '5-part', timezone: timeZone });
    // croner only looks at the time zone when it evaluates: do it once here.
    cron.nextRun(new Date(0));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (/timezone/i.test(message)) {
      return `timeZone "${timeZone}" is not a known IANA time zone (for example UTC or Europe/Berlin)`;
    }
    return `schedule "${schedule}" cannot be used: ${message}`;
  }
  return {
    // previousRuns is strict (a run exactly at `at` is left out): look from just after it.
    previous: at => cron.previousRuns(1, new Date(at.getTime() + 1))[0],
    next: at => cron.nextRun(at) ?? undefined,
  };
}
