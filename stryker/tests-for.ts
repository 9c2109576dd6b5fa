// Which test files exercise a source file: the unit and integration test files whose relative
// imports reach it, directly or through other modules, or that run a program of ours that does
// (`join(root, 'agent', 'main.ts')` spawned with tsx). Stryker runs only those against the file's
// mutants (test/e2e and the sandbox's own tests are left out: minutes per run each). shared/plan/
// keeps its own list (the plan unit tests), which is what its scores in equivalent-mutants.md were
// measured against.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const TEST_DIRS = ['test/unit', 'test/integration'];
const IMPORT = /(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g;
/** A program of ours named by path segments, as the tests spawn them: join(root, 'agent', 'main.ts'). */
const PROGRAM = /join\(\s*\w+\s*,\s*((?:'[\w.-]+'\s*,\s*)*'[\w.-]+\.ts')\s*\)/g;

interface Edges {
  imports: string[];
  spawns: string[];
}

const cache = new Map<string, Edges>();

function edgesOf(file: string): Edges {
  const known = cache.get(file);
  if (known) return known;
  const text = readFileSync(join(ROOT, file), 'utf8');
  const imports: string[] = [];
  for (const [, spec] of text.matchAll(IMPORT)) {
    if (!spec?.endsWith('.ts')) continue;
    const target = normalize(relative(ROOT, resolve(ROOT, dirname(file), spec)));
    if (existsSync(join(ROOT, target))) imports.push(target);
  }
  const spawns: string[] = [];
  for (const [, segments] of text.matchAll(PROGRAM)) {
    const path = join(...(segments ?? '').split(',').map(s => s.trim().slice(1, -1)));
    if (existsSync(join(ROOT, path))) spawns.push(path);
  }
  const edges = { imports, spawns };
  cache.set(file, edges);
  return edges;
}

/** Does `from` reach `target` through imports within `depth` steps (any depth when undefined)? */
function imports(from: string, target: string, depth: number | undefined, seen: Set<string>): boolean {
  if (from === target) return true;
  if (seen.has(from) || depth === 0) return false;
  seen.add(from);
  const next = depth === undefined ? undefined : depth - 1;
  return edgesOf(from).imports.some(f => imports(f, target, next, seen));
}

/**
 * A program a test spawns counts for the files it runs close by (itself and two import steps on:
 * serve.ts → function-server.ts → body-limit.ts), not for the whole operator behind it: those files
 * have tests of their own, and a child process reports no coverage, so each such test would run
 * against every mutant.
 */
const SPAWN_DEPTH = 2;

function reach(test: string, target: string): 'import' | 'spawn' | undefined {
  if (imports(test, target, undefined, new Set())) return 'import';
  const programs = [test, ...edgesOf(test).imports].flatMap(f => edgesOf(f).spawns);
  return programs.some(p => imports(p, target, SPAWN_DEPTH, new Set())) ? 'spawn' : undefined;
}

export interface TestsFor {
  tests: string[];
  /**
   * Some test reaches the file only in a child process, which reports no coverage to Stryker: every
   * test is then run against every mutant (coverage analysis off).
   */
  inChildProcess: boolean;
}

export function testsFor(file: string): TestsFor {
  const target = normalize(file);
  if (target.startsWith('shared/plan/'))
    return { tests: ['test/unit/plan-*.test.ts'], inChildProcess: false };
  const found = TEST_DIRS.flatMap(dir =>
    readdirSync(join(ROOT, dir))
      .filter(f => f.endsWith('.test.ts'))
      .map(f => `${dir}/${f}`)
      .map(test => ({ test, how: reach(test, target) }))
      .filter(t => t.how !== undefined),
  );
  return { tests: found.map(t => t.test), inChildProcess: found.some(t => t.how === 'spawn') };
}
