// Heavy modules load only when used: no function's start-up (the static import graph from
// functions/serve.ts and each function's entry) reaches the S3 SDK; it is reached only through the
// import() in shared/s3/client.ts, the first time an event's work talks to S3. The bundle follows
// the same graph: esbuild puts import()ed modules in chunks that load when the import() runs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { commonJsExports } from '../../shared/s3/client.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const HEAVY = /^@aws-sdk\//;
const STARTS = [
  'functions/serve.ts',
  'functions/reconcile-cluster/index.ts',
  'functions/reconcile-member/index.ts',
  'functions/finalize-member/index.ts',
  'functions/run-snapshot/index.ts',
  'functions/dead-letter/index.ts',
];

/** Runtime imports of a file: static (import/export ... from, not type-only) and import() calls. */
function imports(file: string): { statics: string[]; dynamics: string[] } {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const statics: string[] = [];
  const dynamics: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) {
      const named = node.importClause?.namedBindings;
      const allTypes =
        node.importClause?.name == null &&
        named != null &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every(e => e.isTypeOnly);
      if (!allTypes && ts.isStringLiteral(node.moduleSpecifier)) statics.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) statics.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) dynamics.push(arg.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { statics, dynamics };
}

/** Packages matching HEAVY reached from `start`, each with the chain of files that reaches it. */
function heavyReached(start: string, followDynamic: boolean): string[] {
  const seen = new Set<string>();
  const found: string[] = [];
  const queue: { file: string; path: string[] }[] = [{ file: join(ROOT, start), path: [start] }];
  while (queue.length > 0) {
    const { file, path } = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const { statics, dynamics } = imports(file);
    // A function's own entry is import()ed by the registry once its name is chosen: that counts
    // as start-up, so relative import() calls are followed too; only packages' import() wait.
    for (const spec of [...statics, ...dynamics.filter(d => followDynamic || d.startsWith('.'))]) {
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec);
        queue.push({ file: target, path: [...path, relative(ROOT, target)] });
      } else if (HEAVY.test(spec)) found.push(`${path.join(' → ')} → ${spec}`);
    }
  }
  return found;
}

describe('the S3 SDK loads only when S3 is used', () => {
  for (const start of STARTS) {
    it(`${start} starts without it`, () => {
      assert.deepEqual(heavyReached(start, false), []);
    });
  }

  it('run-snapshot reaches it through import() (the walk would see a static import)', () => {
    const lazily = heavyReached('functions/run-snapshot/index.ts', true);
    assert.ok(
      lazily.some(chain => chain.endsWith('shared/s3/client.ts → @aws-sdk/client-s3')),
      lazily.join('\n'),
    );
    assert.ok(
      lazily.some(chain => chain.endsWith('→ @aws-sdk/lib-storage')),
      lazily.join('\n'),
    );
  });
});

describe('the exports of a CommonJS package loaded with import()', () => {
  class S3Client {}
  it('are the named exports under Node (tsx) and the default export in the bundle (esbuild)', () => {
    const named = { S3Client, default: { S3Client } };
    assert.equal(commonJsExports(named, 'S3Client'), named);
    const bundled = { default: { S3Client } } as unknown as { S3Client: typeof S3Client };
    assert.equal(commonJsExports(bundled, 'S3Client').S3Client, S3Client);
  });
});
