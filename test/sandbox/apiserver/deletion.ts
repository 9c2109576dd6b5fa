// DELETE semantics: preconditions, graceful deletion (Pods), finalizers and deletionTimestamp,
// the garbage collector's orphan / foregroundDeletion finalizers, namespaces and CRDs that are
// cleaned up before they go.

import { CRD_CLEANUP_FINALIZER } from './crd.ts';
import { conflict, forbidden, notFound } from './errors.ts';
import type { Engine, ListQuery } from './operations.ts';
import type { DeleteOptions, KObject, PropagationPolicy, ResourceDef } from './types.ts';
import { clone, timestamp } from './util.ts';

export const ORPHAN_FINALIZER = 'orphan';
export const FOREGROUND_FINALIZER = 'foregroundDeletion';
const PROTECTED_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);

export interface DeleteResult {
  /** the object after the call: its last state if deleted, its marked state if pending */
  object: KObject;
  deleted: boolean;
}

function policyOf(def: ResourceDef, opts: DeleteOptions): { policy: PropagationPolicy; explicit: boolean } {
  if (opts.propagationPolicy) return { policy: opts.propagationPolicy, explicit: true };
  if (opts.orphanDependents !== undefined) {
    return { policy: opts.orphanDependents ? 'Orphan' : 'Background', explicit: true };
  }
  return { policy: def.defaultPropagation, explicit: def.defaultPropagation === 'Orphan' };
}

/** The finalizers after applying the garbage collector's policy finalizers. */
function gcFinalizers(current: string[], policy: PropagationPolicy, explicit: boolean): string[] {
  if (!explicit) return current;
  const rest = current.filter(f => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER);
  if (policy === 'Orphan') rest.push(ORPHAN_FINALIZER);
  if (policy === 'Foreground') rest.push(FOREGROUND_FINALIZER);
  return rest;
}

function checkPreconditions(def: ResourceDef, obj: KObject, opts: DeleteOptions): void {
  const pre = opts.preconditions;
  if (pre?.uid && pre.uid !== obj.metadata.uid) {
    throw conflict(
      def,
      obj.metadata.name!,
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${obj.metadata.uid}`,
    );
  }
  if (pre?.resourceVersion && pre.resourceVersion !== obj.metadata.resourceVersion) {
    throw conflict(
      def,
      obj.metadata.name!,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion}`,
    );
  }
}

function markDeleting(obj: KObject, graceSeconds: number, finalizers: string[]): KObject {
  const next: KObject = { ...obj, metadata: clone(obj.metadata) };
  const m = next.metadata;
  m.deletionTimestamp = timestamp(Date.now() + graceSeconds * 1000);
  m.deletionGracePeriodSeconds = graceSeconds;
  if (m.generation !== undefined && m.generation > 0) m.generation++;
  if (finalizers.length) m.finalizers = finalizers;
  else delete m.finalizers;
  return next;
}

function deleteNamespace(
  engine: Engine,
  def: ResourceDef,
  stored: KObject,
  opts: DeleteOptions,
): DeleteResult {
  const name = stored.metadata.name!;
  if (PROTECTED_NAMESPACES.has(name)) throw forbidden(def, name, 'this namespace may not be deleted');
  if (stored.metadata.deletionTimestamp) return { object: engine.served(def, stored), deleted: false };
  const next = markDeleting(stored, 0, stored.metadata.finalizers ?? []);
  next.status = { ...(stored.status ?? {}), phase: 'Terminating' };
  if (opts.dryRun) return { object: next, deleted: false };
  return { object: engine.served(def, engine.store.update(def.storageKey, next, stored)), deleted: false };
}

