// The semantics of every read and write, independent of HTTP: the real API server's generic
// registry (BeforeCreate / BeforeUpdate, resourceVersion preconditions, status and main writes,
// generation, finalizers on update) plus CRD schema enforcement
// (CEL rules are left to the real kube-apiserver, which the tests use for them).

import { randomUUID } from 'node:crypto';
import {
  alreadyExists,
  ApiError,
  badRequest,
  conflict,
  fieldForbidden,
  fieldInvalid,
  forbidden,
  invalid,
  notFound,
} from './errors.ts';
import type { NameRule } from './metadata.ts';
import { validateObjectMeta } from './metadata.ts';
import { apiVersionOf, type Registry } from './registry.ts';
import type { Schema } from './schema.ts';
import { applyDefaults, prune, validateValue } from './schema.ts';
import type { FieldRequirement, LabelSelector } from './selectors.ts';
import { matchLabels, parseFieldSelector, parseLabelSelector } from './selectors.ts';
import type { Store } from './store.ts';
import type { FieldError, KObject, ResourceDef, WriteKind, WriteOptions } from './types.ts';
import { clone, deepEqual, isObject, objectKey, randomSuffix, timestamp } from './util.ts';

export interface ListQuery {
  labelSelector?: string | null;
  fieldSelector?: string | null;
  limit?: number;
  continue?: string | null;
}

export interface ListResult {
  items: KObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** A parsed label + field selector, ready to test stored objects. */
export interface Filter {
  labels: LabelSelector;
  fields: FieldRequirement[];
}

/** Schema errors after which the real server skips CEL rules (apiextensions' hasBlockingErr). */
const BLOCKING_REASONS = new Set([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
]);

const NAME_RULES: Record<string, NameRule> = { namespaces: 'label', services: 'dns1035' };

function withoutKeys(obj: KObject, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...obj };
  for (const k of keys) delete out[k];
  return out;
}

export class Engine {
  readonly store: Store;
  readonly registry: Registry;
  constructor(store: Store, registry: Registry) {
    this.store = store;
    this.registry = registry;
  }

  // ---- forms ----

  /** The object as served at def's version (the stored object itself when no conversion is needed). */
  served(def: ResourceDef, obj: KObject): KObject {
    if (def.toServed) return def.toServed(obj);
    const apiVersion = apiVersionOf(def.group, def.version);
    return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
  }

  toStorage(def: ResourceDef, obj: KObject): KObject {
    if (def.toStorage) return def.toStorage(obj);
    return obj.apiVersion === def.storageApiVersion ? obj : { ...obj, apiVersion: def.storageApiVersion };
  }

  // ---- reads ----

  getStored(def: ResourceDef, namespace: string | undefined, name: string): KObject | undefined {
    return this.store.get(def.storageKey, def.namespaced ? namespace : undefined, name);
  }

  get(def: ResourceDef, namespace: string | undefined, name: string): KObject {
    const obj = this.getStored(def, namespace, name);
    if (!obj) throw notFound(def, name);
    return this.served(def, obj);
  }

  parseFilter(def: ResourceDef, labelSelector?: string | null, fieldSelector?: string | null): Filter {
    const fields = parseFieldSelector(fieldSelector);
    for (const f of fields) {
      if (f.field !== 'metadata.name' && f.field !== 'metadata.namespace' && !def.fieldSelectors[f.field]) {
        throw badRequest(`field label not supported: ${f.field}`);
      }
    }
    return { labels: parseLabelSelector(labelSelector), fields };
  }

  /** Whether a stored object passes a filter. */
  matches(def: ResourceDef, obj: KObject, filter: Filter): boolean {
    if (filter.labels.length && !matchLabels(filter.labels, obj.metadata.labels)) return false;
    for (const f of filter.fields) {
      let value: string | undefined;
      if (f.field === 'metadata.name') value = obj.metadata.name;
      else if (f.field === 'metadata.namespace') value = obj.metadata.namespace ?? '';
      else value = def.fieldSelectors[f.field](obj) ?? '';
      if ((value === f.value) !== (f.op === '=')) return false;
    }
    return true;
  }

