// PATCH of an object or its status: apply the patch to the current state, then write it as an update
// with the patched resourceVersion as precondition. Server-side apply creates a missing object.

import { apiVersionOf } from './registry.ts';
import { badRequest, conflict, notFound } from './errors.ts';
import type { Engine } from './operations.ts';
import { APPLY_PATCH, applyPatchBody, checkPatchType, parseApplyBody } from './patch.ts';
import type { KObject, ResourceDef, WriteKind, WriteOptions } from './types.ts';
import { clone } from './util.ts';

export function patchObject(
  engine: Engine,
  def: ResourceDef,
  target: { namespace: string | undefined; name: string },
  patch: { type: string; raw: string },
  opts: WriteOptions = {},
): { object: KObject; created: boolean } {
  const { namespace, name } = target;
  const kind: WriteKind = opts.subresource === 'status' ? 'status' : 'main';
  checkPatchType(def, patch.type);
  if (patch.type === APPLY_PATCH && !opts.fieldManager) {
    throw badRequest(
      'PATCH requests with apply must have a fieldManager (query parameter fieldManager is required)',
    );
  }
  const stored = engine.getStored(def, namespace, name);
  if (!stored) {
    if (patch.type !== APPLY_PATCH || kind !== 'main') throw notFound(def, name);
    const body = parseApplyBody(patch.raw);
    if (body.metadata.name && body.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    body.metadata.name = name;
    return { object: engine.create(def, namespace, body, opts), created: true };
  }
  const current = clone(engine.served(def, stored));
  const patched = applyPatchBody(current, patch.type, patch.raw);
  if (patched.apiVersion !== apiVersionOf(def.group, def.version) || patched.kind !== def.kind) {
    throw badRequest(
      `the patch may not change apiVersion or kind (${String(patched.apiVersion)}, ${String(patched.kind)})`,
    );
  }
  if (patched.metadata.name !== name) {
    throw badRequest(
      `the name of the object (${String(patched.metadata.name)}) does not match the name on the URL (${name})`,
    );
  }
  const rv = patched.metadata.resourceVersion;
  if (rv && rv !== stored.metadata.resourceVersion) throw conflict(def, name);
  return { object: engine.applyUpdate(def, stored, patched, opts, kind), created: false };
}
