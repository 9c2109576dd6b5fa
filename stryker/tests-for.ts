// Which test files exercise a source file: the unit and integration test files whose relative
// imports reach it, directly or through other modules. Stryker runs only those against the file's
// mutants (test/e2e and the sandbox's own tests are left out: minutes per run each). shared/plan/
// keeps its own list (the plan unit tests), which is what its scores in equivalent-mutants.md were
// measured against.
//
// Code a test runs only in a child process (functions/serve.ts, agent/main.ts spawned with tsx) is
// not counted: Stryker's tap runner sees neither the coverage nor the mutants of a child (tried on
// shared/runtime/body-limit.ts with coverage analysis off: mutants the spawned test plainly kills by
// hand survived), so such code needs an in-process test to be measured (test/unit/body-limit.test.ts).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const TEST_DIRS = ['test/unit', 'test/integration'];
const IMPORT = /(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

const cache = new Map<string, string[]>();

/** Relative .ts imports of one file, as paths from the repository root. */
function importsOf(file: string): string[] {
  const known = cache.get(file);
  if (known) return known;
  const text = readFileSync(join(ROOT, file), 'utf8');
  const out: string[] = [];
  for (const [, spec] of text.matchAll(IMPORT)) {
    if (!spec?.endsWith('.ts')) continue;
    const target = normalize(relative(ROOT, resolve(ROOT, dirname(file), spec)));
    if (existsSync(join(ROOT, target))) out.push(target);
  }
  cache.set(file, out);
  return out;
}

/** Does `from`'s import graph reach `target`? */
function reaches(from: string, target: string, seen: Set<string>): boolean {
  if (from === target) return true;
  if (seen.has(from)) return false;
  seen.add(from);
  return importsOf(from).some(next => reaches(next, target, seen));
}

export function testsFor(file: string): string[] {
  const target = normalize(file);
  if (target.startsWith('shared/plan/')) return ['test/unit/plan-*.test.ts'];
  return TEST_DIRS.flatMap(dir =>
    readdirSync(join(ROOT, dir))
      .filter(f => f.endsWith('.test.ts'))
      .map(f => `${dir}/${f}`)
      .filter(test => reaches(test, target, new Set())),
  );
}
