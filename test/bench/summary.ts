// The one table `npm run bench` ends with: every figure as the median of its rounds with min and
// max, the hand-run baseline measured in the same run and the ratio to it, and each aim as met or
// not met. Pure: the benchmarks hand in numbers, this file only arranges them (unit-tested with
// plain objects in test/unit/bench-summary.test.ts), and the same figures go to JSON.

/** Median, min and max of one figure's rounds. */
export interface Stats {
  median: number;
  min: number;
  max: number;
  runs: number;
}

/** What a figure should be: its median (or its ratio to the baseline) compared with a limit. */
export interface Aim {
  of: 'median' | 'ratio';
  op: '<=' | '<' | '=';
  limit: number;
  /** How the table names it, e.g. "≤ 4× static". */
  text: string;
}

export interface FigureInput {
  section: string;
  figure: string;
  unit: string;
  stats: Stats;
  baseline?: { label: string; stats: Stats };
  aim?: Aim;
}

export interface Figure extends FigureInput {
  /** median / baseline median, when there is a baseline. */
  ratio?: number;
  /** Whether the aim is met, when there is one (false when the figure it is about is missing). */
  met?: boolean;
}

export interface Summary {
  quick: boolean;
  startedAt: string;
  machine: Record<string, string>;
  figures: Figure[];
  /** Sections that could not run, with why. */
  failed: { section: string; error: string }[];
  /** Said under the table, e.g. figures the bench does not measure yet, so their absence is seen. */
  notes: string[];
}

export function statsOf(samples: number[]): Stats {
  const sorted = samples.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return { median: NaN, min: NaN, max: NaN, runs: 0 };
  const mid = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
  return { median, min: sorted[0] ?? NaN, max: sorted[sorted.length - 1] ?? NaN, runs: sorted.length };
}

function compare(value: number, aim: Aim): boolean {
  if (!Number.isFinite(value)) return false;
  if (aim.op === '<=') return value <= aim.limit;
  if (aim.op === '<') return value < aim.limit;
  return value === aim.limit;
}

/** The ratio to the baseline and whether the aim is met. */
export function figureOf(input: FigureInput): Figure {
  const base = input.baseline?.stats.median;
  const ratio =
    base === undefined || !Number.isFinite(base) || base === 0 ? undefined : input.stats.median / base;
  const figure: Figure = { ...input };
  if (ratio !== undefined) figure.ratio = ratio;
  if (input.aim)
    figure.met = compare(input.aim.of === 'ratio' ? (ratio ?? NaN) : input.stats.median, input.aim);
  return figure;
}

const num = (n: number | undefined): string => {
  if (n === undefined || !Number.isFinite(n)) return '-';
  if (Number.isInteger(n)) return n.toLocaleString('en-US');
  return Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2);
};

const COLUMNS = [
  'section',
  'figure',
  'unit',
  'median',
  'min',
  'max',
  'runs',
  'baseline (median)',
  'ratio',
  'aim',
];
const NUMERIC = new Set(['median', 'min', 'max', 'runs', 'ratio']);

export function summaryRows(figures: Figure[]): string[][] {
  return figures.map(f => [
    f.section,
    f.figure,
    f.unit,
    num(f.stats.median),
    num(f.stats.min),
    num(f.stats.max),
    String(f.stats.runs),
    f.baseline ? `${f.baseline.label}: ${num(f.baseline.stats.median)}` : '',
    f.ratio === undefined ? '' : `${num(f.ratio)}×`,
    f.aim ? `${f.aim.text}: ${f.met ? 'met' : 'NOT met'}` : '',
  ]);
}

/** The table as text: a heading saying whether this was a quick run, then aligned columns. */
export function formatSummary(summary: Summary): string {
  const rows = summaryRows(summary.figures);
  const widths = COLUMNS.map((c, i) => Math.max(c.length, ...rows.map(r => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((v, i) => (NUMERIC.has(COLUMNS[i] ?? '') ? v.padStart(widths[i] ?? 0) : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const heading = summary.quick
    ? 'etcdfn bench summary — QUICK MODE (fewer rounds than the 5 the figures ask for; for checking only)'
    : 'etcdfn bench summary (median of the rounds, min and max; baseline measured in the same run)';
  const out = [heading, line(COLUMNS), line(widths.map(w => '-'.repeat(w))), ...rows.map(line)];
  for (const f of summary.failed) out.push(`${f.section}: could not run: ${f.error}`);
  for (const note of summary.notes) out.push(`note: ${note}`);
  return out.join('\n');
}
