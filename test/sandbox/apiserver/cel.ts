// x-kubernetes-validations through the project's own CEL code (test/support/crd-validation), the same code the
// CRD tests use, with its errors reshaped into the API server's field errors.

import type { Crd } from '../../support/crd-validation/crd-rules.ts';
import { validateObject } from '../../support/crd-validation/crd-rules.ts';
import type { OpenApiSchema, ValidationRule } from '../../support/crd-validation/schema.ts';
import { formatValue } from './errors.ts';
import type { Schema } from './schema.ts';
import { schemaAt, schemaTypeName } from './schema.ts';
import type { FieldError, KObject, ResourceDef } from './types.ts';
import { isObject } from './util.ts';

/** Every fieldPath used by a rule with this text (to find the node the rule sits on). */
function fieldPathsOf(schema: Schema, rule: string, out: string[] = []): string[] {
  for (const r of (schema['x-kubernetes-validations'] ?? []) as ValidationRule[]) {
    if (r.rule === rule && r.fieldPath) out.push(r.fieldPath);
  }
  for (const child of Object.values(schema.properties ?? {})) fieldPathsOf(child, rule, out);
  if (schema.items) fieldPathsOf(schema.items, rule, out);
  if (isObject(schema.additionalProperties)) fieldPathsOf(schema.additionalProperties, rule, out);
  return out;
}

const statusOnly = new WeakMap<object, Map<string, Crd>>();

/**
 * The CRD with its schema cut down to the root rules and `status`. A status write leaves everything
 * else unchanged, and rules on unchanged values cannot fail under ratcheting, so this gives the
 * same errors for less work.
 */
function statusOnlyCrd(crd: Crd, version: string): Crd {
  let byVersion = statusOnly.get(crd);
  if (!byVersion) statusOnly.set(crd, (byVersion = new Map()));
  let cut = byVersion.get(version);
  if (cut === undefined) {
    cut = {
      ...crd,
      spec: {
        ...crd.spec,
        versions: crd.spec.versions.map(v => {
          if (v.name !== version) return v;
          const root = v.schema.openAPIV3Schema;
          const status = root.properties?.status;
          const properties: Record<string, OpenApiSchema> = status ? { status } : {};
          const openAPIV3Schema: OpenApiSchema = { ...root, properties };
          return { ...v, schema: { openAPIV3Schema } };
        }),
      },
    };
    byVersion.set(version, cut);
  }
  return cut;
}

/** Run the CEL rules of a custom resource; `old` is given for updates (transition rules). */
export function celErrors(
  def: ResourceDef,
  obj: KObject,
  old: KObject | undefined,
  statusWrite = false,
): FieldError[] {
  if (!def.crd) return [];
  const schema = def.schema as Schema;
  const full = def.crd as unknown as Crd;
  const crd = statusWrite && old ? statusOnlyCrd(full, def.version) : full;
  const found = validateObject(crd, def.version, obj, old);
  return found.map(e => {
    const field = e.path.replace(/^\./, '');
    let nodePath = field;
    for (const fp of fieldPathsOf(schema, e.rule)) {
      const suffix = fp.replace(/^\./, '');
      if (field.endsWith(suffix)) nodePath = field.slice(0, field.length - suffix.length).replace(/\.$/, '');
    }
    const type = schemaTypeName(nodePath ? schemaAt(schema, nodePath) : schema);
    switch (e.reason) {
      case 'FieldValueForbidden':
        return { field, reason: e.reason, message: `Forbidden: ${e.message}` };
      case 'FieldValueRequired':
        return { field, reason: e.reason, message: `Required value: ${e.message}` };
      case 'FieldValueDuplicate':
        return { field, reason: e.reason, message: `Duplicate value: ${formatValue(type)}` };
      default:
        return {
          field,
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${formatValue(type)}: ${e.message}`,
        };
    }
  });
}
