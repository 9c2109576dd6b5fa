// Shared shapes of the sandbox API server: stored objects, resource definitions and request options.

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
  [key: string]: unknown;
}

/** A Kubernetes object as stored: apiVersion/kind are those of the storage version. */
export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

export interface ScaleSpec {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface TableColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
}

/** One printer: column definitions and a function that yields the cells after the name. */
export interface Printer {
  columns: TableColumn[];
  cells(obj: KObject, now: number): unknown[];
  /** The real server's Event table has no leading Name column (Name is a wide column there). */
  omitNameColumn?: boolean;
}

/** Which kind of write a request is, for the strategy hooks. */
export type WriteKind = 'main' | 'status';

export interface FieldError {
  /** field path, e.g. "spec.replicas" */
  field: string;
  /** FieldValueInvalid, FieldValueRequired, FieldValueNotSupported, ... */
  reason: string;
  /** the message after the field, e.g. `Invalid value: -1: must be >= 0` */
  message: string;
}

/** Type-specific behaviour of a resource (the real API server's "strategy"). */
export interface Strategy {
  /** Fill defaults (the real server's defaulting functions). Mutates obj. */
  defaults?(obj: KObject): void;
  /** Called once on create after defaults (reset status, allocate IPs, ...). Mutates obj. */
  prepareCreate?(obj: KObject): void;
  /** Called on every update of the main resource (carry over allocated values, ...). Mutates obj. */
  prepareUpdate?(obj: KObject, old: KObject): void;
  /** Extra validation on create; returns field errors. */
  validateCreate?(obj: KObject): FieldError[];
  /** Extra validation on update of the main resource; returns field errors. */
  validateUpdate?(obj: KObject, old: KObject): FieldError[];
  /** A validating admission plugin on update of the main resource, after validation: throws an ApiError. */
  admitUpdate?(obj: KObject, old: KObject): void;
  /** Normalise a write (e.g. Secret stringData → data). Mutates obj. */
  normalize?(obj: KObject): void;
  /** Grace period in seconds for a delete without an explicit one; undefined = not graceful. */
  gracePeriod?(obj: KObject): number | undefined;
  /** Finalizers that an admission plugin adds on create. */
  createFinalizers?(obj: KObject): string[];
}

export interface ResourceDef {
  group: string;
  version: string;
  /** plural resource name */
  resource: string;
  kind: string;
  listKind: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  namespaced: boolean;
  /** key shared by every version of one resource (group/resource) */
  storageKey: string;
  /** apiVersion of the stored form */
  storageApiVersion: string;
  statusSubresource: boolean;
  scale?: ScaleSpec;
  /** metadata.generation is maintained (and bumped on spec changes) */
  generation: boolean;
  verbs: string[];
  /** PUT on a missing object creates it */
  allowCreateOnUpdate: boolean;
  /** DELETE answers with the object rather than a Status */
  returnDeletedObject: boolean;
  /** propagation policy when a DELETE names none */
  defaultPropagation: 'Background' | 'Orphan';
  /** supported field selector labels (besides metadata.name / metadata.namespace) */
  fieldSelectors: Record<string, (obj: KObject) => string | undefined>;
  /** true for custom resources: strategic merge patch is refused */
  custom: boolean;
  strategy: Strategy;
  printer?: Printer;
  /** storage form → served form (apiVersion and, for events.k8s.io, field renames) */
  toServed?(obj: KObject): KObject;
  /** served form → storage form */
  toStorage?(obj: KObject): KObject;
  /** schema of custom resources (compiled), set by crd.ts */
  schema?: unknown;
  /** the CustomResourceDefinition object that defines this resource */
  crd?: KObject;
  /** extra subresources handled elsewhere (e.g. pods/log supplied by a kubelet) */
  extraSubresources?: string[];
}

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: PropagationPolicy;
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface WriteOptions {
  dryRun?: boolean;
  fieldValidation?: FieldValidation;
  fieldManager?: string;
  /** write the status subresource instead of the main resource */
  subresource?: 'status';
  /** server-side apply: force=true */
  force?: boolean;
  /** warnings collected for the Warning response header */
  warnings?: string[];
}
