// Server-side Table output (Accept: application/json;as=Table;...) for `kubectl get`.

import { DEFAULT_PRINTER } from './printers.ts';
import type { KObject, ResourceDef, TableColumn } from './types.ts';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

const NAME_COLUMN: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description:
    'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  priority: 0,
};

/** True when the Accept header asks for a meta.k8s.io Table. */
export function wantsTable(accept: string | undefined): boolean {
  return !!accept && /as=Table/.test(accept) && /g=meta\.k8s\.io/.test(accept);
}

function columns(def: ResourceDef): TableColumn[] {
  const printer = def.printer ?? DEFAULT_PRINTER;
  const own = printer.columns.map(c => ({ format: '', description: '', priority: 0, ...c }));
  return printer.omitNameColumn ? own : [NAME_COLUMN, ...own];
}

function rowObject(obj: KObject, include: IncludeObject): KObject | undefined {
  if (include === 'None') return undefined;
  if (include === 'Object') return obj;
  const metadata = { ...obj.metadata };
  delete metadata.managedFields;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata };
}

export function tableRow(
  def: ResourceDef,
  obj: KObject,
  include: IncludeObject,
  now = Date.now(),
): Record<string, unknown> {
  const printer = def.printer ?? DEFAULT_PRINTER;
  const cells = printer.cells(obj, now);
  const row: Record<string, unknown> = {
    cells: printer.omitNameColumn ? cells : [obj.metadata.name, ...cells],
  };
  const object = rowObject(obj, include);
  if (object) row.object = object;
  return row;
}

export function toTable(
  def: ResourceDef,
  objects: KObject[],
  opts: {
    include: IncludeObject;
    resourceVersion?: string;
    continue?: string;
    remainingItemCount?: number;
    withColumns?: boolean;
  },
): Record<string, unknown> {
  const now = Date.now();
  const metadata: Record<string, unknown> = {};
  if (opts.resourceVersion) metadata.resourceVersion = opts.resourceVersion;
  if (opts.continue) metadata.continue = opts.continue;
  if (opts.remainingItemCount !== undefined) metadata.remainingItemCount = opts.remainingItemCount;
  const table: Record<string, unknown> = { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata };
  if (opts.withColumns !== false) table.columnDefinitions = columns(def);
  table.rows = objects.map(o => tableRow(def, o, opts.include, now));
  return table;
}
