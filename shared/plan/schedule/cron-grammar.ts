// The schedules etcdfn accepts: exactly those that both of the programs that run them accept with
// the same meaning — Knative Eventing's PingSource (robfig/cron v3: optional seconds, descriptors,
// no @every) in knative mode, and croner (5-part mode) in standalone mode and in run-snapshot's own
// plan. Five fields (or a macro, or etcdfn's own @every, which becomes a plain cron for the
// PingSource): numbers in each field's range, JAN-DEC and SUN-SAT in any case, `*`, `a-b`, `*/n`,
// `a-b/n` and lists; `?` alone for a day field. Refused, because one of the two refuses it or reads
// it differently: a seconds field, L, W, #, day-of-week 7, `a/n` (croner refuses it), steps beyond
// a field's range, @every in the PingSource. One regular expression (RE2 and JavaScript alike) is
// the CRD's CEL rule and the chart's values schema; scheduleProblem adds what a pattern cannot say
// (a range backwards, a date that never comes). test/integration/cron-schedules.test.ts runs the
// same table through robfig/cron and croner.

/** Names in any case: an inline flag group, which RE2 (CEL, Helm's schema) and JavaScript share. */
const names = (list: string[]): string => `(?i:${list.join('|')})`;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/** One field: its values, its steps, whether `?` may stand for it. */
function field(value: string, step: string, question = false): string {
  const v = `(${value})`;
  const s = `(/(${step}))?`;
  const item = `(\\*${s}|${v}-${v}${s}|${v})`;
  return `(${question ? '\\?|' : ''}${item}(,${item})*)`;
}

const MINUTE = field('[0-5]?[0-9]', '0?[1-9]|[1-5][0-9]');
const HOUR = field('[01]?[0-9]|2[0-3]', '0?[1-9]|1[0-9]|2[0-3]');
const DAY_OF_MONTH = field('0?[1-9]|[12][0-9]|3[01]', '0?[1-9]|[12][0-9]|3[01]', true);
const MONTH = field(`0?[1-9]|1[0-2]|${names(MONTHS)}`, '0?[1-9]|1[0-2]');
const DAY_OF_WEEK = field(`0?[0-6]|${names(DAYS)}`, '0?[1-6]', true);

const FIVE_FIELDS = [MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK].join(' +');
const MACRO = '@(yearly|annually|monthly|weekly|daily|midnight|hourly)';
const EVERY = '@every ([0-9]+h([0-9]+m)?|[0-9]+m)';

/** A cron both Knative's PingSource and croner run alike (the resync tick's schedule). */
export const PING_CRON_PATTERN = `^(${MACRO}|${FIVE_FIELDS})$`;
/** spec.schedule of an EtcdSnapshotSchedule: a PingSource cron, or etcdfn's own @every. */
export const SCHEDULE_PATTERN = `^(${MACRO}|${EVERY}|${FIVE_FIELDS})$`;

const FIELD_NAMES = ['minute', 'hour', 'day-of-month', 'month', 'day-of-week'];
const NAME_VALUES: Record<string, number> = {
  ...Object.fromEntries(MONTHS.map((m, i) => [m, i + 1])),
  ...Object.fromEntries(DAYS.map((d, i) => [d, i])),
};
const valueOf = (text: string): number => NAME_VALUES[text.toLowerCase()] ?? Number(text);

/**
 * What is wrong with a schedule, in words for status (after `schedule "…" cannot be used: `); undefined when both runners accept it. The
 * CRD refuses what the pattern refuses; this also refuses a backwards range (`10-5`), which both
 * runners refuse too.
 */
export function scheduleProblem(schedule: string, pattern = SCHEDULE_PATTERN): string | undefined {
  if (!new RegExp(pattern).test(schedule)) {
    return `('${schedule}') is not a cron both Knative's PingSource and the standalone runner accept: use five fields (minute hour day-of-month month day-of-week) with numbers, names, *, ranges a-b, steps */n or a-b/n and lists, or a macro such as @daily${pattern === SCHEDULE_PATTERN ? ' or @every 6h' : ''} (no seconds field, L, W, #, day-of-week 7 or a/n)`;
  }
  if (schedule.startsWith('@')) return undefined;
  const fields = schedule.split(/ +/);
  for (const [i, text] of fields.entries()) {
    for (const item of text.split(',')) {
      const range = /^([^-/]+)-([^/]+)/.exec(item);
      if (range && valueOf(range[1]) > valueOf(range[2])) {
        return `the ${FIELD_NAMES[i]} range ${range[0]} runs backwards; write it from low to high`;
      }
    }
  }
  return undefined;
}
