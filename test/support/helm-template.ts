// A renderer for the small subset of Helm's template language that charts/etcdfn uses, so the chart
// can be rendered and checked in unit tests on machines without the helm binary. It follows Go's
// text/template and Helm's semantics for exactly this subset and throws on anything else, so a
// template that strays from the subset fails the tests instead of being rendered wrongly:
//   text with {{ }} actions, {{- / -}} trim markers, {{/* comments */}};
//   {{ define "name" }} (top level only), {{ if }} / {{ else if }} / {{ else }} / {{ end }},
//   {{ with }}, {{ range }} over a list or a map (values in key order), with {{ else }};
//   operands: . .a.b $ $.a.b "string" `raw` numbers true false; pipelines with |;
//   functions: include, toYaml, nindent, indent, quote, default, eq;
//   the data Helm passes: .Values, .Release.{Name,Namespace,Service,IsInstall,IsUpgrade,Revision},
//   .Chart.<Chart.yaml field, capitalised>, .Template.{Name,BasePath}.
// Not supported (throws): variables ($x := ...), parentheses, template/block/break/continue, every
// other function (tpl, lookup, required, printf, ...), .Capabilities, .Files.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { parse as parseYaml, parseAllDocuments, stringify } from 'yaml';

// ---------------------------------------------------------------------------------------------
// Lexing: text and actions

type Token =
  | { kind: 'field'; base: 'dot' | 'root'; path: string[] }
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'bool'; value: boolean }
  | { kind: 'ident'; name: string }
  | { kind: 'pipe' };

interface RawAction {
  words: Token[];
  line: number;
}

type Piece = { kind: 'text'; text: string } | { kind: 'action'; action: RawAction };

const WS = /[ \t\r\n]/;

export class TemplateError extends Error {}

function fail(where: string, line: number, message: string): never {
  throw new TemplateError(`${where}:${line}: ${message}`);
}

/** Splits a template into text and actions, applying trim markers and dropping comments. */
function lex(source: string, where: string): Piece[] {
  const pieces: Piece[] = [];
  let pos = 0;
  let trimNext = false;
  const lineAt = (at: number) => source.slice(0, at).split('\n').length;
  while (pos < source.length) {
    const open = source.indexOf('{{', pos);
    let text = source.slice(pos, open === -1 ? source.length : open);
    if (trimNext) text = text.replace(/^[ \t\r\n]+/, '');
    if (open === -1) {
      pieces.push({ kind: 'text', text });
      break;
    }
    let start = open + 2;
    if (source[start] === '-') {
      if (!WS.test(source[start + 1] ?? '')) fail(where, lineAt(open), 'a trim marker must be "{{- "');
      text = text.replace(/[ \t\r\n]+$/, '');
      start += 2;
    }
    pieces.push({ kind: 'text', text });
    const { words, end, trimRight } = lexAction(source, start, where, lineAt(open));
    if (words !== null) pieces.push({ kind: 'action', action: { words, line: lineAt(open) } });
    trimNext = trimRight;
    pos = end;
  }
  return pieces.filter(p => p.kind !== 'text' || p.text !== '');
}

/** Reads one action's words from `start` to its closing braces; null words for a comment. */
function lexAction(
  source: string,
  start: number,
  where: string,
  line: number,
): { words: Token[] | null; end: number; trimRight: boolean } {
  let pos = start;
  while (WS.test(source[pos] ?? '')) pos++;
  if (source.startsWith('/*', pos)) {
    const close = source.indexOf('*/', pos + 2);
    if (close === -1) fail(where, line, 'unclosed comment');
    return closeAction(source, close + 2, where, line, null);
  }
  const words: Token[] = [];
  for (;;) {
    while (WS.test(source[pos] ?? '')) pos++;
    if (pos >= source.length) fail(where, line, 'unclosed action');
    if (source.startsWith('}}', pos) || source.startsWith('-}}', pos)) {
      return closeAction(source, pos, where, line, words);
    }
    const [token, next] = lexWord(source, pos, where, line);
    words.push(token);
    pos = next;
  }
}

