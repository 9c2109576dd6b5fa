// The scale subresource of custom resources, served as autoscaling/v1 Scale.

import { conflict, fieldInvalid, invalid, notFound } from './errors.ts';
import type { Engine } from './operations.ts';
import { applyPatchBody } from './patch.ts';
import type { KObject, ResourceDef, WriteOptions } from './types.ts';
import { clone, getPath, isObject, setPath } from './util.ts';

const SCALE_DEF = { kind: 'Scale', group: 'autoscaling' };

export function scaleOf(def: ResourceDef, obj: KObject): KObject {
  const spec = def.scale!;
  const replicas = getPath(obj, spec.specReplicasPath);
  const statusReplicas = getPath(obj, spec.statusReplicasPath);
  const selector = spec.labelSelectorPath ? getPath(obj, spec.labelSelectorPath) : undefined;
  const m = obj.metadata;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: typeof replicas === 'number' ? replicas : 0 },
    status: {
      replicas: typeof statusReplicas === 'number' ? statusReplicas : 0,
      selector: typeof selector === 'string' ? selector : '',
    },
  };
}

export function getScale(
  engine: Engine,
  def: ResourceDef,
  namespace: string | undefined,
  name: string,
): KObject {
  return scaleOf(def, engine.get(def, namespace, name));
}

/** PUT /scale: set the replicas of the object from a Scale, with the Scale's resourceVersion as precondition. */
export function updateScale(
  engine: Engine,
  def: ResourceDef,
  target: { namespace: string | undefined; name: string },
  body: unknown,
  opts: WriteOptions = {},
): KObject {
  const { namespace, name } = target;
  const stored = engine.getStored(def, namespace, name);
  if (!stored) throw notFound(def, name);
  const scale = (isObject(body) ? body : {}) as KObject;
  const rv = isObject(scale.metadata) ? scale.metadata.resourceVersion : undefined;
  if (rv && rv !== stored.metadata.resourceVersion) throw conflict(def, name);
  const replicas = isObject(scale.spec) ? scale.spec.replicas : undefined;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw invalid(SCALE_DEF, name, [
      fieldInvalid('spec.replicas', replicas ?? null, 'must be greater than or equal to 0'),
    ]);
  }
  const next = clone(engine.served(def, stored));
  setPath(next, def.scale!.specReplicasPath, replicas);
  const written = engine.applyUpdate(def, stored, next, { ...opts, subresource: undefined }, 'main');
  return scaleOf(def, written);
}

/** PATCH /scale: the patch applies to the Scale, then as PUT /scale. */
export function patchScale(
  engine: Engine,
  def: ResourceDef,
  target: { namespace: string | undefined; name: string },
  patch: { type: string; raw: string },
  opts: WriteOptions = {},
): KObject {
  const current = getScale(engine, def, target.namespace, target.name);
  const patched = applyPatchBody(current, patch.type, patch.raw);
  return updateScale(engine, def, target, patched, opts);
}
