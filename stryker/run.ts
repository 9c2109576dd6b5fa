// `npm run mutation [file-or-folder ...]`: StrykerJS, one source file per run so each run stays in
// minutes, each against the test files whose imports reach it (stryker/tests-for.ts). No argument:
// every file of shared/plan/ against the plan unit tests. A folder stands for its .ts files:
// `npm run mutation -- shared/reconcile shared/runtime/body-limit.ts`. AREAS is the whole set the
// act layer and the programs add (`npm run mutation -- --areas`); integration test files among a
// file's tests start real etcd or s3rver, so those runs take longer.
// Reports go to reports/mutation/<name>/ (git-ignored; <name> is the file's name for shared/plan/,
// else its path without shared/ and with dashes); a summary line per file is printed at the end.
//
// `npm run mutation -- --survivors [file ...]` re-tests only the mutants that survived (or had no
// coverage) in the last full run of each file, writing reports/mutation/<name>/survivors/, and scores
// the file as the full run's killed plus the survivors killed now. Tests are only ever added, so a
// mutant killed in the full run stays killed; on a loaded machine this takes a third of the time.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { testsFor } from './tests-for.ts';

const PLAN_DIR = 'shared/plan';
const CONFIG = 'stryker/stryker.config.mjs';
// The files with the safety branches first; the rest in name order.
const FIRST = ['cluster/plan.ts', 'member/plan.ts', 'member/finalize.ts'];

/** Beyond shared/plan/: the act layer, the builders, the runtime, TLS, restore, S3 and the agent. */
const AREAS = [
  'shared/reconcile',
  'shared/restore',
  'shared/s3',
  'shared/runtime',
  'shared/tls',
  'shared/builders/etcd-flags.ts',
  'shared/builders/pdb.ts',
  'agent',
];

/** A folder's .ts files, its subfolders' included (shared/plan/ is one folder per concern). */
function filesOf(dir: string, first: string[] = []): string[] {
  const present = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter(
    f => f.endsWith('.ts') && !f.endsWith('.d.ts'),
  );
  const rank = (f: string) => (first.includes(f) ? first.indexOf(f) : first.length);
  return present.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b)).map(f => join(dir, f));
}

/** A folder's files; a file; or `file.ts:first-last`, the mutants of those lines only. */
const expand = (arg: string): string[] => {
  const path = arg.replace(/:\d+-\d+$/, '');
  return statSync(path).isDirectory() ? filesOf(path) : [arg];
};

/**
 * The report's name: for shared/plan/ its path below plan/ in dashes (cluster/plan.ts ->
 * cluster-plan, as the file was called before plan/ had folders), else its path without shared/.
 */
const reportName = (file: string): string =>
  file.startsWith(`${PLAN_DIR}/`)
    ? file
        .slice(PLAN_DIR.length + 1)
        .replace(/\.ts$/, '')
        .replaceAll('/', '-')
    : file
        .replace(/^shared\//, '')
        .replace(/\.ts$/, '')
        .replaceAll('/', '-');

interface Mutant {
  status: string;
  mutatorName: string;
  replacement?: string;
  location: { start: { line: number; column: number }; end: { line: number; column: number } };
}
interface MutantReport {
  files: Record<string, { mutants: Mutant[] }>;
}

const readReport = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as MutantReport;
const mutants = (report: MutantReport) => Object.values(report.files).flatMap(f => f.mutants);
const open = (m: Mutant) => m.status === 'Survived' || m.status === 'NoCoverage';
// The end too: mutants of nested expressions (`a`, `a && b`, … → `true`) share start, mutator and replacement.
const key = (m: Mutant) =>
  `${m.location.start.line}:${m.location.start.column}-${m.location.end.line}:${m.location.end.column}:${m.mutatorName}:${m.replacement ?? ''}`;

/** Stryker mutate ranges (1-based lines, 0-based columns) around each surviving mutant. */
function survivorRanges(file: string, report: MutantReport): string[] {
  return mutants(report)
    .filter(open)
    .map(
      ({ location: { start, end } }) =>
        `${file}:${start.line}:${start.column - 1}-${end.line}:${end.column - 1}`,
    );
}

/** The full run's statuses, with those re-tested in the survivors run replaced by their new status. */
function merged(full: MutantReport, again: MutantReport): MutantReport {
  const now = new Map(mutants(again).map(m => [key(m), m.status]));
  const all = mutants(full).map(m => ({ ...m, status: open(m) ? (now.get(key(m)) ?? m.status) : m.status }));
  return { files: { merged: { mutants: all } } };
}

function tally(report: MutantReport): string {
  const counts: Record<string, number> = {};
  for (const file of Object.values(report.files))
    for (const m of file.mutants) counts[m.status] = (counts[m.status] ?? 0) + 1;
  const killed = (counts.Killed ?? 0) + (counts.Timeout ?? 0);
  const total = Object.entries(counts)
    .filter(([s]) => s !== 'CompileError' && s !== 'RuntimeError' && s !== 'Ignored')
    .reduce((n, [, c]) => n + c, 0);
  const score = total === 0 ? 100 : (100 * killed) / total;
  const part = (s: string) => `${s.toLowerCase()} ${counts[s] ?? 0}`;
  return `${score.toFixed(1)}% (${['Killed', 'Survived', 'NoCoverage', 'Timeout'].map(part).join(', ')})`;
}

const args = process.argv.slice(2);
const survivorsOnly = args.includes('--survivors');
const requested = args.filter(a => !a.startsWith('--'));
// --tests=a.test.ts,b.test.ts: these test files instead of every one that reaches the file.
const testsOverride = args
  .find(a => a.startsWith('--tests='))
  ?.slice('--tests='.length)
  .split(',');
if (args.includes('--areas')) requested.push(...AREAS);
const files = requested.length > 0 ? requested.flatMap(expand) : filesOf(PLAN_DIR, FIRST);
const summary: string[] = [];
let failed = false;
for (const arg of files) {
  const lines = /:(\d+-\d+)$/.exec(arg)?.[1];
  const file = arg.replace(/:\d+-\d+$/, '');
  const name = reportName(file) + (lines ? `-L${lines}` : '');
  const base = `reports/mutation/${name}`;
  const tests = testsOverride ?? testsFor(file);
  if (tests.length === 0) {
    summary.push(`${arg}: no unit or integration test file reaches it (not run)`);
    continue;
  }
  const full =
    survivorsOnly && existsSync(`${base}/report.json`) ? readReport(`${base}/report.json`) : undefined;
  const out = full ? `${base}/survivors` : base;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    MUTATE: file,
    MUTATE_NAME: name,
    MUTATE_OUT: out,
    MUTATE_TESTS: JSON.stringify(tests),
  };
  if (full) env.MUTATE_RANGES = JSON.stringify(survivorRanges(file, full));
  else if (lines) env.MUTATE_RANGES = JSON.stringify([`${file}:${lines}`]);
  console.log(`\n=== mutation: ${arg}${full ? ' (survivors of the last full run)' : ''} ===`);
  console.log(`tests: ${tests.join(' ')}`);
  const run = spawnSync('npx', ['stryker', 'run', CONFIG], { stdio: 'inherit', env });
  if (run.status !== 0) {
    failed = true;
    summary.push(`${arg}: stryker exited with ${run.status ?? run.signal}`);
    continue;
  }
  const report = readReport(`${out}/report.json`);
  summary.push(`${arg}: ${tally(full ? merged(full, report) : report)}`);
}
console.log(
  `\n=== mutation scores (killed incl. timeouts / all but compile errors) ===\n${summary.join('\n')}`,
);
process.exit(failed ? 1 : 0);
