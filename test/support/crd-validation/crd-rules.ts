// Runs a CRD's x-kubernetes-validations rules over an object the way kube-apiserver does: each rule
// at every place its schema node has a value, transition rules only on update and only where the
// old object has a value at the same place, and (as since Kubernetes 1.30) a failing rule ignored
// when the value it looks at is unchanged by the update ("ratcheting").
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { CompiledRule } from './cel.ts';
import { compileRule, evaluateMessageExpression, toCelValue } from './cel.ts';
import type { OpenApiSchema, ValidationRule } from './schema.ts';

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema: { openAPIV3Schema: OpenApiSchema };
  subresources?: {
    status?: Record<string, never>;
    scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  };
  additionalPrinterColumns?: {
    name: string;
    type: string;
    jsonPath: string;
    description?: string;
    priority?: number;
  }[];
}

export interface Crd {
  apiVersion: string;
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames?: string[];
      categories?: string[];
    };
    versions: CrdVersion[];
  };
}

/** A rule and where it sits in the schema: `.spec.storage.size`; `[*]` stands for list items and map values. */
export interface RuleLocation {
  path: string;
  index: number;
  rule: ValidationRule;
  transition: boolean;
}

export interface FieldError {
  /** Where the error is reported, e.g. `.spec` or `.spec.storage.size` (rule fieldPath appended). */
  path: string;
  message: string;
  rule: string;
  reason: NonNullable<ValidationRule['reason']>;
  /** Set when the rule could not be evaluated (as opposed to evaluating to false). */
  error?: string;
}

export interface ValidateOptions {
  /** Ignore a failing non-transition rule whose value the update left unchanged. Default true. */
  ratcheting?: boolean;
}

export const CRDS_DIR = fileURLToPath(new URL('../../../crds/', import.meta.url));

export function loadCrd(file: string): Crd {
  return parse(readFileSync(file, 'utf8')) as Crd;
}

/** Every CRD in crds/ (or `dir`), in file-name order. */
export function loadCrds(dir: string = CRDS_DIR): Crd[] {
  return readdirSync(dir)
    .filter(name => name.endsWith('.yaml') || name.endsWith('.yml'))
    .sort()
    .map(name => loadCrd(join(dir, name)));
}

export function crdSchema(crd: Crd, version: string): OpenApiSchema {
  const found = crd.spec.versions.find(v => v.name === version);
  if (!found) throw new Error(`${crd.metadata.name} has no version ${version}`);
  return found.schema.openAPIV3Schema;
}

/** Every x-kubernetes-validations entry in a schema, with its path. */
export function collectRules(schema: OpenApiSchema, path = ''): RuleLocation[] {
  const found: RuleLocation[] = (schema['x-kubernetes-validations'] ?? []).map((rule, index) => ({
    path,
    index,
    rule,
    transition: compileRule(rule.rule).transition,
  }));
  for (const [key, child] of Object.entries(schema.properties ?? {}))
    found.push(...collectRules(child, `${path}.${key}`));
  if (schema.items) found.push(...collectRules(schema.items, `${path}[*]`));
  if (typeof schema.additionalProperties === 'object')
    found.push(...collectRules(schema.additionalProperties, `${path}[*]`));
  return found;
}

/**
 * Field errors from the CEL rules of `crd` at `version` for a create (no oldObj) or an update.
 * Schema validation and defaulting are not done here; run them first, as the API server does.
 */
export function validateObject(
  crd: Crd,
  version: string,
  newObj: unknown,
  oldObj?: unknown,
  options: ValidateOptions = {},
): FieldError[] {
  const { schema, root } = compiled(crd, version);
  const errors: FieldError[] = [];
  if (!root) return errors;
  const old = oldObj === undefined ? undefined : toCelValue(oldObj, schema);
  const ctx: Context = { errors, ratcheting: options.ratcheting ?? true };
  visit(root, toCelValue(newObj, schema), old, '', ctx);
  return errors;
}

