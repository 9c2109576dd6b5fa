// `npm run mutation [file ...]`: StrykerJS over shared/plan/, one file per run so each run stays in
// minutes. The files are listed at run time, so splitting a plan file needs no config change.
// Reports go to reports/mutation/<file>/ (git-ignored); a summary line per file is printed at the end.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

const PLAN_DIR = 'shared/plan';
const CONFIG = 'stryker/stryker.config.mjs';
// The files with the safety branches first; the rest in name order.
const FIRST = ['cluster-plan.ts', 'member-plan.ts', 'finalize-plan.ts'];

function planFiles(): string[] {
  const present = readdirSync(PLAN_DIR).filter(f => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  const rank = (f: string) => (FIRST.includes(f) ? FIRST.indexOf(f) : FIRST.length);
  return present.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b)).map(f => join(PLAN_DIR, f));
}

interface MutantReport {
  files: Record<string, { mutants: { status: string }[] }>;
}

function tally(reportFile: string): string {
  const report = JSON.parse(readFileSync(reportFile, 'utf8')) as MutantReport;
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

const requested = process.argv.slice(2);
const files = requested.length > 0 ? requested : planFiles();
const summary: string[] = [];
let failed = false;
for (const file of files) {
  const name = basename(file, '.ts');
  const out = `reports/mutation/${name}`;
  console.log(`\n=== mutation: ${file} ===`);
  const run = spawnSync('npx', ['stryker', 'run', CONFIG], {
    stdio: 'inherit',
    env: { ...process.env, MUTATE: file },
  });
  if (run.status !== 0) {
    failed = true;
    summary.push(`${file}: stryker exited with ${run.status ?? run.signal}`);
    continue;
  }
  summary.push(`${file}: ${tally(`${out}/report.json`)}`);
}
console.log(
  `\n=== mutation scores (killed incl. timeouts / all but compile errors) ===\n${summary.join('\n')}`,
);
process.exit(failed ? 1 : 0);
