// `npm run bench`: every benchmark, one table each, with the machine it ran on. Benchmarks are not
// tests: nothing here fails on a figure; the exit code is 1 only when a benchmark could not run.
//
//   npm run bench                        all of them
//   npm run bench -- apiserver           only the ones named (cold-start, apiserver, lifecycle, snapshot, restore, member-loss)
//   npm run bench -- --skip lifecycle    all but the ones named
//   npm run bench -- --runs 3            rounds of the lifecycle benchmark (or BENCH_RUNS=3)
//   BENCH_COLD_RUNS=9 npm run bench -- cold-start   rounds of the cold-start benchmark (at least 5)
//   BENCH_RESTORE_RUNS=7 npm run bench -- restore    rounds of the restore benchmark (at least 5)
//   BENCH_MEMBER_LOSS_RUNS=7 npm run bench -- member-loss   rounds per medium (at least 5)
//
// The lifecycle benchmark runs the sandbox in this process, which must be in the sandbox's private
// mount namespace: that comes first, before anything else is loaded (it re-executes this command).
import { ensurePrivateMountNamespace } from '../sandbox/namespace.ts';

await ensurePrivateMountNamespace();

const { Command } = await import('commander');
const { cpus, freemem, loadavg, totalmem } = await import('node:os');
const { execFileSync } = await import('node:child_process');

const BENCHMARKS = ['cold-start', 'apiserver', 'lifecycle', 'snapshot', 'restore', 'member-loss'] as const;

const program = new Command()
  .name('npm run bench --')
  .description('Benchmarks of etcdfn and its sandbox (figures, never pass/fail).')
  .argument('[benchmarks...]', `which to run (${BENCHMARKS.join(', ')}); default all`)
  .option('--skip <benchmarks...>', 'which not to run')
  .option('--runs <n>', 'rounds of the lifecycle benchmark (default $BENCH_RUNS or 1)')
  .parse();
const opts = program.opts<{ skip?: string[]; runs?: string }>();
const named = program.processedArgs[0] as string[];
for (const name of [...named, ...(opts.skip ?? [])]) {
  if (!(BENCHMARKS as readonly string[]).includes(name)) program.error(`unknown benchmark "${name}"`);
}
const selected = BENCHMARKS.filter(
  b => (named.length === 0 || named.includes(b)) && !(opts.skip ?? []).includes(b),
);

type Row = Record<string, unknown>;

