// `npm run bench`: every benchmark, then ONE summary table (test/bench/summary.ts) on stdout: each
// figure's median of its rounds with min and max, the hand-run baseline measured in the same run,
// the ratio to it, and each aim met or NOT met; the same as JSON in reports/bench/<time>.json and
// reports/bench/latest.json. Each benchmark's own detail table goes to stderr. Benchmarks are not
// tests: nothing here fails on a figure; the exit code is 1 only when a benchmark could not run.
//
//   npm run bench                        all of them (at least 5 rounds per figure)
//   npm run bench -- cold-start          only the ones named (cold-start, resync-tick, lifecycle, snapshot, restore, member-loss)
//   BENCH_TICK_CLUSTERS=200 npm run bench -- resync-tick   clusters in the resync tick (default 1,000)
//   npm run bench -- --skip lifecycle    all but the ones named
//   npm run bench -- --quick             2 rounds each, for checking; the table says so
//   npm run bench -- --runs 3            rounds of every benchmark (default 5)
//   BENCH_COLD_RUNS=9 npm run bench -- cold-start   rounds of the cold-start benchmark (at least 5)
//   BENCH_RESTORE_RUNS=7 npm run bench -- restore    rounds of the restore benchmark (at least 5)
//   BENCH_MEMBER_LOSS_RUNS=7 npm run bench -- member-loss   rounds per medium (at least 5)
//
// The lifecycle benchmark runs the sandbox in this process, which must be in the sandbox's private
// mount namespace: that comes first, before anything else is loaded (it re-executes this command).
import { ensurePrivateMountNamespace } from '../sandbox/namespace.ts';
import type { Figure, Stats } from './summary.ts';

await ensurePrivateMountNamespace();

const { Command } = await import('commander');
const { cpus, freemem, loadavg, totalmem } = await import('node:os');
const { execFileSync } = await import('node:child_process');
const { mkdirSync, writeFileSync } = await import('node:fs');
const { join } = await import('node:path');

const BENCHMARKS = ['cold-start', 'resync-tick', 'lifecycle', 'snapshot', 'restore', 'member-loss'] as const;

const program = new Command()
  .name('npm run bench --')
  .description('Benchmarks of etcdfn and its sandbox (figures, never pass/fail).')
  .argument('[benchmarks...]', `which to run (${BENCHMARKS.join(', ')}); default all`)
  .option('--skip <benchmarks...>', 'which not to run')
  .option('--runs <n>', 'rounds of every benchmark (default 5; $BENCH_RUNS for the lifecycle)')
  .option('--quick', 'fewer rounds (2), for checking that the bench runs; the table says so')
  .parse();
const opts = program.opts<{ skip?: string[]; runs?: string; quick?: boolean }>();
const QUICK_RUNS = 2;
const FULL_RUNS = 5;
/** Rounds for every benchmark: --runs, else 2 in quick mode, else undefined (each one's default, ≥ 5). */
const runs = opts.runs ? Number(opts.runs) : opts.quick ? QUICK_RUNS : undefined;
const quick = runs !== undefined && runs < FULL_RUNS;
const named = program.processedArgs[0] as string[];
for (const name of [...named, ...(opts.skip ?? [])]) {
  if (!(BENCHMARKS as readonly string[]).includes(name)) program.error(`unknown benchmark "${name}"`);
}
const selected = BENCHMARKS.filter(
  b => (named.length === 0 || named.includes(b)) && !(opts.skip ?? []).includes(b),
);

const { figureOf, formatSummary, statsOf } = await import('./summary.ts');
const { lifecycleFigureInputs } = await import('./lifecycle-figures.ts');
type Row = Record<string, unknown>;

