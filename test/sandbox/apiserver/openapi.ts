// OpenAPI v3 documents, enough for kubectl's default --validate=strict: every group-version lists a
// PATCH operation per kind with a fieldValidation parameter, so kubectl leaves validation to the
// server. Custom resources also carry their schema in components (for `kubectl explain`).

import { qualifiedKind } from './errors.ts';
import { apiVersionOf, type Registry } from './registry.ts';
import type { Schema } from './schema.ts';
import type { ResourceDef } from './types.ts';

const OBJECT_META_REF = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

const OBJECT_META_SCHEMA = {
  description: 'ObjectMeta is metadata that all persisted resources must have.',
  type: 'object',
  properties: {
    name: { type: 'string' },
    generateName: { type: 'string' },
    namespace: { type: 'string' },
    uid: { type: 'string' },
    resourceVersion: { type: 'string' },
    generation: { type: 'integer', format: 'int64' },
    creationTimestamp: { type: 'string', format: 'date-time' },
    deletionTimestamp: { type: 'string', format: 'date-time' },
    deletionGracePeriodSeconds: { type: 'integer', format: 'int64' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    annotations: { type: 'object', additionalProperties: { type: 'string' } },
    finalizers: { type: 'array', items: { type: 'string' } },
    ownerReferences: {
      type: 'array',
      items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
  },
};

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

function schemaName(def: ResourceDef): string {
  const reversed = def.group ? def.group.split('.').reverse().join('.') : 'io.k8s.api.core';
  return `${reversed}.${def.version}.${def.kind}`;
}

export function openApiV3Root(registry: Registry): Record<string, unknown> {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const g of registry.groups()) {
    for (const v of g.versions) {
      const p = gvPath(g.name, v);
      paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${registry.revision}` };
    }
  }
  return { paths };
}

function operation(def: ResourceDef, verb: string, patchTypes?: string[]): Record<string, unknown> {
  const ref = { $ref: `#/components/schemas/${schemaName(def)}` };
  const op: Record<string, unknown> = {
    operationId: `${verb}${def.kind}`,
    'x-kubernetes-action': verb,
    'x-kubernetes-group-version-kind': { group: def.group, version: def.version, kind: def.kind },
    parameters: [
      { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
      { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
      { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
    ],
    responses: { '200': { description: 'OK', content: { 'application/json': { schema: ref } } } },
  };
  const types = patchTypes ?? ['application/json', 'application/yaml'];
  op.requestBody = {
    content: Object.fromEntries(types.map(t => [t, { schema: patchTypes ? { type: 'object' } : ref }])),
    required: true,
  };
  return op;
}

function resourceSchema(def: ResourceDef): Record<string, unknown> {
  const gvk = [{ group: def.group, version: def.version, kind: def.kind }];
  if (!def.custom) {
    return {
      description: `${qualifiedKind(def)} (schema not served by the sandbox)`,
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      'x-kubernetes-group-version-kind': gvk,
    };
  }
  const schema = (def.schema ?? {}) as Schema;
  return {
    ...schema,
    properties: {
      apiVersion: {
        type: 'string',
        description: 'APIVersion defines the versioned schema of this representation of an object.',
      },
      kind: {
        type: 'string',
        description: 'Kind is a string value representing the REST resource this object represents.',
      },
      ...(schema.properties ?? {}),
      metadata: {
        allOf: [{ $ref: `#/components/schemas/${OBJECT_META_REF}` }],
        description: 'Standard object metadata.',
      },
    },
    'x-kubernetes-group-version-kind': gvk,
  };
}

export function openApiV3GroupVersion(
  registry: Registry,
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  const defs = registry.resources(group, version);
  if (!defs.length) return undefined;
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = { [OBJECT_META_REF]: OBJECT_META_SCHEMA };
  const prefix = `/${gvPath(group, version)}`;
  for (const def of defs) {
    const base = def.namespaced
      ? `${prefix}/namespaces/{namespace}/${def.resource}`
      : `${prefix}/${def.resource}`;
    // Strategic merge patch is deliberately not advertised: kubectl would then compute it from these
    // (schema-less) documents; without it, kubectl uses its built-in types for core kinds.
    const patchTypes = [
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/apply-patch+yaml',
    ];
    paths[base] = { post: operation(def, 'post') };
    paths[`${base}/{name}`] = { put: operation(def, 'put'), patch: operation(def, 'patch', patchTypes) };
    schemas[schemaName(def)] = resourceSchema(def);
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.0' },
    paths,
    components: { schemas },
    'x-sandbox-apiversion': apiVersionOf(group, version),
  };
}
