// Schedules: etcdfn accepts exactly what both of its runners run alike. Each case goes through
// Knative's PingSource parser (robfig/cron v3 with the options of knative.dev/eventing's webhook, a
// small Go program in test/go/cron-check) and through croner (standalone mode and the plans): an
// accepted case parses in both and fires at the same 40 times in UTC and in Europe/Paris; a
// refused case is refused by one of them or fires at other times. The CRDs' CEL rules and the
// chart's tick schedule use the same pattern (shared/plan/schedule/cron-grammar.ts). One difference remains
// and is allowed here (docs/snapshots.md says so): a local time skipped by a daylight-saving change
// is not fired by Knative, and fired at the shifted time by croner.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cron } from 'croner';
import { parse } from 'yaml';
import {
  PING_CRON_PATTERN,
  SCHEDULE_PATTERN,
  scheduleProblem,
} from '../../shared/plan/schedule/cron-grammar.ts';
import { ROOT } from '../support/helm.ts';

const START = '2026-03-01T00:00:00Z';
const COUNT = 40;
const ZONES = ['', 'Europe/Paris'];

/** [schedule, accepted]: the same table for both runners and for the CRD pattern. */
const CASES: [string, boolean][] = [
  ['0 3 * * *', true],
  ['*/15 * * * *', true],
  ['0 */6 * * *', true],
  ['30 2 * * SUN', true],
  ['30 2 * * sun', true],
  ['0 0 1,15 * MON-FRI', true],
  ['0 9-17/2 * * 1-5', true],
  ['0 0 * JAN,jul *', true],
  ['0 0 * * 0', true],
  ['0 0 * * 6', true],
  ['0 0 ? * MON', true],
  ['0 0 1 * ?', true],
  ['00 03 * * *', true],
  ['0  3 * * *', true],
  ['59 23 31 12 *', true],
  ['0 0 29 2 *', true],
  ['5-10,20-25/5 * * * *', true],
  ['@hourly', true],
  ['@daily', true],
  ['@midnight', true],
  ['@weekly', true],
  ['@monthly', true],
  ['@yearly', true],
  ['@annually', true],
  // Refused: one runner refuses it or reads it otherwise.
  ['0 0 L * *', false],
  ['0 0 15W * *', false],
  ['0 0 * * 5#3', false],
  ['0 0 * * 7', false],
  ['5/15 * * * *', false],
  ['0 0 * 2/5 *', false],
  ['0 0 1 * * *', false],
  ['* * * *', false],
  ['10-5 * * * *', false],
  ['0 0 * * FRI-MON', false],
  ['*/0 * * * *', false],
  ['0 0 */32 * *', false],
  ['60 * * * *', false],
  ['0 24 * * *', false],
  ['0 0 0 * *', false],
  ['0 0 * 13 *', false],
  ['@reboot', false],
  ['TZ=UTC 0 3 * * *', false],
  ['CRON_TZ=Europe/Paris 0 3 * * *', false],
];

/** Times after this are not compared: robfig/cron gives up looking five years ahead, croner not. */
const HORIZON = '2036-01-01T00:00:00Z';

/** The zone's UTC offset at a time, in minutes (from Intl: "GMT+1" → 60). */
function offset(zone: string, at: Date): number {
  const name = new Intl.DateTimeFormat('en-US', { timeZone: zone || 'UTC', timeZoneName: 'shortOffset' })
    .formatToParts(at)
    .find(p => p.type === 'timeZoneName')!.value;
  const m = /GMT([+-])(\d+)(?::(\d+))?/.exec(name);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0)) : 0;
}

/** Whether the zone's clocks change within three hours of a time (a daylight-saving day). */
function nearClockChange(zone: string, at: Date): boolean {
  const hours = (h: number) => new Date(at.getTime() + h * 3600_000);
  return offset(zone, hours(-3)) !== offset(zone, hours(3));
}

/**
 * The one way the runners differ on an accepted schedule: a local time that the clock change skips
 * (02:30 in Europe/Paris on the last Sunday of March) Knative does not fire and croner fires at
 * the shifted time; a local time that happens twice (02:30 on the last Sunday of October) each
 * fires once, Knative at the second, croner at the first. Returns what differs otherwise.
 */
function differences(zone: string, knative: string[], croner: string[]): string[] {
  const inHorizon = (list: string[]) => list.filter(t => t >= START && t < HORIZON);
  const k = new Set(inHorizon(knative));
  const c = new Set(inHorizon(croner));
  const out: string[] = [];
  for (const t of k) if (!c.has(t) && !nearClockChange(zone, new Date(t))) out.push(`Knative only ${t}`);
  for (const t of c) if (!k.has(t) && !nearClockChange(zone, new Date(t))) out.push(`croner only ${t}`);
  return out;
}