function closeAction(
  source: string,
  start: number,
  where: string,
  line: number,
  words: Token[] | null,
): { words: Token[] | null; end: number; trimRight: boolean } {
  let pos = start;
  while (WS.test(source[pos] ?? '')) pos++;
  if (source.startsWith('-}}', pos)) {
    // Go reads "x-}}" (no space) as part of the action, not as a trim marker; refuse it.
    if (!WS.test(source[pos - 1] ?? '')) fail(where, line, 'a trim marker must be " -}}"');
    return { words, end: pos + 3, trimRight: true };
  }
  if (source.startsWith('}}', pos)) return { words, end: pos + 2, trimRight: false };
  return fail(where, line, 'expected "}}"');
}

const FIELD_CHAIN = /^(?:\.[A-Za-z_][A-Za-z0-9_]*)+/;

function lexWord(source: string, pos: number, where: string, line: number): [Token, number] {
  const rest = source.slice(pos);
  const c = rest[0] ?? '';
  if (c === '|') return [{ kind: 'pipe' }, pos + 1];
  if (c === '"') return lexString(source, pos, where, line);
  if (c === '`') {
    const close = source.indexOf('`', pos + 1);
    if (close === -1) fail(where, line, 'unclosed raw string');
    return [{ kind: 'string', value: source.slice(pos + 1, close) }, close + 1];
  }
  if (c === '.') {
    const chain = FIELD_CHAIN.exec(rest)?.[0];
    if (chain) return [{ kind: 'field', base: 'dot', path: chain.slice(1).split('.') }, pos + chain.length];
    if (rest.length === 1 || /^\.[\s}|]/.test(rest) || rest.startsWith('.-}}')) {
      return [{ kind: 'field', base: 'dot', path: [] }, pos + 1];
    }
  }
  if (c === '$') {
    const chain = FIELD_CHAIN.exec(rest.slice(1))?.[0] ?? '';
    const after = rest[1 + chain.length] ?? '';
    if (/[A-Za-z0-9_]/.test(after)) fail(where, line, 'template variables ($name) are not supported');
    const path = chain === '' ? [] : chain.slice(1).split('.');
    return [{ kind: 'field', base: 'root', path }, pos + 1 + chain.length];
  }
  const number = /^-?\d+(\.\d+)?(?=[\s}|])/.exec(rest)?.[0];
  if (number) return [{ kind: 'number', value: Number(number) }, pos + number.length];
  const ident = /^[A-Za-z_][A-Za-z0-9_]*(?=[\s}|]|-}})/.exec(rest)?.[0];
  if (ident === 'true' || ident === 'false')
    return [{ kind: 'bool', value: ident === 'true' }, pos + ident.length];
  if (ident) return [{ kind: 'ident', name: ident }, pos + ident.length];
  return fail(where, line, `unsupported syntax at "${rest.slice(0, 20)}"`);
}

function lexString(source: string, pos: number, where: string, line: number): [Token, number] {
  let value = '';
  const escapes: Record<string, string> = { n: '\n', t: '\t', '"': '"', '\\': '\\' };
  for (let i = pos + 1; i < source.length; i++) {
    const ch = source[i] ?? '';
    if (ch === '"') return [{ kind: 'string', value }, i + 1];
    if (ch === '\n') break;
    if (ch === '\\') {
      const e = escapes[source[i + 1] ?? ''];
      if (e === undefined) fail(where, line, `unsupported escape \\${source[i + 1]}`);
      value += e;
      i++;
    } else value += ch;
  }
  return fail(where, line, 'unclosed string');
}

// ---------------------------------------------------------------------------------------------
// Parsing: a tree of nodes

type Operand = Exclude<Token, { kind: 'pipe' } | { kind: 'ident' }>;
type Command = { fn: string; args: Operand[] } | { fn: null; args: [Operand] };
type Pipeline = { commands: Command[]; line: number };

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'output'; pipe: Pipeline }
  | { kind: 'if' | 'with' | 'range'; pipe: Pipeline; then: Node[]; else: Node[] };

