// StrykerJS over one source file per run, against the test files that exercise it. Run it through
// `npm run mutation` (stryker/run.ts), which sets MUTATE to the file, MUTATE_NAME to its report name
// and MUTATE_TESTS to its test files (stryker/tests-for.ts: the plan unit tests for shared/plan/,
// else every unit and integration test file whose imports reach the file).
import process from 'node:process';

const file = process.env.MUTATE ?? 'shared/plan/cluster/plan.ts';
const name = process.env.MUTATE_NAME ?? file.replace(/^.*\//, '').replace(/\.ts$/, '');
const testFiles = process.env.MUTATE_TESTS
  ? JSON.parse(process.env.MUTATE_TESTS)
  : ['test/unit/plan-*.test.ts'];
const out = process.env.MUTATE_OUT ?? `reports/mutation/${name}`;
// Set by run.ts --survivors: only the ranges of the mutants that survived the last full run.
const ranges = process.env.MUTATE_RANGES ? JSON.parse(process.env.MUTATE_RANGES) : undefined;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'tap',
  tap: {
    testFiles,
    // Each test file runs in its own node, without --test, reporting TAP; tsx loads the TypeScript.
    nodeArgs: ['--import', 'tsx', '--test-reporter=tap', '-r', '{{hookFile}}', '{{testFile}}'],
    forceBail: true,
  },
  mutate: ranges ?? [file],
  coverageAnalysis: 'perTest',
  // Two shared cores on the build machine: one test process at a time unless MUTATION_CONCURRENCY says.
  concurrency: Number(process.env.MUTATION_CONCURRENCY ?? 1),
  timeoutMS: 20000,
  ignorePatterns: [
    '.stryker-tmp*',
    '.cache',
    '.sandbox',
    'reports',
    'charts',
    'knative',
    'docs',
    'examples',
    'test/e2e',
    'test/bench',
  ],
  reporters: ['html', 'json', 'clear-text', 'progress-append-only'],
  htmlReporter: { fileName: `${out}/index.html` },
  jsonReporter: { fileName: `${out}/report.json` },
  thresholds: { high: 95, low: 90, break: null },
  // One sandbox folder per file, so two runs never share one.
  tempDirName: `.stryker-tmp-${name}`,
  cleanTempDir: 'always',
};