// A schema node that has rules itself or somewhere below it; rule-free subtrees are left out.
interface RuleNode {
  rules: { def: ValidationRule; compiled: CompiledRule }[];
  properties: Map<string, RuleNode>;
  declared: Set<string>;
  items?: RuleNode;
  additional?: RuleNode;
  listType?: string;
  listMapKeys?: string[];
}

interface Context {
  errors: FieldError[];
  ratcheting: boolean;
}

const cache = new WeakMap<Crd, Map<string, { schema: OpenApiSchema; root: RuleNode | undefined }>>();

function compiled(crd: Crd, version: string): { schema: OpenApiSchema; root: RuleNode | undefined } {
  let byVersion = cache.get(crd);
  if (!byVersion) cache.set(crd, (byVersion = new Map()));
  let entry = byVersion.get(version);
  if (!entry) {
    const schema = crdSchema(crd, version);
    entry = { schema, root: buildNode(schema) };
    byVersion.set(version, entry);
  }
  return entry;
}

function buildNode(schema: OpenApiSchema): RuleNode | undefined {
  const properties = new Map<string, RuleNode>();
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const node = buildNode(child);
    if (node) properties.set(key, node);
  }
  const items = schema.items && buildNode(schema.items);
  const additional =
    typeof schema.additionalProperties === 'object' ? buildNode(schema.additionalProperties) : undefined;
  const rules = (schema['x-kubernetes-validations'] ?? []).map(def => ({
    def,
    compiled: compileRule(def.rule),
  }));
  if (rules.length === 0 && properties.size === 0 && !items && !additional) return undefined;
  return {
    rules,
    properties,
    declared: new Set(Object.keys(schema.properties ?? {})),
    items,
    additional,
    listType: schema['x-kubernetes-list-type'],
    listMapKeys: schema['x-kubernetes-list-map-keys'],
  };
}

function visit(node: RuleNode, value: unknown, old: unknown, path: string, ctx: Context): void {
  if (value === undefined || value === null) return;
  for (const rule of node.rules) check(rule, value, old, path, ctx);
  if (Array.isArray(value)) {
    const items = node.items;
    if (items)
      value.forEach((item, i) => visit(items, item, correlate(node, item, old), `${path}[${i}]`, ctx));
    return;
  }
  if (!isObject(value)) return;
  const oldMap = isObject(old) ? old : undefined;
  for (const [key, child] of node.properties) visit(child, value[key], oldMap?.[key], `${path}.${key}`, ctx);
  const additional = node.additional;
  if (!additional) return;
  for (const key of Object.keys(value)) {
    if (!node.declared.has(key)) visit(additional, value[key], oldMap?.[key], `${path}[${key}]`, ctx);
  }
}

function check(
  rule: RuleNode['rules'][number],
  value: unknown,
  old: unknown,
  path: string,
  ctx: Context,
): void {
  const { def, compiled } = rule;
  if (compiled.transition && old === undefined) return;
  const result = compiled.evaluateConverted(value, old);
  if (result.ok) return;
  if (ctx.ratcheting && !compiled.transition && old !== undefined && deepEqual(value, old)) return;
  const message = result.error
    ? `${result.error} evaluating rule: ${def.rule}`
    : ((def.messageExpression && evaluateMessageExpression(def.messageExpression, value, old)) ??
      def.message ??
      `failed rule: ${def.rule}`);
  ctx.errors.push({
    path: path + (def.fieldPath ?? ''),
    message,
    rule: def.rule,
    reason: def.reason ?? 'FieldValueInvalid',
    ...(result.error ? { error: result.error } : {}),
  });
}

// The old value of a list item: Kubernetes pairs items only in map lists (by key) and sets (by value).
function correlate(node: RuleNode, item: unknown, old: unknown): unknown {
  if (!Array.isArray(old)) return undefined;
  if (node.listType === 'set') return old.find(o => deepEqual(o, item));
  const keys = node.listMapKeys;
  if (node.listType !== 'map' || !keys || !isObject(item)) return undefined;
  return old.find(o => isObject(o) && keys.every(k => deepEqual(o[k], item[k])));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every(k => k in b && deepEqual(a[k], b[k]));
}