  list(def: ResourceDef, namespace: string | undefined, query: ListQuery = {}): ListResult {
    const filter = this.parseFilter(def, query.labelSelector, query.fieldSelector);
    const resourceVersion = String(this.store.resourceVersion);
    let all = this.store.list(def.storageKey, def.namespaced ? namespace : undefined);
    if (filter.labels.length || filter.fields.length) all = all.filter(o => this.matches(def, o, filter));
    if (query.continue) {
      let after: string;
      try {
        after = (JSON.parse(Buffer.from(query.continue, 'base64').toString()) as { key: string }).key;
      } catch {
        throw badRequest(
          'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
        );
      }
      all = all.filter(o => objectKey(o.metadata.namespace, o.metadata.name!) > after);
    }
    const result: ListResult = { items: all, resourceVersion };
    if (query.limit && query.limit > 0 && all.length > query.limit) {
      result.items = all.slice(0, query.limit);
      const last = result.items[result.items.length - 1];
      const key = objectKey(last.metadata.namespace, last.metadata.name!);
      result.continue = Buffer.from(
        JSON.stringify({ v: 'meta.k8s.io/v1', rv: Number(resourceVersion), key }),
      ).toString('base64');
      result.remainingItemCount = all.length - query.limit;
    }
    result.items = result.items.map(o => this.served(def, o));
    return result;
  }

  // ---- decoding ----

  /** Check kind/apiVersion of a request body and return it as a writable object. */
  decode(def: ResourceDef, body: unknown): KObject {
    if (!isObject(body)) {
      throw badRequest(
        `the object provided is unrecognized (must be of type ${def.kind}): couldn't get version/kind; json parse error`,
      );
    }
    const apiVersion = apiVersionOf(def.group, def.version);
    if (def.custom && !body.kind) throw badRequest(`Object 'Kind' is missing in '${JSON.stringify(body)}'`);
    if (body.apiVersion !== undefined && body.apiVersion !== apiVersion) {
      throw badRequest(
        `the API version in the data (${JSON.stringify(body.apiVersion)}) does not match the expected API version (${apiVersion})`,
      );
    }
    if (body.kind !== undefined && body.kind !== def.kind) {
      throw badRequest(
        `the kind in the data (${JSON.stringify(body.kind)}) does not match the expected kind (${def.kind})`,
      );
    }
    if (body.metadata !== undefined && !isObject(body.metadata)) {
      throw badRequest(
        `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: metadata must be an object`,
      );
    }
    const obj = body as KObject;
    obj.apiVersion = apiVersion;
    obj.kind = def.kind;
    obj.metadata ??= {};
    // JSON null in metadata decodes to "unset" (e.g. creationTimestamp: null from kubectl --dry-run)
    for (const key of Object.keys(obj.metadata)) if (obj.metadata[key] === null) delete obj.metadata[key];
    return obj;
  }

  private setNamespace(def: ResourceDef, obj: KObject, namespace: string | undefined): void {
    if (!def.namespaced) {
      delete obj.metadata.namespace;
      return;
    }
    if (obj.metadata.namespace && namespace && obj.metadata.namespace !== namespace) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    obj.metadata.namespace = namespace ?? obj.metadata.namespace;
  }

  // ---- custom resources ----

  /** Prune unknown fields and apply defaults; strict field validation turns unknown fields into a 400. */
  private schemaPrepare(def: ResourceDef, obj: KObject, opts: WriteOptions): void {
    const schema = def.schema as Schema;
    const unknown = prune(obj, schema);
    if (unknown.length) {
      const mode = opts.fieldValidation ?? 'Warn';
      if (mode === 'Strict') {
        const list = unknown.map(p => `unknown field "${p}"`).join(', ');
        throw badRequest(
          `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: strict decoding error: ${list}`,
        );
      }
      if (mode === 'Warn') for (const p of unknown) opts.warnings?.push(`unknown field "${p}"`);
    }
    applyDefaults(obj, schema);
  }

  private rootSchemas = new WeakMap<object, Schema>();

  /** The root schema without apiVersion/kind/metadata (validated separately as ObjectMeta). */
  private rootSchema(def: ResourceDef): Schema {
    const schema = def.schema as Schema;
    let root = this.rootSchemas.get(schema);
    if (!root) {
      const properties = { ...(schema.properties ?? {}) };
      delete properties.apiVersion;
      delete properties.kind;
      delete properties.metadata;
      const required = (schema.required ?? []).filter(r => !['apiVersion', 'kind', 'metadata'].includes(r));
      root = { ...schema, properties, required };
      this.rootSchemas.set(schema, root);
    }
    return root;
  }

  private customErrors(def: ResourceDef, obj: KObject, kind: WriteKind): FieldError[] {
    const schema = def.schema as Schema;
    let errors: FieldError[];
    if (kind === 'status') {
      const statusSchema = schema.properties?.status;
      errors =
        statusSchema && obj.status !== undefined ? validateValue(obj.status, statusSchema, 'status') : [];
    } else {
      errors = validateValue(withoutKeys(obj, ['apiVersion', 'kind', 'metadata']), this.rootSchema(def), '');
    }
    // The real server adds this after such errors, having skipped its CEL rules (hasBlockingErr).
    if (errors.some(e => BLOCKING_REASONS.has(e.reason))) {
      errors.push({
        field: '<nil>',
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      });
    }
    return errors;
  }