/** An aligned text table for a benchmark's detail (stderr): numbers right-aligned, empty columns left out. */
function table(rows: Row[]): string {
  if (rows.length === 0) return '  (no rows)';
  const columns = [...new Set(rows.flatMap(r => Object.keys(r)))].filter(c =>
    rows.some(r => r[c] !== undefined && r[c] !== '' && !Array.isArray(r[c])),
  );
  const cell = (v: unknown): string =>
    v === undefined
      ? ''
      : typeof v === 'number'
        ? v.toLocaleString('en-US', { maximumFractionDigits: 2 })
        : typeof v === 'string'
          ? v
          : JSON.stringify(v);
  const widths = columns.map(c => Math.max(c.length, ...rows.map(r => cell(r[c]).length)));
  const numericColumn = columns.map(c => rows.every(r => r[c] === undefined || typeof r[c] === 'number'));
  const line = (values: string[]) =>
    '  ' +
    values
      .map((v, i) => (numericColumn[i] ? v.padStart(widths[i] ?? 0) : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [
    line(columns),
    line(widths.map(w => '-'.repeat(w))),
    ...rows.map(r => line(columns.map(c => cell(r[c])))),
  ].join('\n');
}

async function machine(): Promise<Record<string, string>> {
  const { etcdBinaries } = await import('../support/etcd-binaries.ts');
  const etcd = (minor: '3.4' | '3.5'): string => {
    try {
      return etcdBinaries(minor).version;
    } catch {
      return 'not installed';
    }
  };
  const cpu = cpus();
  const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  let nproc = String(cpu.length);
  try {
    nproc = execFileSync('nproc', { encoding: 'utf8' }).trim();
  } catch {
    // os.cpus() then
  }
  return {
    nproc,
    'CPU model': cpu[0]?.model.trim() ?? 'unknown',
    memory: `${gib(totalmem())} (${gib(freemem())} free at start)`,
    'load average (1, 5, 15 min) at start': loadavg()
      .map(l => l.toFixed(2))
      .join(', '),
    node: process.version,
    'etcd 3.5': etcd('3.5'),
    'etcd 3.4': etcd('3.4'),
  };
}

const figures: Figure[] = [];
const detail = (title: string, rows: Row[]): void => console.error(`\n${title}\n${table(rows)}`);

async function runResyncTick(): Promise<void> {
  const { benchResyncTick } = await import('./resync-tick.ts');
  console.error('[resync-tick] growing one cluster, copying it, then ticking…');
  const rows = await benchResyncTick({ runs: runs ?? FULL_RUNS });
  detail(
    'one resync tick of reconcile-cluster over healthy clusters (sandbox API server, 3 real etcd shared)',
    rows as unknown as Row[],
  );
  const clusters = (rows[0]?.clusters ?? 0).toLocaleString('en-US');
  const of = (key: keyof (typeof rows)[number]): Stats => statsOf(rows.map(r => Number(r[key])));
  const section = 'resync tick';
  figures.push(
    figureOf({
      section,
      figure: `one tick over ${clusters} healthy clusters: wall time`,
      unit: 's',
      stats: of('wall s'),
      aim: { of: 'median', op: '<=', limit: 30, text: '≤ 30 s' },
    }),
    figureOf({
      section,
      figure: `one tick over ${clusters}: API reads`,
      unit: 'requests',
      stats: of('API reads'),
    }),
    figureOf({
      section,
      figure: `one tick over ${clusters}: API writes`,
      unit: 'requests',
      stats: of('API writes'),
      aim: { of: 'median', op: '=', limit: 0, text: '0 writes' },
    }),
    figureOf({
      section,
      figure: `one tick over ${clusters}: etcd calls`,
      unit: 'calls',
      stats: of('etcd calls'),
    }),
    figureOf({
      section,
      figure: `one tick over ${clusters}: peak RSS of the process running the handler`,
      unit: 'MiB',
      stats: of('peak RSS MiB'),
      baseline: { label: 'RSS before the tick', stats: of('RSS before MiB') },
    }),
  );
  const notReached = rows.filter(r => r.failed > 0 || r.skipped > 0);
  if (notReached.length > 0)
    throw new Error(
      `resync tick: clusters failed or skipped in ${notReached.length} round(s): ${notReached[0]?.outcome}`,
    );
}

async function runColdStart(): Promise<void> {
  const { benchColdStart } = await import('./cold-start.ts');
  const rows = await benchColdStart({ runs });
  detail(
    'functions from dist/: process start → first event answered, and RSS then',
    rows as unknown as Row[],
  );
  const base = rows[0];
  const baseRss: Stats | undefined = base && {
    median: base['RSS median MiB'],
    min: base['RSS min'],
    max: base['RSS max'],
    runs: runs ?? 5,
  };
  for (const r of rows.slice(1)) {
    const fn = r.program.replace(/^dist: /, '');
    figures.push(
      figureOf({
        section: 'cold start',
        figure: `${fn}: start → first event answered`,
        unit: 's',
        stats: { median: r['start→answer median s'], min: r['min s'], max: r['max s'], runs: runs ?? 5 },
        aim: { of: 'median', op: '<', limit: 0.6, text: '< 0.6 s' },
      }),
      figureOf({
        section: 'cold start',
        figure: `${fn}: RSS after the first event`,
        unit: 'MiB',
        stats: { median: r['RSS median MiB'], min: r['RSS min'], max: r['RSS max'], runs: runs ?? 5 },
        ...(baseRss ? { baseline: { label: 'node + client-node', stats: baseRss } } : {}),
      }),
    );
  }
}

async function runSnapshot(): Promise<void> {
  const { benchSnapshot } = await import('./snapshot.ts');
  const rows = await benchSnapshot({ runs });
  detail('snapshot copy, one fresh process per copy (etcd 3.5 → S3 on s3rver or → a file; read back)', rows);
  for (const r of rows) {
    if (typeof r['MB/s median'] !== 'number') continue;
    figures.push(
      figureOf({
        section: 'snapshot',
        figure: `${String(r.database)} → ${String(r.path)}`,
        unit: 'MB/s',
        stats: {
          median: r['MB/s median'],
          min: r['MB/s min'] as number,
          max: r['MB/s max'] as number,
          runs: r.runs as number,
        },
      }),
    );
  }
}

async function runLifecycle(): Promise<void> {
  const { benchLifecycle, LifecycleBenchError } = await import('./lifecycle.ts');
  let rows: Awaited<ReturnType<typeof benchLifecycle>>;
  try {
    rows = await benchLifecycle({ runs: runs ?? FULL_RUNS });
  } catch (err) {
    if (err instanceof LifecycleBenchError) lifecycleFigures(err.rows);
    throw err;
  }
  lifecycleFigures(rows);
}

function lifecycleFigures(rows: { measurement: string; unit: string; samples: number[] }[]): void {
  detail('cluster lifecycle on the sandbox vs the same etcd by hand (value = median of rounds)', rows);
  const pick = (prefix: string): Stats | undefined => {
    const row = rows.find(r => r.measurement.startsWith(prefix));
    return row ? statsOf(row.samples) : undefined;
  };
  const section = 'lifecycle';
  for (const input of lifecycleFigureInputs(rows)) figures.push(figureOf(input));
  for (const row of rows.filter(r => r.measurement.startsWith('per-event handling')))
    figures.push(figureOf({ section, figure: row.measurement, unit: row.unit, stats: statsOf(row.samples) }));
  for (const instance of ['warm', 'cold'] as const)
    for (const kind of ['reads', 'writes'] as const) {
      const stats = pick(`no-op reconcile, ${instance} instance: API ${kind}`);
      if (!stats) continue;
      figures.push(
        figureOf({
          section,
          figure: `no-op reconcile (${instance} instance): API ${kind}`,
          unit: 'requests',
          stats,
          ...(kind === 'writes' ? { aim: { of: 'median', op: '=', limit: 0, text: '0 writes' } } : {}),
        }),
      );
    }
}

async function runRestore(): Promise<void> {
  const { benchRestore } = await import('./restore.ts');
  const rows = await benchRestore({
    runs: runs ?? (process.env.BENCH_RESTORE_RUNS ? Number(process.env.BENCH_RESTORE_RUNS) : undefined),
  });
  detail('restore from S3 (s3rver): agent restore-fetch from dist/, then etcdutl and restore-commit', rows);
  for (const r of rows) {
    if (r.unit !== 'MB/s') continue;
    figures.push(
      figureOf({
        section: 'restore',
        figure: `${String(r.snapshot)}: ${String(r.figure)}`,
        unit: 'MB/s',
        stats: {
          median: r.median as number,
          min: r.min as number,
          max: r.max as number,
          runs: r.rounds as number,
        },
      }),
    );
  }
}

async function runMemberLoss(): Promise<void> {
  const { benchMemberLoss } = await import('./member-loss.ts');
  const rows = await benchMemberLoss({ runs });
  detail('member loss → full size on the sandbox (etcd 3.5, no chaos)', rows as unknown as Row[]);
  for (const r of rows)
    figures.push(
      figureOf({ section: 'member loss', figure: r.measurement, unit: r.unit, stats: statsOf(r.samples) }),
    );
}

const RUNNERS: Record<(typeof BENCHMARKS)[number], () => Promise<void>> = {
  'cold-start': runColdStart,
  'resync-tick': runResyncTick,
  lifecycle: runLifecycle,
  snapshot: runSnapshot,
  restore: runRestore,
  'member-loss': runMemberLoss,
};

const startedAt = new Date();
const facts = await machine();
console.error('etcdfn benchmarks (figures, not pass/fail; the machine is shared, so expect noise)');
detail(
  'machine',
  Object.entries(facts).map(([fact, value]) => ({ fact, value })),
);
const failed: { section: string; error: string }[] = [];
for (const bench of selected) {
  try {
    await RUNNERS[bench]();
  } catch (err) {
    failed.push({ section: bench, error: err instanceof Error ? err.message : String(err) });
  }
}
const summary = {
  quick,
  startedAt: startedAt.toISOString(),
  machine: facts,
  figures,
  failed,
  notes: [
    `${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s in all; machine: ${facts.nproc} × ${facts['CPU model']}, ${facts.memory}`,
  ],
};
console.log(formatSummary(summary));
const dir = join(import.meta.dirname, '..', '..', 'reports', 'bench');
mkdirSync(dir, { recursive: true });
const json = JSON.stringify(summary, null, 2) + '\n';
const file = join(dir, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(file, json);
writeFileSync(join(dir, 'latest.json'), json);
console.error(`\nwritten: ${file} and reports/bench/latest.json`);
process.exit(failed.length > 0 ? 1 : 0);
