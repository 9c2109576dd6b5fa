// The CRDs of crds/ as data: their types, the schema of a version and the x-kubernetes-validations
// rules in it, with where each sits. Nothing here evaluates a rule: the real kube-apiserver does
// (test/integration/crd-rules.test.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/** One entry of x-kubernetes-validations. */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** The parts of a structural OpenAPI v3 schema the tests read. */
export interface OpenApiSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  description?: string;
  properties?: Record<string, OpenApiSchema>;
  additionalProperties?: OpenApiSchema | boolean;
  items?: OpenApiSchema;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  pattern?: string;
  anyOf?: OpenApiSchema[];
  'x-kubernetes-validations'?: ValidationRule[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  [keyword: string]: unknown;
}

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
  /** uses oldSelf: Kubernetes runs it on updates only */
  transition: boolean;
}

export const CRDS_DIR = fileURLToPath(new URL('../../crds/', import.meta.url));

/** Every CRD in crds/ (or `dir`), in file-name order. */
export function loadCrds(dir: string = CRDS_DIR): Crd[] {
  return readdirSync(dir)
    .filter(name => name.endsWith('.yaml') || name.endsWith('.yml'))
    .sort()
    .map(name => parse(readFileSync(join(dir, name), 'utf8')) as Crd);
}

export function crdSchema(crd: Crd, version: string): OpenApiSchema {
  const found = crd.spec.versions.find(v => v.name === version);
  if (!found) throw new Error(`${crd.metadata.name} has no version ${version}`);
  return found.schema.openAPIV3Schema;
}

/** Whether a rule names the identifier oldSelf (outside string literals). */
export function isTransitionRule(rule: string): boolean {
  return /\boldSelf\b/.test(rule.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, "''"));
}

/** Every x-kubernetes-validations entry in a schema, with its path. */
export function collectRules(schema: OpenApiSchema, path = ''): RuleLocation[] {
  const found: RuleLocation[] = (schema['x-kubernetes-validations'] ?? []).map((rule, index) => ({
    path,
    index,
    rule,
    transition: isTransitionRule(rule.rule),
  }));
  for (const [key, child] of Object.entries(schema.properties ?? {}))
    found.push(...collectRules(child, `${path}.${key}`));
  if (schema.items) found.push(...collectRules(schema.items, `${path}[*]`));
  if (typeof schema.additionalProperties === 'object')
    found.push(...collectRules(schema.additionalProperties, `${path}[*]`));
  return found;
}

/** A copy of a schema (or any part of a CRD) without its x-kubernetes-validations. */
export function withoutRules<T>(value: T): T {
  if (Array.isArray(value)) return value.map(v => withoutRules(v as unknown)) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== 'x-kubernetes-validations')
      .map(([k, v]) => [k, withoutRules(v as unknown)]),
  ) as T;
}
