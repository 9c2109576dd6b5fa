// Structural schemas of custom resources: pruning of unknown fields, defaulting and OpenAPI value
// validation with the API server's messages (apiextensions-apiserver + kube-openapi wording).

import {
  fieldDuplicate,
  fieldInvalid,
  fieldNotSupported,
  fieldRequired,
  fieldTooLong,
  fieldTooMany,
  fieldTypeInvalid,
} from './errors.ts';
import type { FieldError } from './types.ts';
import { clone, deepEqual, isObject } from './util.ts';

export interface Schema {
  type?: string;
  format?: string;
  nullable?: boolean;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  default?: unknown;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  not?: Schema;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  [key: string]: unknown;
}

/** metav1.ObjectMeta fields: everything else under metadata is unknown. */
export const OBJECT_META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

function child(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function pruneMeta(meta: unknown, path: string, unknown: string[]): void {
  if (!isObject(meta)) return;
  for (const key of Object.keys(meta)) {
    if (!OBJECT_META_FIELDS.has(key)) {
      unknown.push(child(path, key));
      delete meta[key];
    }
  }
}

/**
 * Remove fields the schema does not know (and nulls where the schema does not allow them), in place.
 * Returns the paths of the removed unknown fields, for strict field validation.
 */
export function prune(obj: Record<string, unknown>, schema: Schema): string[] {
  const unknown: string[] = [];
  pruneMeta(obj.metadata, 'metadata', unknown);
  pruneObject(obj, schema, '', unknown, true);
  return unknown;
}

function pruneObject(
  obj: Record<string, unknown>,
  schema: Schema,
  path: string,
  unknown: string[],
  isRoot: boolean,
): void {
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = isRoot || schema['x-kubernetes-embedded-resource'] === true;
  const additional = isObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    if (embedded && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) {
      if (key === 'metadata' && !isRoot) pruneMeta(value, child(path, key), unknown);
      continue;
    }
    const sub = schema.properties?.[key] ?? additional;
    if (sub) {
      if (value === null && !sub.nullable && sub.default === undefined) {
        delete obj[key];
        continue;
      }
      pruneValue(value, sub, child(path, key), unknown);
    } else if (!preserve && schema.additionalProperties !== true) {
      unknown.push(child(path, key));
      delete obj[key];
    }
  }
}

function pruneValue(value: unknown, schema: Schema, path: string, unknown: string[]): void {
  if (isObject(value)) {
    if (schema['x-kubernetes-int-or-string']) return;
    const objectLike =
      schema.type === 'object' ||
      schema.properties !== undefined ||
      schema.additionalProperties !== undefined ||
      schema['x-kubernetes-embedded-resource'] === true;
    if (objectLike) pruneObject(value, schema, path, unknown, false);
  } else if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => pruneValue(item, schema.items!, `${path}[${i}]`, unknown));
  }
}

/** Apply schema defaults in place: absent fields (and nulls of non-nullable fields) get the default. */
export function applyDefaults(value: unknown, schema: Schema): void {
  if (isObject(value)) {
    if (schema.properties) {
      for (const [key, sub] of Object.entries(schema.properties)) {
        const cur = value[key];
        if (sub.default !== undefined && (cur === undefined || (cur === null && !sub.nullable))) {
          value[key] = clone(sub.default);
        }
      }
      for (const [key, sub] of Object.entries(schema.properties)) {
        if (value[key] !== undefined) applyDefaults(value[key], sub);
      }
    }
    if (isObject(schema.additionalProperties)) {
      const sub = schema.additionalProperties;
      for (const key of Object.keys(value)) {
        if (!schema.properties?.[key]) applyDefaults(value[key], sub);
      }
    }
  } else if (Array.isArray(value) && schema.items) {
    for (const item of value) applyDefaults(item, schema.items);
  }
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(value: unknown, schema: Schema): boolean {
  if (schema['x-kubernetes-int-or-string']) return typeof value === 'string' || Number.isInteger(value);
  const t = schema.type;
  if (!t) return true;
  const actual = jsonType(value);
  if (t === 'number') return actual === 'number' || actual === 'integer';
  return actual === t;
}

const regexCache = new Map<string, RegExp | null>();

function compilePattern(pattern: string): RegExp | null {
  let re = regexCache.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(pattern, 'u');
    } catch {
      try {
        re = new RegExp(pattern);
      } catch {
        re = null;
      }
    }
    regexCache.set(pattern, re);
  }
  return re;
}

