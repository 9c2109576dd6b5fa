// The one table `npm run bench` ends with: every headline figure as the median of its rounds with
// min and max, the baseline measured by hand in the same run, the ratio to it, and whether the aim
// is met. The same rows are written as JSON (reports/bench/<time>.json and latest.json), so a run
// can be compared with an earlier one. Pure apart from writeResults.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a figure should be: at most `value` itself, or at most `value` × its baseline. */
export type Aim = { kind: 'at-most'; value: number } | { kind: 'ratio-at-most'; value: number };

export interface Figure {
  section: string;
  name: string;
  unit: string;
  /** One value per round (non-finite values are left out). */
  runs: number[];
  /** The same thing done by hand in the same run, when there is one. */
  baseline?: { name: string; runs: number[] };
  aim?: Aim;
}

export interface SummaryRow {
  section: string;
  figure: string;
  unit: string;
  rounds: number;
  median: number | undefined;
  min: number | undefined;
  max: number | undefined;
  baseline: string;
  'baseline median': number | undefined;
  ratio: number | undefined;
  aim: string;
  met: '' | 'met' | 'not met' | 'no data';
}

export function median(values: readonly number[]): number | undefined {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

const round = (n: number | undefined, digits = 3): number | undefined =>
  n === undefined ? undefined : Number(n.toFixed(digits));

function aimText(aim: Aim | undefined, unit: string): string {
  if (!aim) return '';
  return aim.kind === 'at-most' ? `≤ ${aim.value} ${unit}` : `≤ ${aim.value}× baseline`;
}

/** One row per figure; `met` compares the median (or the median's ratio) with the aim. */
export function summarize(figures: readonly Figure[]): SummaryRow[] {
  return figures.map(f => {
    const runs = f.runs.filter(Number.isFinite);
    const mid = median(runs);
    const base = f.baseline ? median(f.baseline.runs) : undefined;
    const ratio = mid !== undefined && base !== undefined && base > 0 ? mid / base : undefined;
    let met: SummaryRow['met'] = '';
    if (f.aim) {
      const compared = f.aim.kind === 'at-most' ? mid : ratio;
      met = compared === undefined ? 'no data' : compared <= f.aim.value ? 'met' : 'not met';
    }
    return {
      section: f.section,
      figure: f.name,
      unit: f.unit,
      rounds: runs.length,
      median: round(mid),
      min: round(runs.length ? Math.min(...runs) : undefined),
      max: round(runs.length ? Math.max(...runs) : undefined),
      baseline: f.baseline?.name ?? '',
      'baseline median': round(base),
      ratio: round(ratio, 2),
      aim: aimText(f.aim, f.unit),
      met,
    };
  });
}

export interface BenchResults {
  /** RFC 3339 time the run started. */
  started: string;
  machine: Record<string, string>;
  /** Rounds fewer than the benchmarks' minimum (a quick look, not a measurement). */
  quick: boolean;
  summary: SummaryRow[];
  /** Every benchmark's own table, by name. */
  tables: Record<string, unknown[]>;
}

/** Writes <dir>/<started>.json and <dir>/latest.json; returns the first path. */
export function writeResults(dir: string, results: BenchResults): string {
  mkdirSync(dir, { recursive: true });
  const text = `${JSON.stringify(results, null, 2)}\n`;
  const stamped = join(dir, `${results.started.replace(/[:.]/g, '-')}.json`);
  writeFileSync(stamped, text);
  writeFileSync(join(dir, 'latest.json'), text);
  return stamped;
}