  // ---- writes ----

  private admitNamespace(def: ResourceDef, obj: KObject): void {
    if (!def.namespaced) return;
    const nsDef = this.registry.lookup('', 'v1', 'namespaces')!;
    const ns = this.store.get(nsDef.storageKey, undefined, obj.metadata.namespace!);
    if (!ns) throw notFound(nsDef, obj.metadata.namespace!);
    if (ns.metadata.deletionTimestamp) {
      throw forbidden(
        def,
        obj.metadata.name ?? '',
        `unable to create new content in namespace ${ns.metadata.name} because it is being terminated`,
      );
    }
  }

  private crdTerminating(def: ResourceDef): boolean {
    if (!def.crd) return false;
    const crdDef = this.registry.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!;
    const crd = this.store.get(crdDef.storageKey, undefined, def.crd.metadata.name!);
    return crd?.metadata.deletionTimestamp !== undefined;
  }

  create(def: ResourceDef, namespace: string | undefined, body: unknown, opts: WriteOptions = {}): KObject {
    if (this.crdTerminating(def)) {
      throw new ApiError(
        405,
        'MethodNotAllowed',
        'create not allowed while custom resource definition is terminating',
      );
    }
    const obj = this.decode(def, body);
    this.setNamespace(def, obj, namespace);
    const meta = obj.metadata;
    const generated = !meta.name && !!meta.generateName;
    if (generated) meta.name = meta.generateName!.slice(0, 58) + randomSuffix();
    if (meta.resourceVersion) {
      throw new ApiError(
        500,
        'InternalError',
        'Internal error occurred: resourceVersion should not be set on objects to be created',
      );
    }
    meta.uid = randomUUID();
    meta.creationTimestamp = timestamp();
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.managedFields;
    delete meta.selfLink;
    if (def.generation) meta.generation = 1;
    else delete meta.generation;
    if (def.custom) this.schemaPrepare(def, obj, opts);
    def.strategy.defaults?.(obj);
    def.strategy.normalize?.(obj);
    if (def.custom && def.statusSubresource) delete obj.status;
    def.strategy.prepareCreate?.(obj);
    this.admitNamespace(def, obj);
    for (const f of def.strategy.createFinalizers?.(obj) ?? []) {
      const list = (meta.finalizers ??= []);
      if (!list.includes(f)) list.push(f);
    }
    const errors = validateObjectMeta(obj, NAME_RULES[def.resource] ?? 'subdomain', def.namespaced);
    if (def.custom) errors.push(...this.customErrors(def, obj, 'main'));
    errors.push(...(def.strategy.validateCreate?.(obj) ?? []));
    if (errors.length) throw invalid(def, meta.name ?? '', errors);
    if (this.getStored(def, meta.namespace, meta.name!)) {
      if (!generated) throw alreadyExists(def, meta.name!);
      for (let i = 0; i < 20 && this.getStored(def, meta.namespace, meta.name!); i++) {
        meta.name = meta.generateName!.slice(0, 58) + randomSuffix();
      }
    }
    if (opts.dryRun) return obj;
    const stored = this.store.create(def.storageKey, this.toStorage(def, obj));
    return this.served(def, stored);
  }