const FORMATS: Record<string, (v: string) => boolean> = {
  'date-time': v => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(v),
  date: v => /^\d{4}-\d{2}-\d{2}$/.test(v),
  uuid: v => /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/.test(v),
  byte: v => /^[A-Za-z0-9+/]*={0,2}$/.test(v) && v.length % 4 === 0,
};

function inBody(path: string): string {
  return `${path || 'body'} in body`;
}

/** Validate a value against a structural schema; returns field errors in the API server's wording. */
export function validateValue(value: unknown, schema: Schema, path: string): FieldError[] {
  const errors: FieldError[] = [];
  validateNode(value, schema, path, errors);
  return errors;
}

function validateNode(value: unknown, schema: Schema, path: string, errors: FieldError[]): void {
  if (value === null && schema.nullable) return;
  if (!typeMatches(value, schema)) {
    const type = schema['x-kubernetes-int-or-string'] ? 'integer,string' : schema.type!;
    const actual = jsonType(value);
    errors.push(fieldTypeInvalid(path, actual, `${inBody(path)} must be of type ${type}: "${actual}"`));
    return;
  }
  if (schema.enum && !schema.enum.some(e => deepEqual(e, value))) {
    const allowed = schema.enum.map(e => (typeof e === 'string' ? e : JSON.stringify(e)));
    errors.push(fieldNotSupported(path, value, allowed));
  }
  if (typeof value === 'number') validateNumber(value, schema, path, errors);
  else if (typeof value === 'string') validateString(value, schema, path, errors);
  else if (Array.isArray(value)) validateArray(value, schema, path, errors);
  else if (isObject(value)) validateObjectNode(value, schema, path, errors);
  validateCombinators(value, schema, path, errors);
}

function validateNumber(value: number, schema: Schema, path: string, errors: FieldError[]): void {
  if (schema.minimum !== undefined) {
    if (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum) {
      const rel = schema.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
      errors.push(fieldInvalid(path, value, `${inBody(path)} should be ${rel} ${schema.minimum}`));
    }
  }
  if (schema.maximum !== undefined) {
    if (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum) {
      const rel = schema.exclusiveMaximum ? 'less than' : 'less than or equal to';
      errors.push(fieldInvalid(path, value, `${inBody(path)} should be ${rel} ${schema.maximum}`));
    }
  }
  if (schema.multipleOf !== undefined && schema.multipleOf > 0) {
    const q = value / schema.multipleOf;
    if (Math.abs(q - Math.round(q)) > 1e-9) {
      errors.push(fieldInvalid(path, value, `${inBody(path)} should be a multiple of ${schema.multipleOf}`));
    }
  }
  if (schema.format === 'int32' && (value > 2147483647 || value < -2147483648)) {
    errors.push(fieldInvalid(path, value, `${inBody(path)} must be of type int32: "${value}"`));
  }
}

function validateString(value: string, schema: Schema, path: string, errors: FieldError[]): void {
  const length = [...value].length;
  if (schema.maxLength !== undefined && length > schema.maxLength)
    errors.push(fieldTooLong(path, schema.maxLength));
  if (schema.minLength !== undefined && length < schema.minLength) {
    errors.push(
      fieldInvalid(path, value, `${inBody(path)} should be at least ${schema.minLength} chars long`),
    );
  }
  if (schema.pattern !== undefined) {
    const re = compilePattern(schema.pattern);
    if (re && !re.test(value)) {
      errors.push(fieldInvalid(path, value, `${inBody(path)} should match '${schema.pattern}'`));
    }
  }
  const check = schema.format ? FORMATS[schema.format] : undefined;
  if (check && !check(value)) {
    errors.push(fieldInvalid(path, value, `${inBody(path)} must be of type ${schema.format}: "${value}"`));
  }
}

function listMapKey(item: unknown, keys: string[]): string {
  return JSON.stringify(keys.map(k => (isObject(item) ? item[k] : undefined)));
}

