// The library's structure, checked over its import graph: shared/ has no import circle (between
// files, or between its folders), no import that runs up the layer table below, and never imports a
// program (functions/, cli/, standalone/, agent/) or a test. TypeScript itself reads the imports
// (type-only, re-exports and dynamic import() included), so no second parser of ours is involved.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '../..');

// Lowest first. A file may import files of its own layer or of a lower one, never of a higher one.
// Every file under shared/ must match one entry (the longest prefix wins), so a new folder has to be
// placed here on purpose.
const LAYERS: readonly (readonly [layer: string, prefixes: readonly string[]])[] = [
  // words and figures everything shares: labels, names, constants, quantities, conditions, logging
  [
    'base',
    [
      'shared/names.ts',
      'shared/quantity.ts',
      'shared/conditions.ts',
      'shared/log.ts',
      'shared/log-context.ts',
    ],
  ],
  // the CRD types and their defaults
  ['api', ['shared/api/']],
  // which certificates a cluster's TLS needs, in which Secrets, and how they are issued and read
  ['tls', ['shared/tls/']],
  // clients of the systems we talk to
  ['clients', ['shared/k8s/', 'shared/etcd/', 'shared/s3/']],
  // what we do with those clients: snapshot files (save, scan, verify), the restore layout on a volume
  ['files', ['shared/snapshot-file/', 'shared/restore/']],
  // the Kubernetes objects we want (pure)
  ['builders', ['shared/builders/']],
  // the decisions: observed state -> one step (pure)
  ['plan', ['shared/plan/']],
  // one function invocation's context: clients, configuration, metrics, the HTTP server
  ['runtime', ['shared/runtime/']],
  // CloudEvents in, the object to reconcile out
  ['events', ['shared/events/']],
  // observe, plan, act: the I/O around plan
  ['reconcile', ['shared/reconcile/']],
];

// Folders whose files shared/ must never import.
const PROGRAMS = ['functions/', 'cli/', 'standalone/', 'agent/', 'test/', 'scripts/', 'stryker/'];

type Graph = Map<string, string[]>;

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) tsFiles(path, out);
    else if (path.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Every file under shared/ with the repository-relative files it imports. */
function sharedGraph(): Graph {
  const graph: Graph = new Map();
  for (const file of tsFiles(join(ROOT, 'shared'))) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets: string[] = [];
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolve(dirname(file), fileName);
      assert.ok(existsSync(target), `${relative(ROOT, file)} imports ${fileName}, which is not a file`);
      targets.push(relative(ROOT, target));
    }
    graph.set(relative(ROOT, file), targets);
  }
  return graph;
}

function layerOf(file: string): number {
  let best = -1;
  let length = 0;
  LAYERS.forEach(([, prefixes], index) => {
    for (const prefix of prefixes) {
      if (file.startsWith(prefix) && prefix.length > length) [best, length] = [index, prefix.length];
    }
  });
  return best;
}

/**
 * The folder a file belongs to for the folder-circle check: shared/<folder>. Inside plan/ the concern
 * folders may import each other (cluster/status.ts reads each concern's condition, and a concern asks
 * for the status it writes); there, files may not circle and each folder's types.ts imports no
 * concern file (checked below).
 */
function folderOf(file: string): string {
  const parts = file.split('/');
  return parts.length > 2 ? parts.slice(0, 2).join('/') : dirname(file);
}

/** A plan concern's types.ts: the vocabulary its deciders share, importing only other types files. */
const isPlanTypes = (file: string): boolean => /^shared\/plan\/[^/]+\/types\.ts$/.test(file);

/**
 * Strongly connected components of more than one node (Tarjan), each shown as one path round its
 * circle, followed by the rest of the component when it holds more than that path.
 */
function circles(graph: Graph): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component = new Set<string>();
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.add(member);
    } while (member !== node);
    if (component.size < 2 && !graph.get(node)!.includes(node)) return;
    const path = pathRound(graph, component);
    const rest = [...component].filter(member => !path.includes(member)).sort();
    found.push(path.join(' -> ') + (rest.length > 0 ? ` (with ${rest.join(', ')})` : ''));
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found;
}

/** A shortest path from the component's first node back to itself, to show in a failure. */
function pathRound(graph: Graph, component: Set<string>): string[] {
  const start = [...component].sort()[0];
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of graph.get(node) ?? []) {
      if (!component.has(next) || cameFrom.has(next)) continue;
      cameFrom.set(next, node);
      if (next === start) queue.length = 0;
      else queue.push(next);
    }
  }
  const path = [start];
  for (let node = cameFrom.get(start)!; node !== start; node = cameFrom.get(node)!) path.unshift(node);
  return [start, ...path];
}

function folderGraph(graph: Graph): Graph {
  const folders: Graph = new Map();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    const edges = folders.get(from) ?? [];
    for (const to of targets.map(folderOf)) if (to !== from && !edges.includes(to)) edges.push(to);
    folders.set(from, edges);
  }
  return folders;
}

function violations(graph: Graph): string[] {
  const found: string[] = [];
  for (const circle of circles(graph)) found.push(`file circle: ${circle}`);
  for (const circle of circles(folderGraph(graph))) found.push(`folder circle: ${circle}`);
  for (const [file, targets] of graph) {
    for (const target of targets) {
      if (PROGRAMS.some(program => target.startsWith(program)))
        found.push(`imports a program: ${file} -> ${target}`);
      else if (isPlanTypes(file) && target.startsWith('shared/plan/') && !isPlanTypes(target)) {
        found.push(`types file imports a concern file: ${file} -> ${target}`);
      } else if (layerOf(target) > layerOf(file)) {
        found.push(
          `upward: ${file} (${LAYERS[layerOf(file)][0]}) -> ${target} (${LAYERS[layerOf(target)][0]})`,
        );
      }
    }
  }
  return found.sort();
}

describe('the import graph of shared/', () => {
  const graph = sharedGraph();

  it('is read whole: files, edges, and every file placed in the layer table', () => {
    assert.ok(graph.size > 150, `only ${graph.size} files under shared/`);
    const edges = [...graph.values()].reduce((sum, targets) => sum + targets.length, 0);
    assert.ok(edges > 500, `only ${edges} imports under shared/`);
    const unplaced = [...graph.keys()].filter(file => layerOf(file) < 0);
    assert.deepEqual(unplaced, [], 'files under shared/ that no layer names');
  });

  it('has no circle, no upward import and no import of a program', () => {
    assert.deepEqual(violations(graph), [], 'structure violations');
  });

  it('finds a circle and an upward import when one is there', () => {
    const made: Graph = new Map([
      ['shared/plan/a.ts', ['shared/plan/b.ts']],
      ['shared/plan/b.ts', ['shared/plan/a.ts', 'shared/reconcile/c.ts']],
      ['shared/reconcile/c.ts', ['functions/serve.ts']],
      ['shared/plan/d/types.ts', ['shared/plan/e/types.ts', 'shared/plan/e/decide.ts']],
    ]);
    assert.deepEqual(violations(made), [
      'file circle: shared/plan/a.ts -> shared/plan/b.ts -> shared/plan/a.ts',
      'imports a program: shared/reconcile/c.ts -> functions/serve.ts',
      'types file imports a concern file: shared/plan/d/types.ts -> shared/plan/e/decide.ts',
      'upward: shared/plan/b.ts (plan) -> shared/reconcile/c.ts (reconcile)',
    ]);
  });
});