interface Outcome {
  error?: string;
  next?: string[];
}

let dir: string;
let checker: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'etcdfn-cron-check-'));
  checker = join(dir, 'cron-check');
  execFileSync('go', ['build', '-o', checker, '.'], {
    cwd: join(ROOT, 'test', 'go', 'cron-check'),
    env: { ...process.env, GOFLAGS: '-mod=mod', CGO_ENABLED: '0' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Knative's PingSource parser on every case in one time zone. */
function robfig(zone: string): Map<string, Outcome> {
  const input = CASES.map(([s]) => `${zone}\t${s}`).join('\n') + '\n';
  const out = execFileSync(checker, [START], { input, encoding: 'utf8' });
  const lines = out
    .trim()
    .split('\n')
    .map(l => JSON.parse(l) as Outcome & { schedule: string });
  return new Map(lines.map(l => [l.schedule, l]));
}

function croner(schedule: string, zone: string): Outcome {
  try {
    const cron = new Cron(schedule, { paused: true, mode: '5-part', timezone: zone || 'UTC' });
    const next: string[] = [];
    let t: Date | null = new Date(START);
    for (let i = 0; i < COUNT && t; i++) {
      t = cron.nextRun(t);
      if (t) next.push(t.toISOString().replace('.000Z', 'Z'));
    }
    return { next };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

describe('schedules: accepted exactly when Knative (robfig/cron) and croner run them alike', () => {
  for (const zone of ZONES) {
    it(`every case, time zone ${zone || 'UTC'}`, () => {
      const knative = robfig(zone);
      const wrong: string[] = [];
      for (const [schedule, accepted] of CASES) {
        const ours = scheduleProblem(schedule) === undefined;
        if (ours !== accepted) wrong.push(`${schedule}: etcdfn ${ours ? 'accepts' : 'refuses'} it`);
        const k = knative.get(schedule)!;
        const c = croner(schedule, zone);
        const diff = !k.error && !c.error ? differences(zone, k.next ?? [], c.next ?? []) : ['an error'];
        const alike = diff.length === 0;
        if (accepted && !alike)
          wrong.push(
            `${schedule}: accepted but Knative ${k.error ?? ''} / croner ${c.error ?? ''}: ${diff.join(', ')}`,
          );
        if (!accepted && alike) wrong.push(`${schedule}: refused although both run it alike`);
      }
      assert.deepEqual(wrong, []);
    });
  }

  it('the CRDs check spec.schedule and maintenance.defrag.schedule with that pattern', () => {
    const literal = `self.matches('${SCHEDULE_PATTERN.replace(/\\/g, '\\\\')}')`;
    for (const file of ['etcdfn.io_etcdsnapshotschedules.yaml', 'etcdfn.io_etcdclusters.yaml'])
      assert.ok(readFileSync(join(ROOT, 'crds', file), 'utf8').includes(literal), file);
  });

  it("the chart's tick schedule: the PingSource pattern (no @every: Knative refuses it there)", () => {
    const schema = parse(readFileSync(join(ROOT, 'charts', 'etcdfn', 'values.schema.json'), 'utf8'));
    assert.equal(schema.properties.tick.properties.schedule.pattern, PING_CRON_PATTERN);
    assert.ok(!new RegExp(PING_CRON_PATTERN).test('@every 6h'));
    assert.ok(new RegExp(SCHEDULE_PATTERN).test('@every 6h'));
  });

  it('the comparison itself: a skipped DST time is the only difference it lets through', () => {
    const croner = ['2026-03-22T01:30:00Z', '2026-03-29T01:00:00Z'];
    assert.deepEqual(differences('Europe/Paris', ['2026-03-22T01:30:00Z'], croner), []);
    assert.deepEqual(differences('', ['2026-03-22T01:30:00Z'], croner), ['croner only 2026-03-29T01:00:00Z']);
    assert.deepEqual(differences('', croner, ['2026-03-22T01:30:00Z']), [
      'Knative only 2026-03-29T01:00:00Z',
    ]);
  });

  it("@every is etcdfn's own: accepted in spec.schedule, refused by the PingSource parser", () => {
    assert.equal(scheduleProblem('@every 1h30m'), undefined);
    assert.match(scheduleProblem('@every 30s') ?? '', /not a cron/);
  });
});