export const FUNCTIONS = ['include', 'toYaml', 'nindent', 'indent', 'quote', 'default', 'eq'] as const;
const KEYWORDS = new Set(['if', 'else', 'end', 'with', 'range', 'define']);
const REFUSED = new Set(['template', 'block', 'break', 'continue', 'nil']);

interface ParsedFile {
  body: Node[];
  defines: Map<string, Node[]>;
}

function parseTemplate(source: string, where: string): ParsedFile {
  const pieces = lex(source, where);
  const defines = new Map<string, Node[]>();
  let i = 0;

  /** Parses nodes until an {{ else }} or {{ end }} (returned) or the end of the file (null). */
  const parseList = (nested: boolean): { nodes: Node[]; stop: RawAction | null } => {
    const nodes: Node[] = [];
    while (i < pieces.length) {
      const piece = pieces[i++];
      if (piece.kind === 'text') {
        nodes.push({ kind: 'text', text: piece.text });
        continue;
      }
      const { words, line } = piece.action;
      const head = words[0];
      const keyword = head?.kind === 'ident' && KEYWORDS.has(head.name) ? head.name : null;
      if (head?.kind === 'ident' && REFUSED.has(head.name))
        fail(where, line, `"${head.name}" is not supported`);
      if (keyword === 'end' || keyword === 'else') return { nodes, stop: piece.action };
      if (keyword === 'define') {
        if (nested) fail(where, line, 'define only at the top level');
        const name = words[1];
        if (words.length !== 2 || name?.kind !== 'string') fail(where, line, 'expected {{ define "name" }}');
        const body = parseList(true);
        if (!body.stop || body.stop.words.length !== 1 || identName(body.stop.words[0]) !== 'end') {
          fail(where, line, `define "${name.value}" has no {{ end }}`);
        }
        if (defines.has(name.value)) fail(where, line, `"${name.value}" is defined twice`);
        defines.set(name.value, body.nodes);
        continue;
      }
      if (keyword === 'if' || keyword === 'with' || keyword === 'range') {
        nodes.push(parseBlock(keyword, words.slice(1), line));
        continue;
      }
      nodes.push({ kind: 'output', pipe: parsePipeline(words, where, line) });
    }
    return { nodes, stop: null };
  };

  const parseBlock = (keyword: 'if' | 'with' | 'range', words: Token[], line: number): Node => {
    const pipe = parsePipeline(words, where, line);
    const then = parseList(true);
    if (!then.stop) fail(where, line, `{{ ${keyword} }} has no {{ end }}`);
    const stopWords = then.stop.words;
    if (identName(stopWords[0]) === 'end') {
      if (stopWords.length !== 1) fail(where, then.stop.line, 'unexpected words after end');
      return { kind: keyword, pipe, then: then.nodes, else: [] };
    }
    // {{ else }} or {{ else if ... }} (an if nested in the else branch, closed by the same end).
    if (stopWords.length > 1) {
      if (identName(stopWords[1]) !== 'if' || keyword !== 'if') {
        fail(where, then.stop.line, 'only {{ else if }} may follow else');
      }
      const nested = parseBlock('if', stopWords.slice(2), then.stop.line);
      return { kind: keyword, pipe, then: then.nodes, else: [nested] };
    }
    const otherwise = parseList(true);
    if (
      !otherwise.stop ||
      identName(otherwise.stop.words[0]) !== 'end' ||
      otherwise.stop.words.length !== 1
    ) {
      fail(where, line, `{{ ${keyword} }} ... {{ else }} has no {{ end }}`);
    }
    return { kind: keyword, pipe, then: then.nodes, else: otherwise.nodes };
  };

  const top = parseList(false);
  if (top.stop) fail(where, top.stop.line, `unexpected {{ ${identName(top.stop.words[0])} }}`);
  return { body: top.nodes, defines };
}

function identName(token: Token | undefined): string | undefined {
  return token?.kind === 'ident' ? token.name : undefined;
}