function validateArray(value: unknown[], schema: Schema, path: string, errors: FieldError[]): void {
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    errors.push(fieldTooMany(path, value.length, schema.maxItems));
  }
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    errors.push(
      fieldInvalid(path, value.length, `${inBody(path)} should have at least ${schema.minItems} items`),
    );
  }
  const listType = schema['x-kubernetes-list-type'];
  if (schema.uniqueItems || listType === 'set') {
    value.forEach((item, i) => {
      if (value.findIndex(other => deepEqual(other, item)) !== i)
        errors.push(fieldDuplicate(`${path}[${i}]`, item));
    });
  } else if (listType === 'map' && schema['x-kubernetes-list-map-keys']) {
    const keys = schema['x-kubernetes-list-map-keys'];
    const seen = new Set<string>();
    value.forEach((item, i) => {
      const k = listMapKey(item, keys);
      if (seen.has(k)) errors.push(fieldDuplicate(`${path}[${i}]`, item));
      seen.add(k);
    });
  }
  if (schema.items) value.forEach((item, i) => validateNode(item, schema.items!, `${path}[${i}]`, errors));
}

function validateObjectNode(
  value: Record<string, unknown>,
  schema: Schema,
  path: string,
  errors: FieldError[],
): void {
  for (const key of schema.required ?? []) {
    if (value[key] === undefined) errors.push(fieldRequired(child(path, key)));
  }
  const count = Object.keys(value).length;
  if (schema.maxProperties !== undefined && count > schema.maxProperties) {
    errors.push(fieldTooMany(path, count, schema.maxProperties));
  }
  if (schema.minProperties !== undefined && count < schema.minProperties) {
    errors.push(
      fieldInvalid(path, count, `${inBody(path)} should have at least ${schema.minProperties} properties`),
    );
  }
  const additional = isObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
  const embedded = schema['x-kubernetes-embedded-resource'] === true;
  for (const [key, sub] of Object.entries(value)) {
    if (sub === undefined) continue;
    if (embedded && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
    const s = schema.properties?.[key] ?? additional;
    if (s) validateNode(sub, s, child(path, key), errors);
  }
  if (embedded && !schema['x-kubernetes-preserve-unknown-fields']) {
    if (typeof value.kind !== 'string' || !value.kind)
      errors.push(fieldRequired(child(path, 'kind'), 'must not be empty'));
    if (typeof value.apiVersion !== 'string' || !value.apiVersion) {
      errors.push(fieldRequired(child(path, 'apiVersion'), 'must not be empty'));
    }
  }
}

function validateCombinators(value: unknown, schema: Schema, path: string, errors: FieldError[]): void {
  for (const sub of schema.allOf ?? []) validateNode(value, sub, path, errors);
  if (schema.anyOf && !schema.anyOf.some(s => validateValue(value, s, path).length === 0)) {
    errors.push(fieldInvalid(path, value, `${inBody(path)} must validate at least one schema (anyOf)`));
    errors.push(...validateValue(value, schema.anyOf[0], path));
  }
  if (schema.oneOf) {
    const passing = schema.oneOf.filter(s => validateValue(value, s, path).length === 0).length;
    if (passing !== 1) {
      errors.push(fieldInvalid(path, value, `${inBody(path)} must validate one and only one schema (oneOf)`));
    }
  }
  if (schema.not && validateValue(value, schema.not, path).length === 0) {
    errors.push(fieldInvalid(path, value, `${inBody(path)} must not validate the schema (not)`));
  }
}

/** The schema node at a dotted/indexed field path ("spec.members[0].name"), if any. */
export function schemaAt(schema: Schema, path: string): Schema | undefined {
  let cur: Schema | undefined = schema;
  const parts = path.match(/[^.[\]]+|\[\d+\]/g) ?? [];
  for (const part of parts) {
    if (!cur) return undefined;
    if (part.startsWith('[')) cur = cur.items;
    else
      cur =
        cur.properties?.[part] ?? (isObject(cur.additionalProperties) ? cur.additionalProperties : undefined);
  }
  return cur;
}

/** The type name the API server prints for a CEL failure at a node ("object", "string", ...). */
export function schemaTypeName(schema: Schema | undefined): string {
  if (!schema) return 'object';
  if (schema['x-kubernetes-int-or-string']) return 'integer';
  return schema.type ?? 'object';
}
