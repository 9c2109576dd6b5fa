// CustomResourceDefinitions: the CRD resource itself (defaults, status, validation) and the
// conversion of a CRD object into the resource definitions it serves.

import { fieldInvalid, fieldRequired } from './errors.ts';
import { evaluateJsonPath } from './jsonpath.ts';
import { PRINTERS } from './printers.ts';
import { apiVersionOf, makeDef } from './registry.ts';
import type { Schema } from './schema.ts';
import type { FieldError, KObject, Printer, ResourceDef, Strategy, TableColumn } from './types.ts';
import { humanDuration, isObject, timestamp } from './util.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;

export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema?: { openAPIV3Schema?: Schema };
  subresources?: {
    status?: object;
    scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  };
  additionalPrinterColumns?: {
    name: string;
    type: string;
    format?: string;
    description?: string;
    priority?: number;
    jsonPath: string;
  }[];
  selectableFields?: { jsonPath: string }[];
}

function names(crd: Any): Any {
  const n = { ...(crd.spec?.names ?? {}) };
  if (n.kind) {
    n.singular ??= String(n.kind).toLowerCase();
    n.listKind ??= `${n.kind}List`;
  }
  return n;
}

function condition(type: string, reason: string, message: string): Any {
  return { type, status: 'True', reason, message, lastTransitionTime: timestamp() };
}

export const crdStrategy: Strategy = {
  defaults(obj) {
    const spec = (obj.spec ??= {}) as Any;
    spec.conversion ??= { strategy: 'None' };
    if (isObject(spec.names)) {
      const n = spec.names as Any;
      if (n.kind) {
        n.singular ??= String(n.kind).toLowerCase();
        n.listKind ??= `${n.kind}List`;
      }
    }
  },
  prepareCreate(obj) {
    const storage = ((obj.spec as Any).versions as CrdVersion[] | undefined)?.find(v => v.storage)?.name;
    obj.status = {
      conditions: [
        condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
        condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
      ],
      acceptedNames: names(obj),
      storedVersions: storage ? [storage] : [],
    };
  },
  prepareUpdate(obj, old) {
    const status = { ...((old.status ?? {}) as Any) };
    status.acceptedNames = names(obj);
    const storage = ((obj.spec as Any).versions as CrdVersion[] | undefined)?.find(v => v.storage)?.name;
    const stored: string[] = [...(status.storedVersions ?? [])];
    if (storage && !stored.includes(storage)) stored.push(storage);
    status.storedVersions = stored;
    obj.status = status;
  },
  validateCreate: validateCrd,
  validateUpdate(obj, old) {
    const errors = validateCrd(obj);
    const a = obj.spec as Any;
    const b = old.spec as Any;
    if (a.scope !== b.scope) errors.push(fieldInvalid('spec.scope', a.scope, 'field is immutable'));
    if (a.group !== b.group) errors.push(fieldInvalid('spec.group', a.group, 'field is immutable'));
    return errors;
  },
};

function validateCrd(obj: KObject): FieldError[] {
  const errors: FieldError[] = [];
  const spec = obj.spec as Any;
  if (!spec?.group) errors.push(fieldRequired('spec.group'));
  if (!spec?.names?.plural) errors.push(fieldRequired('spec.names.plural'));
  if (!spec?.names?.kind) errors.push(fieldRequired('spec.names.kind'));
  if (spec?.scope !== 'Namespaced' && spec?.scope !== 'Cluster') {
    errors.push({
      field: 'spec.scope',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(spec?.scope ?? '')}: supported values: "Cluster", "Namespaced"`,
    });
  }
  if (spec?.group && spec?.names?.plural && obj.metadata.name !== `${spec.names.plural}.${spec.group}`) {
    errors.push(fieldInvalid('metadata.name', obj.metadata.name, 'must be spec.names.plural+"."+spec.group'));
  }
  const versions = (spec?.versions ?? []) as CrdVersion[];
  if (!versions.length)
    errors.push(fieldRequired('spec.versions', 'must have exactly one version marked as storage version'));
  else if (versions.filter(v => v.storage).length !== 1) {
    errors.push(
      fieldInvalid(
        'spec.versions',
        versions.map(v => v.name),
        'must have exactly one version marked as storage version',
      ),
    );
  }
  versions.forEach((v, i) => {
    if (!v.schema?.openAPIV3Schema)
      errors.push(fieldRequired(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'));
  });
  return errors;
}

export function crdResourceDef(): ResourceDef {
  return makeDef({
    group: 'apiextensions.k8s.io',
    version: 'v1',
    resource: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    statusSubresource: true,
    generation: true,
    strategy: crdStrategy,
    printer: PRINTERS.customresourcedefinitions,
  });
}

function cellFor(type: string, value: unknown, now: number): unknown {
  switch (type) {
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date': {
      if (typeof value !== 'string') return null;
      const t = Date.parse(value);
      return Number.isNaN(t) ? null : humanDuration(now - t);
    }
    default:
      return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

/** The printer of one CRD version: additionalPrinterColumns, or Age when there are none. */
export function crdPrinter(version: CrdVersion): Printer {
  const cols = version.additionalPrinterColumns?.length
    ? version.additionalPrinterColumns
    : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: '', priority: 0 }];
  const columns: TableColumn[] = cols.map(c => ({
    name: c.name,
    type: c.type,
    format: c.format ?? '',
    description: c.description ?? '',
    priority: c.priority ?? 0,
  }));
  return {
    columns,
    cells(obj, now) {
      return cols.map(c => {
        const found = evaluateJsonPath(obj, c.jsonPath);
        return found.length === 0 ? null : cellFor(c.type, found[0], now);
      });
    },
  };
}

/** One ResourceDef per served version of a CRD. */
export function defsFromCrd(crd: KObject): ResourceDef[] {
  const spec = crd.spec as Any;
  const n = names(crd);
  const versions = ((spec.versions ?? []) as CrdVersion[]).filter(v => v.served);
  const storage = ((spec.versions ?? []) as CrdVersion[]).find(v => v.storage)?.name ?? versions[0]?.name;
  return versions.map(v => {
    const fieldSelectors: ResourceDef['fieldSelectors'] = {};
    for (const f of v.selectableFields ?? []) {
      const label = f.jsonPath.replace(/^\./, '');
      fieldSelectors[label] = obj => {
        const found = evaluateJsonPath(obj, f.jsonPath);
        return found.length ? String(found[0]) : '';
      };
    }
    const def = makeDef({
      group: spec.group,
      version: v.name,
      resource: n.plural,
      kind: n.kind,
      listKind: n.listKind,
      singular: n.singular,
      shortNames: n.shortNames ?? [],
      categories: n.categories ?? [],
      namespaced: spec.scope !== 'Cluster',
      statusSubresource: v.subresources?.status !== undefined,
      generation: true,
      storageApiVersion: apiVersionOf(spec.group, storage),
      fieldSelectors,
      printer: crdPrinter(v),
    });
    def.custom = true;
    def.crd = crd;
    def.schema = v.schema?.openAPIV3Schema ?? {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    };
    if (v.subresources?.scale) def.scale = v.subresources.scale;
    return def;
  });
}