/** An aligned text table: numbers right-aligned, columns that are empty everywhere left out. */
function table(rows: Row[]): string {
  if (rows.length === 0) return '  (no rows)';
  const columns = [...new Set(rows.flatMap(r => Object.keys(r)))].filter(c =>
    rows.some(r => r[c] !== undefined && r[c] !== ''),
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
  const line = (values: string[], numeric: boolean[]) =>
    '  ' +
    values
      .map((v, i) => (numeric[i] ? v.padStart(widths[i] ?? 0) : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const numericColumn = columns.map(c => rows.every(r => r[c] === undefined || typeof r[c] === 'number'));
  return [
    line(columns, numericColumn),
    line(
      widths.map(w => '-'.repeat(w)),
      numericColumn,
    ),
    ...rows.map(r =>
      line(
        columns.map(c => cell(r[c])),
        numericColumn,
      ),
    ),
  ].join('\n');
}

async function machine(): Promise<Row[]> {
  const { etcdBinaries } = await import('../support/etcd-binaries.ts');
  const etcd = (minor: '3.4' | '3.5'): string => {
    try {
      return etcdBinaries(minor).version;
    } catch {
      return 'not installed';
    }
  };
  let kubectl = 'not found';
  try {
    const out = execFileSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
    kubectl =
      (JSON.parse(out) as { clientVersion?: { gitVersion?: string } }).clientVersion?.gitVersion ?? '?';
  } catch {
    // left as "not found"
  }
  const cpu = cpus();
  const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  return [
    { fact: 'CPU cores', value: `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown'}` },
    {
      fact: 'load average (1, 5, 15 min) at start',
      value: loadavg()
        .map(l => l.toFixed(2))
        .join(', '),
    },
    { fact: 'memory', value: `${gib(totalmem())} (${gib(freemem())} free)` },
    { fact: 'node', value: process.version },
    { fact: 'etcd 3.5 (the lifecycle benchmark)', value: etcd('3.5') },
    { fact: 'etcd 3.4', value: etcd('3.4') },
    { fact: 'kubectl', value: kubectl },
  ];
}

console.log('etcdfn benchmarks (figures, not pass/fail; the machine is shared, so expect noise)\n');
console.log('machine');
console.log(table(await machine()));

async function runApiServer(): Promise<void> {
  const { benchApiServer } = await import('./apiserver.ts');
  console.error('[apiserver] running…');
  const rows = await benchApiServer();
  console.log('sandbox API server: 1,000 EtcdClusters stored, 16 requests in flight');
  console.log(table(rows as unknown as Row[]));
}

async function runColdStart(): Promise<void> {
  const { benchColdStart } = await import('./cold-start.ts');
  const rows = await benchColdStart();
  console.log(
    'functions from dist/: process start → first event answered, and RSS then (rounds interleaved)',
  );
  console.log(table(rows as unknown as Row[]));
}

async function runSnapshot(): Promise<void> {
  const { benchSnapshot } = await import('./snapshot.ts');
  const rows = await benchSnapshot();
  console.log(
    'snapshot copy, one fresh process per copy (etcd 3.5 → S3 on s3rver or → a file; read back and verified)',
  );
  console.log(table(rows));
}

async function runLifecycle(): Promise<void> {
  const { benchLifecycle, LifecycleBenchError } = await import('./lifecycle.ts');
  try {
    const rows = await benchLifecycle({ runs: opts.runs ? Number(opts.runs) : undefined });
    console.log('cluster lifecycle on the sandbox vs the same etcd by hand (value = median of rounds)');
    console.log(table(rows as unknown as Row[]));
  } catch (err) {
    if (err instanceof LifecycleBenchError) {
      console.log('cluster lifecycle (incomplete: a round failed)');
      console.log(table(err.rows as unknown as Row[]));
    }
    throw err;
  }
}

async function runRestore(): Promise<void> {
  const { benchRestore } = await import('./restore.ts');
  const runs = process.env.BENCH_RESTORE_RUNS ? Number(process.env.BENCH_RESTORE_RUNS) : undefined;
  const rows = await benchRestore({ runs });
  console.log(
    'restore from S3 (s3rver on loopback), real etcd 3.5 snapshots: agent restore-fetch from dist/, then etcdutl and restore-commit',
  );
  console.log(table(rows));
}

async function runMemberLoss(): Promise<void> {
  const { benchMemberLoss } = await import('./member-loss.ts');
  const rows = await benchMemberLoss();
  console.log(
    'member loss → full size on the sandbox (etcd 3.5, no chaos): fault → status says 3/3 with the member replaced (then checked in etcd)',
  );
  console.log(table(rows as unknown as Row[]));
}

const RUNNERS: Record<(typeof BENCHMARKS)[number], () => Promise<void>> = {
  'cold-start': runColdStart,
  apiserver: runApiServer,
  lifecycle: runLifecycle,
  snapshot: runSnapshot,
  restore: runRestore,
  'member-loss': runMemberLoss,
};

let crashed = false;
const started = Date.now();
for (const bench of selected) {
  console.log('');
  try {
    await RUNNERS[bench]();
  } catch (err) {
    crashed = true;
    console.log(`${bench}: could not run: ${err instanceof Error ? err.message : String(err)}`);
  }
}
console.log(`\n(${((Date.now() - started) / 1000).toFixed(0)} s in all)`);
process.exit(crashed ? 1 : 0);