  /** PUT: replace the object (or its status) after a resourceVersion precondition. */
  update(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
    body: unknown,
    opts: WriteOptions = {},
  ): { object: KObject; created: boolean } {
    const obj = this.decode(def, body);
    if (obj.metadata.name && obj.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    obj.metadata.name = name;
    this.setNamespace(def, obj, namespace);
    const kind: WriteKind = opts.subresource === 'status' ? 'status' : 'main';
    const stored = this.getStored(def, namespace, name);
    if (!stored) {
      if (def.allowCreateOnUpdate && kind === 'main') {
        delete obj.metadata.resourceVersion;
        return { object: this.create(def, namespace, obj, opts), created: true };
      }
      throw notFound(def, name);
    }
    const rv = obj.metadata.resourceVersion;
    if (rv && rv !== stored.metadata.resourceVersion) {
      if (!/^\d+$/.test(rv)) throw badRequest(`invalid resource version: ${rv}`);
      throw conflict(def, name);
    }
    return { object: this.applyUpdate(def, stored, obj, opts, kind), created: false };
  }

  /** Copy what a main write may not change from the old object; returns errors for forbidden changes. */
  private resetSystemMeta(next: KObject, old: KObject): FieldError[] {
    const errors: FieldError[] = [];
    const m = next.metadata;
    const o = old.metadata;
    if (m.uid && m.uid !== o.uid) errors.push(fieldInvalid('metadata.uid', m.uid, 'field is immutable'));
    m.uid = o.uid;
    m.creationTimestamp = o.creationTimestamp;
    m.namespace = o.namespace;
    if (o.deletionTimestamp) m.deletionTimestamp = o.deletionTimestamp;
    else delete m.deletionTimestamp;
    if (o.deletionGracePeriodSeconds !== undefined)
      m.deletionGracePeriodSeconds = o.deletionGracePeriodSeconds;
    else delete m.deletionGracePeriodSeconds;
    if (o.generation !== undefined) m.generation = o.generation;
    else delete m.generation;
    delete m.selfLink;
    delete m.managedFields;
    if (o.deletionTimestamp) {
      const added = (m.finalizers ?? []).filter(f => !(o.finalizers ?? []).includes(f));
      if (added.length) {
        errors.push(
          fieldForbidden(
            'metadata.finalizers',
            `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map(f => JSON.stringify(f)).join(', ')}}`,
          ),
        );
      }
    }
    if (m.finalizers && m.finalizers.length === 0) delete m.finalizers;
    return errors;
  }

  private specChanged(def: ResourceDef, next: KObject, old: KObject): boolean {
    const skip = def.statusSubresource ? ['metadata', 'status'] : ['metadata'];
    return !deepEqual(withoutKeys(next, skip), withoutKeys(old, skip));
  }

  /**
   * The common tail of PUT, PATCH, /status and /scale writes: build the next state from the stored
   * one, validate, skip no-op writes, commit, and finish a deletion whose last finalizer went away.
   */
  applyUpdate(
    def: ResourceDef,
    stored: KObject,
    incoming: KObject,
    opts: WriteOptions,
    kind: WriteKind,
  ): KObject {
    const old = this.served(def, stored);
    if (def.custom) this.schemaPrepare(def, incoming, opts);
    def.strategy.defaults?.(incoming);
    def.strategy.normalize?.(incoming);
    let next: KObject;
    const errors: FieldError[] = [];
    if (kind === 'status') {
      next = clone(old);
      if (incoming.status === undefined) delete next.status;
      else next.status = incoming.status;
    } else {
      next = incoming;
      if (def.statusSubresource) {
        if (old.status === undefined) delete next.status;
        else next.status = clone(old.status);
      }
      errors.push(...this.resetSystemMeta(next, old));
      def.strategy.prepareUpdate?.(next, old);
      if (def.generation && this.specChanged(def, next, old))
        next.metadata.generation = (old.metadata.generation ?? 0) + 1;
    }
    next.metadata.resourceVersion = old.metadata.resourceVersion;
    errors.push(...validateObjectMeta(next, NAME_RULES[def.resource] ?? 'subdomain', def.namespaced));
    if (def.custom) errors.push(...this.customErrors(def, next, kind));
    if (kind === 'main') errors.push(...(def.strategy.validateUpdate?.(next, old) ?? []));
    if (errors.length) throw invalid(def, next.metadata.name ?? '', errors);
    if (kind === 'main') def.strategy.admitUpdate?.(next, old);
    if (deepEqual(next, old)) return old;
    if (opts.dryRun) return next;
    return this.commitUpdate(def, stored, this.toStorage(def, next));
  }

  /**
   * Write a new state of a stored object. An update that removes the last finalizer of an object
   * being deleted deletes it instead (no MODIFIED event, as the real registry's errEmptiedFinalizers).
   */
  commitUpdate(def: ResourceDef, stored: KObject, next: KObject): KObject {
    const m = next.metadata;
    if (
      stored.metadata.deletionTimestamp &&
      (stored.metadata.finalizers ?? []).length > 0 &&
      (m.finalizers ?? []).length === 0 &&
      m.deletionGracePeriodSeconds === 0
    ) {
      const last = this.store.remove(def.storageKey, stored);
      return this.served(def, {
        ...next,
        metadata: { ...m, resourceVersion: last.metadata.resourceVersion },
      });
    }
    return this.served(def, this.store.update(def.storageKey, next, stored));
  }

  /** A system write that changes only metadata (finalizers, owner references), without validation. */
  mutateMetadata(def: ResourceDef, stored: KObject, mutate: (meta: KObject['metadata']) => void): KObject {
    const next: KObject = { ...stored, metadata: clone(stored.metadata) };
    mutate(next.metadata);
    if (next.metadata.finalizers?.length === 0) delete next.metadata.finalizers;
    if (next.metadata.ownerReferences?.length === 0) delete next.metadata.ownerReferences;
    if (deepEqual(next.metadata, stored.metadata)) return stored;
    return this.commitUpdate(def, stored, next);
  }
}
