// The in-process handle: the same operations as the HTTP API (validation, resourceVersion, finalizers,
// garbage collection), addressed by apiVersion + kind, for fast test setup without HTTP.

import type { Engine } from './operations.ts';
import { deleteObject, type DeleteResult } from './deletion.ts';
import { ApiError } from './errors.ts';
import { patchObject } from './patch-op.ts';
import { APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH } from './patch.ts';
import type { StoreEvent } from './store.ts';
import type { DeleteOptions, KObject, ResourceDef, WriteOptions } from './types.ts';
import { clone } from './util.ts';

export type PatchKind = 'merge' | 'json' | 'strategic' | 'apply';

const PATCH_TYPES: Record<PatchKind, string> = {
  merge: MERGE_PATCH,
  json: JSON_PATCH,
  strategic: STRATEGIC_PATCH,
  apply: APPLY_PATCH,
};

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export class ObjectStore {
  private readonly engine: Engine;
  constructor(engine: Engine) {
    this.engine = engine;
  }

  /** The resource definition serving apiVersion + kind (404 ApiError when none). */
  resource(apiVersion: string, kind: string): ResourceDef {
    const def = this.engine.registry.byKind(apiVersion, kind);
    if (!def) throw new ApiError(404, 'NotFound', `no resource serves ${kind} in ${apiVersion}`);
    return def;
  }

  get resourceVersion(): number {
    return this.engine.store.resourceVersion;
  }

  create<T extends KObject>(obj: T, opts: WriteOptions = {}): T {
    const def = this.resource(obj.apiVersion!, obj.kind!);
    return clone(this.engine.create(def, obj.metadata?.namespace, clone(obj), opts)) as T;
  }

  get<T = KObject>(apiVersion: string, kind: string, name: string, namespace?: string): T | undefined {
    const def = this.resource(apiVersion, kind);
    const obj = this.engine.getStored(def, namespace, name);
    return obj && (clone(this.engine.served(def, obj)) as T);
  }

  list<T = KObject>(apiVersion: string, kind: string, opts: ListOptions = {}): T[] {
    const def = this.resource(apiVersion, kind);
    return clone(this.engine.list(def, opts.namespace, opts).items) as T[];
  }

  /** PUT semantics: a resourceVersion in obj is a precondition. */
  update<T extends KObject>(obj: T, opts: WriteOptions = {}): T {
    const def = this.resource(obj.apiVersion!, obj.kind!);
    const { object } = this.engine.update(def, obj.metadata.namespace, obj.metadata.name!, clone(obj), {
      ...opts,
      subresource: undefined,
    });
    return clone(object) as T;
  }

  updateStatus<T extends KObject>(obj: T, opts: WriteOptions = {}): T {
    const def = this.resource(obj.apiVersion!, obj.kind!);
    const { object } = this.engine.update(def, obj.metadata.namespace, obj.metadata.name!, clone(obj), {
      ...opts,
      subresource: 'status',
    });
    return clone(object) as T;
  }

  patch<T = KObject>(
    target: { apiVersion: string; kind: string; name: string; namespace?: string },
    patch: unknown,
    type: PatchKind = 'merge',
    opts: WriteOptions = {},
  ): T {
    const def = this.resource(target.apiVersion, target.kind);
    const raw = typeof patch === 'string' ? patch : JSON.stringify(patch);
    const writeOpts = { fieldManager: 'sandbox', ...opts };
    const { object } = patchObject(
      this.engine,
      def,
      { namespace: target.namespace, name: target.name },
      { type: PATCH_TYPES[type], raw },
      writeOpts,
    );
    return clone(object) as T;
  }

  delete(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
    opts: DeleteOptions = {},
  ): DeleteResult {
    const def = this.resource(apiVersion, kind);
    const result = deleteObject(this.engine, def, namespace, name, opts);
    return { object: clone(result.object), deleted: result.deleted };
  }

  /** How many per-resource subscriptions there are (each open watch holds one). */
  subscriberCount(): number {
    return this.engine.store.subscriberCount();
  }

  /** Every change to every object, in storage form, as it happens. Returns the unsubscribe function. */
  onChange(fn: (event: StoreEvent) => void): () => void {
    return this.engine.store.subscribe('*', fn);
  }
}
