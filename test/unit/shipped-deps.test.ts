// What ships (functions/, shared/, cli/, standalone/) may import only Node's built-ins, the
// package's runtime dependencies and other shipped files: never a devDependency and never test/.
// The import graph is walked from every shipped file through relative imports, reading each file's
// static imports, re-exports and dynamic import() calls with TypeScript's parser; type-only imports
// are erased at build time and so may name type packages.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '../..');
const SHIPPED = ['functions', 'shared', 'cli', 'standalone'];
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(e => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The module specifiers a file loads at run time (type-only imports and exports left out). */
export function runtimeImports(source: string, fileName = 'x.ts'): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) {
      const named = node.importClause?.namedBindings;
      const allTypes =
        node.importClause != null &&
        node.importClause.name == null &&
        named != null &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every(e => e.isTypeOnly);
      if (!allTypes && ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) found.push(arg.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

const builtins = new Set(builtinModules);
const isBuiltin = (s: string): boolean => s.startsWith('node:') || builtins.has(s);

interface Finding {
  from: string;
  specifier: string;
  problem: string;
}

/** Walks the graph from every shipped file; returns what it reached and anything not allowed. */
function walk(): { files: Set<string>; packages: Set<string>; findings: Finding[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const findings: Finding[] = [];
  const queue = SHIPPED.flatMap(d => tsFiles(join(ROOT, d)));
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    const from = relative(ROOT, file);
    for (const specifier of runtimeImports(readFileSync(file, 'utf8'), file)) {
      if (isBuiltin(specifier)) continue;
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(file), specifier);
        const top = relative(ROOT, target).split('/')[0] ?? '';
        if (!SHIPPED.includes(top))
          findings.push({ from, specifier, problem: `reaches ${top}/, which does not ship` });
        else if (!existsSync(target)) findings.push({ from, specifier, problem: 'does not exist' });
        else queue.push(target);
        continue;
      }
      const name = packageName(specifier);
      packages.add(name);
      if (name in pkg.devDependencies) findings.push({ from, specifier, problem: 'is a devDependency' });
      else if (!(name in pkg.dependencies))
        findings.push({ from, specifier, problem: 'is not a dependency' });
    }
  }
  return { files, packages, findings };
}

describe('shipped code and its dependencies', () => {
  const { files, packages, findings } = walk();

  it('imports no devDependency, nothing undeclared and nothing under test/', () => {
    assert.ok(files.size > 50, `walked ${files.size} files`);
    assert.deepEqual(
      findings.map(f => `${f.from}: '${f.specifier}' ${f.problem}`),
      [],
    );
  });

  it('uses every runtime dependency it declares', () => {
    const unused = Object.keys(pkg.dependencies).filter(d => !packages.has(d));
    assert.deepEqual(
      unused,
      [],
      'runtime dependencies nothing shipped imports (move them to devDependencies)',
    );
  });

  it('reads the imports a file makes at run time and leaves type-only ones out', () => {
    const source = [
      "import ajv from 'ajv';",
      "import type { X } from 'dev-types';",
      "import { type Y } from 'also-types';",
      "export { z } from '../test/support/z.ts';",
      "export type { W } from 'more-types';",
      "const s3 = await import('@aws-sdk/client-s3');",
    ].join('\n');
    assert.deepEqual(runtimeImports(source).sort(), ['../test/support/z.ts', '@aws-sdk/client-s3', 'ajv']);
  });
});