function parsePipeline(words: Token[], where: string, line: number): Pipeline {
  if (words.length === 0) fail(where, line, 'empty action');
  const commands: Command[] = [];
  let current: Exclude<Token, { kind: 'pipe' }>[] = [];
  const flush = () => {
    const [head, ...rest] = current;
    if (!head) fail(where, line, 'empty command in a pipeline');
    if (head.kind === 'ident') {
      if (!(FUNCTIONS as readonly string[]).includes(head.name)) {
        fail(where, line, `function "${head.name}" is not supported`);
      }
      const args = rest.filter((t): t is Operand => t.kind !== 'ident');
      if (args.length !== rest.length) fail(where, line, 'a function call must not take a function');
      commands.push({ fn: head.name, args });
    } else {
      if (rest.length > 0) fail(where, line, 'only a function takes arguments');
      commands.push({ fn: null, args: [head] });
    }
    current = [];
  };
  for (const word of words) {
    if (word.kind === 'pipe') flush();
    else current.push(word);
  }
  flush();
  return { commands, line };
}

// ---------------------------------------------------------------------------------------------
// Execution

type Scope = { dot: unknown; root: unknown };

class Engine {
  private readonly defines = new Map<string, { nodes: Node[]; where: string }>();
  private depth = 0;

  addDefines(file: ParsedFile, where: string): void {
    for (const [name, nodes] of file.defines) {
      if (this.defines.has(name)) throw new TemplateError(`${where}: "${name}" is already defined`);
      this.defines.set(name, { nodes, where });
    }
  }

  render(nodes: Node[], data: unknown, where: string): string {
    return this.walk(nodes, { dot: data, root: data }, where);
  }

  private walk(nodes: Node[], scope: Scope, where: string): string {
    let out = '';
    for (const node of nodes) {
      if (node.kind === 'text') out += node.text;
      else if (node.kind === 'output')
        out += printValue(this.pipeline(node.pipe, scope, where), where, node.pipe.line);
      else out += this.block(node, scope, where);
    }
    return out;
  }

  private block(node: Extract<Node, { pipe: Pipeline; then: Node[] }>, scope: Scope, where: string): string {
    const value = this.pipeline(node.pipe, scope, where);
    if (node.kind === 'if') return this.walk(truth(value) ? node.then : node.else, scope, where);
    if (node.kind === 'with') {
      return truth(value)
        ? this.walk(node.then, { ...scope, dot: value }, where)
        : this.walk(node.else, scope, where);
    }
    let items: unknown[];
    if (value === undefined || value === null) items = [];
    else if (Array.isArray(value)) items = value;
    else if (isMap(value))
      items = Object.keys(value)
        .sort()
        .map(k => value[k]);
    else return fail(where, node.pipe.line, `range can't iterate over a ${typeof value}`);
    if (items.length === 0) return this.walk(node.else, scope, where);
    return items.map(item => this.walk(node.then, { ...scope, dot: item }, where)).join('');
  }

  private pipeline(pipe: Pipeline, scope: Scope, where: string): unknown {
    let piped: { value: unknown } | null = null;
    for (const command of pipe.commands) {
      const args = command.args.map(a => operand(a, scope, where, pipe.line));
      if (command.fn === null) {
        if (piped) fail(where, pipe.line, 'cannot pipe into a non-function');
        piped = { value: args[0] };
      } else {
        if (piped) args.push(piped.value);
        piped = { value: this.call(command.fn, args, where, pipe.line) };
      }
    }
    return piped?.value;
  }

  private call(fn: string, args: unknown[], where: string, line: number): unknown {
    const arity: Record<string, number> = { include: 2, toYaml: 1, nindent: 2, indent: 2, default: 2, eq: 2 };
    const wanted = arity[fn];
    if (wanted !== undefined && args.length !== wanted) {
      fail(where, line, `${fn} takes ${wanted} arguments, got ${args.length}`);
    }
    switch (fn) {
      case 'include':
        return this.include(args[0], args[1], where, line);
      case 'toYaml':
        return toYaml(args[0]);
      case 'nindent':
        return '\n' + indent(args[0], args[1], where, line);
      case 'indent':
        return indent(args[0], args[1], where, line);
      case 'quote':
        return args
          .filter(a => a !== undefined && a !== null)
          .map(a => JSON.stringify(scalarString(a, where, line)))
          .join(' ');
      case 'default':
        return empty(args[1]) ? args[0] : args[1];
      case 'eq':
        return equal(args[0], args[1], where, line);
      default:
        return fail(where, line, `function "${fn}" is not supported`);
    }
  }