function deleteCrd(engine: Engine, def: ResourceDef, stored: KObject, opts: DeleteOptions): DeleteResult {
  if (stored.metadata.deletionTimestamp) return { object: engine.served(def, stored), deleted: false };
  const finalizers = [...(stored.metadata.finalizers ?? [])];
  if (!finalizers.includes(CRD_CLEANUP_FINALIZER)) finalizers.push(CRD_CLEANUP_FINALIZER);
  const next = markDeleting(stored, 0, finalizers);
  const status = { ...((stored.status as Record<string, unknown>) ?? {}) };
  const conditions = ((status.conditions as Record<string, unknown>[]) ?? []).filter(
    c => c.type !== 'Terminating',
  );
  conditions.push({
    type: 'Terminating',
    status: 'True',
    reason: 'InstanceDeletionPending',
    message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
    lastTransitionTime: timestamp(),
  });
  next.status = { ...status, conditions };
  if (opts.dryRun) return { object: next, deleted: false };
  return { object: engine.served(def, engine.store.update(def.storageKey, next, stored)), deleted: false };
}

/** DELETE of one object. */
export function deleteObject(
  engine: Engine,
  def: ResourceDef,
  namespace: string | undefined,
  name: string,
  opts: DeleteOptions = {},
): DeleteResult {
  const stored = engine.getStored(def, namespace, name);
  if (!stored) throw notFound(def, name);
  checkPreconditions(def, stored, opts);
  if (def.storageKey === '/namespaces') return deleteNamespace(engine, def, stored, opts);
  if (def.storageKey === 'apiextensions.k8s.io/customresourcedefinitions')
    return deleteCrd(engine, def, stored, opts);
  const { policy, explicit } = policyOf(def, opts);
  const requested = opts.gracePeriodSeconds;
  const graceful = def.strategy.gracePeriod?.(stored);
  const grace = graceful === undefined ? 0 : requested !== undefined && requested >= 0 ? requested : graceful;
  const finalizers = gcFinalizers(stored.metadata.finalizers ?? [], policy, explicit);
  const meta = stored.metadata;

  if (meta.deletionTimestamp) {
    // Already being deleted: a shorter grace period or a new propagation policy may still apply.
    let next: KObject | undefined;
    const currentGrace = meta.deletionGracePeriodSeconds ?? 0;
    if (grace < currentGrace) {
      next = { ...stored, metadata: clone(meta) };
      next.metadata.deletionGracePeriodSeconds = grace;
      next.metadata.deletionTimestamp = timestamp(Date.now() + grace * 1000);
    }
    if (explicit && JSON.stringify(finalizers) !== JSON.stringify(meta.finalizers ?? [])) {
      next ??= { ...stored, metadata: clone(meta) };
      if (finalizers.length) next.metadata.finalizers = finalizers;
      else delete next.metadata.finalizers;
    }
    const after = next ?? stored;
    if ((after.metadata.finalizers ?? []).length === 0 && after.metadata.deletionGracePeriodSeconds === 0) {
      if (opts.dryRun) return { object: engine.served(def, after), deleted: true };
      return { object: engine.served(def, engine.store.remove(def.storageKey, stored)), deleted: true };
    }
    if (!next || opts.dryRun) return { object: engine.served(def, after), deleted: false };
    return { object: engine.served(def, engine.store.update(def.storageKey, next, stored)), deleted: false };
  }

  if (grace > 0 || finalizers.length > 0) {
    const next = markDeleting(stored, grace, finalizers);
    if (opts.dryRun) return { object: engine.served(def, next), deleted: false };
    return { object: engine.served(def, engine.store.update(def.storageKey, next, stored)), deleted: false };
  }
  if (opts.dryRun) return { object: engine.served(def, stored), deleted: true };
  return { object: engine.served(def, engine.store.remove(def.storageKey, stored)), deleted: true };
}

/** DELETE on a collection: every object the selectors match. */
export function deleteCollection(
  engine: Engine,
  def: ResourceDef,
  namespace: string | undefined,
  query: ListQuery,
  opts: DeleteOptions = {},
): KObject[] {
  const { items } = engine.list(def, namespace, {
    labelSelector: query.labelSelector,
    fieldSelector: query.fieldSelector,
  });
  const out: KObject[] = [];
  for (const item of items) {
    try {
      out.push(deleteObject(engine, def, item.metadata.namespace, item.metadata.name!, opts).object);
    } catch {
      // gone in the meantime
    }
  }
  return out;
}