  private include(name: unknown, data: unknown, where: string, line: number): string {
    if (typeof name !== 'string') fail(where, line, 'include takes a template name');
    const define = this.defines.get(name);
    if (!define) fail(where, line, `no template "${name}"`);
    if (++this.depth > 100) fail(where, line, `include "${name}" recurses too deeply`);
    try {
      return this.render(define.nodes, data, define.where);
    } finally {
      this.depth--;
    }
  }
}

function operand(token: Operand, scope: Scope, where: string, line: number): unknown {
  if (token.kind !== 'field') return token.value;
  let value: unknown = token.base === 'dot' ? scope.dot : scope.root;
  for (const [i, key] of token.path.entries()) {
    if (value === undefined || value === null) {
      fail(where, line, `nil pointer evaluating .${token.path.slice(0, i).join('.')}.${key}`);
    }
    if (!isMap(value)) fail(where, line, `can't evaluate field ${key} in a ${typeof value}`);
    value = value[key];
  }
  return value;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Go's template truth: false, 0, nil and empty strings, lists and maps are false. */
function truth(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return value !== '';
  if (Array.isArray(value)) return value.length > 0;
  if (isMap(value)) return Object.keys(value).length > 0;
  return true;
}

/** Sprig's empty (what default replaces). */
const empty = (value: unknown): boolean => !truth(value);

function scalarString(value: unknown, where: string, line: number): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return fail(where, line, `cannot print a ${Array.isArray(value) ? 'list' : 'map'} (use toYaml)`);
}

/** What {{ value }} prints; Helm turns a missing value ("<no value>") into nothing. */
function printValue(value: unknown, where: string, line: number): string {
  if (value === undefined || value === null) return '';
  return scalarString(value, where, line);
}

function equal(a: unknown, b: unknown, where: string, line: number): boolean {
  const scalar = (v: unknown) => ['string', 'number', 'boolean'].includes(typeof v);
  if (!scalar(a) || !scalar(b) || typeof a !== typeof b) {
    fail(where, line, `eq: incompatible types for comparison (${typeof a}, ${typeof b})`);
  }
  return a === b;
}

function indent(spaces: unknown, text: unknown, where: string, line: number): string {
  if (typeof spaces !== 'number' || !Number.isInteger(spaces))
    fail(where, line, 'indent takes a number of spaces');
  const pad = ' '.repeat(spaces);
  return pad + scalarString(text ?? '', where, line).replace(/\n/g, '\n' + pad);
}

/** Helm's toYaml: keys in order, no trailing newline; null for nothing. */
export function toYaml(value: unknown): string {
  if (value === undefined) return 'null';
  return stringify(value, { sortMapEntries: true, lineWidth: 0 }).replace(/\n$/, '');
}

// ---------------------------------------------------------------------------------------------
// Charts

export interface Chart {
  dir: string;
  metadata: Record<string, unknown>;
  values: Record<string, unknown>;
  /** templates/ files by path relative to the chart (templates/x.yaml), in name order. */
  templates: Map<string, string>;
}

export interface RenderOptions {
  releaseName?: string;
  namespace?: string;
  /** Like `-f values.yaml` / `--set`: deep-merged over the chart's values.yaml. */
  values?: Record<string, unknown>;
  isUpgrade?: boolean;
}

export interface Manifest {
  /** The template file it came from. */
  source: string;
  text: string;
  object: Record<string, unknown>;
}

export interface Rendered {
  /** Rendered text of each template that Helm would send (not partials, not NOTES.txt). */
  files: Map<string, string>;
  manifests: Manifest[];
  notes: string;
  values: Record<string, unknown>;
}

function listFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap(name => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? listFiles(path) : [path];
    });
}

export function loadChart(dir: string): Chart {
  const metadata = parseYaml(readFileSync(join(dir, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
  const values = (parseYaml(readFileSync(join(dir, 'values.yaml'), 'utf8')) ?? {}) as Record<string, unknown>;
  const templates = new Map<string, string>();
  for (const file of listFiles(join(dir, 'templates'))) {
    templates.set(relative(dir, file), readFileSync(file, 'utf8'));
  }
  return { dir, metadata, values, templates };
}

/** Helm's coalescing of user values over chart values: maps merge, anything else replaces, null deletes. */
export function mergeValues(
  base: Record<string, unknown>,
  override: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = structuredClone(base);
  for (const [key, value] of Object.entries(override)) {
    const current = out[key];
    if (value === null) delete out[key];
    else if (isMap(value) && isMap(current)) out[key] = mergeValues(current, value);
    else out[key] = structuredClone(value);
  }
  return out;
}

/** Chart.yaml as .Chart: Go field names (name → Name, apiVersion → APIVersion). */
function chartObject(metadata: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata)) {
    const name = key === 'apiVersion' ? 'APIVersion' : key[0].toUpperCase() + key.slice(1);
    out[name] = value;
  }
  return out;
}

/** Helm's releaseutil.SplitManifests separator. */
const DOCUMENT_SEPARATOR = /(?:^|\s*\n)---\s*/;

export function renderChart(chart: Chart, options: RenderOptions = {}): Rendered {
  const values = mergeValues(chart.values, options.values ?? {});
  const engine = new Engine();
  const parsed = new Map<string, ParsedFile>();
  for (const [path, source] of chart.templates) {
    const file = parseTemplate(source, path);
    engine.addDefines(file, path);
    parsed.set(path, file);
  }
  const chartName = String(chart.metadata.name);
  const data = (path: string) => ({
    Values: values,
    Release: {
      Name: options.releaseName ?? 'etcdfn',
      Namespace: options.namespace ?? 'default',
      Service: 'Helm',
      IsInstall: !options.isUpgrade,
      IsUpgrade: options.isUpgrade ?? false,
      Revision: options.isUpgrade ? 2 : 1,
    },
    Chart: chartObject(chart.metadata),
    Template: { Name: `${chartName}/${path}`, BasePath: `${chartName}/templates` },
  });
  const files = new Map<string, string>();
  let notes = '';
  const manifests: Manifest[] = [];
  for (const [path, file] of parsed) {
    if (basename(path).startsWith('_')) continue;
    const text = engine.render(file.body, data(path), path);
    if (basename(path) === 'NOTES.txt') {
      notes = text;
      continue;
    }
    files.set(path, text);
    manifests.push(...splitManifests(text, path));
  }
  return { files, manifests, notes, values };
}

/** Splits a rendered file into documents as Helm does; every document must be one YAML object. */
export function splitManifests(text: string, source: string): Manifest[] {
  return text
    .split(DOCUMENT_SEPARATOR)
    .filter(doc => doc.trim() !== '')
    .map(doc => {
      const parsed = parseAllDocuments(doc);
      const docs = Array.isArray(parsed) ? parsed : [];
      if (docs.length > 1) throw new TemplateError(`${source}: expected one YAML document, got:\n${doc}`);
      const first = docs[0];
      if (!first) throw new TemplateError(`${source}: a document without apiVersion and kind:\n${doc}`);
      if (first.errors.length > 0 || first.warnings.length > 0) {
        throw new TemplateError(`${source}: ${[...first.errors, ...first.warnings][0].message}\n${doc}`);
      }
      const object: unknown = first.toJS();
      if (!isMap(object) || typeof object.kind !== 'string' || typeof object.apiVersion !== 'string') {
        throw new TemplateError(`${source}: a document without apiVersion and kind:\n${doc}`);
      }
      return { source, text: doc, object };
    });
}

/** Renders a single template source against data (for the renderer's own tests). */
export function renderString(source: string, data: unknown, partials: Record<string, string> = {}): string {
  const engine = new Engine();
  for (const [name, text] of Object.entries(partials)) engine.addDefines(parseTemplate(text, name), name);
  const file = parseTemplate(source, 'template');
  engine.addDefines(file, 'template');
  return engine.render(file.body, data, 'template');
}
