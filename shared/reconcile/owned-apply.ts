// The one apply of every owned object's changes (shared/plan/owned/): made as planned, in order.
// Each is idempotent or detectable (KubeObjects: AlreadyExists on create and NotFound on delete are
// success, a replace under a stale resourceVersion is a conflict), so a crash between two of them
// converges on the next invocation. What a change writes is never logged here: a Secret's data
// travels only to the API server.
import type {
  CreateResult,
  DeleteResult,
  KubeObject,
  KubeObjects,
  ObjectRef,
  WriteResult,
} from '../k8s/objects.ts';
import type { ObjectChange, ObjectChangeOf as ChangeOf, OwnedChanges } from '../plan/owned/types.ts';
import type { Context } from '../runtime/context.ts';
import { crashPoint, type CrashPoint } from '../runtime/crash.ts';
import type { ActResult } from './act-result.ts';

/** reconcile-cluster's ensure-* steps. `point`: where a crash may be injected after each change. */
export async function applyOwned(ctx: Context, owned: OwnedChanges, point?: CrashPoint): Promise<ActResult> {
  for (const change of owned.changes) {
    await applyChange(ctx.kube, change);
    if (point) await crashPoint(point);
  }
  return { ok: true, summary: owned.summary };
}

/** What the API server answered one change; callers that say what happened switch on it. */
export type ChangeResult = CreateResult<KubeObject> | WriteResult<KubeObject> | DeleteResult;

/** One change, as planned; the unexpected (5xx, network, RBAC) throws, as every KubeObjects call. */
export function applyChange(kube: KubeObjects, change: ChangeOf<'create'>): Promise<CreateResult<KubeObject>>;
export function applyChange(
  kube: KubeObjects,
  change: ChangeOf<'patch' | 'replace'>,
): Promise<WriteResult<KubeObject>>;
export function applyChange(kube: KubeObjects, change: ChangeOf<'delete'>): Promise<DeleteResult>;
export function applyChange(kube: KubeObjects, change: ObjectChange): Promise<ChangeResult>;
export async function applyChange(kube: KubeObjects, change: ObjectChange): Promise<ChangeResult> {
  switch (change.kind) {
    case 'create': {
      const object = creatableObject(change.object);
      return kube.create(object);
    }
    case 'patch': {
      const ref = patchableRef(change.ref);
      return kube.mergePatch(ref, change.patch);
    }
    case 'replace': {
      const object = replaceableObject(change.object);
      return kube.replace(object);
    }
    case 'delete': {
      const ref = deletableRef(change.ref);
      return kube.delete(ref, change.uid ? { uid: change.uid } : {});
    }
  }
}

// The kinds a cluster, a snapshot or a schedule owns, and what may be done to each, written out: a
// change about any other kind (or verb) is a bug, and the RBAC scan (test/support/rbac-calls.ts)
// reads the kinds each call may touch from these bodies.

/** Everything owned is created when missing. */
function creatableObject(object: KubeObject): KubeObject {
  const kind = object.kind;
  if (
    kind !== 'Service' &&
    kind !== 'PodDisruptionBudget' &&
    kind !== 'NetworkPolicy' &&
    kind !== 'PingSource' &&
    kind !== 'Secret' &&
    kind !== 'Certificate'
  )
    throw new Error(`not a kind etcdfn creates as an owned object: ${kind}`);
  return object;
}

/** Services, PDB and NetworkPolicy are patched with only what drifted. */
function patchableRef(ref: ObjectRef): ObjectRef {
  if (ref.kind !== 'Service' && ref.kind !== 'PodDisruptionBudget' && ref.kind !== 'NetworkPolicy')
    throw new Error(`not a kind etcdfn patches as an owned object: ${ref.kind}`);
  return ref;
}

/** PingSources, Secrets and Certificates are written whole, under the resourceVersion read. */
function replaceableObject(object: KubeObject): KubeObject {
  const kind = object.kind;
  if (kind !== 'PingSource' && kind !== 'Secret' && kind !== 'Certificate')
    throw new Error(`not a kind etcdfn replaces as an owned object: ${kind}`);
  return object;
}

/**
 * Services, Secrets and Certificates are kept while their owner lives (the garbage collector takes
 * them with it); PDB and NetworkPolicy may go with their policy, a wake-up once nothing waits.
 */
function deletableRef(ref: ObjectRef): ObjectRef {
  if (ref.kind !== 'PodDisruptionBudget' && ref.kind !== 'NetworkPolicy' && ref.kind !== 'PingSource')
    throw new Error(`not a kind etcdfn deletes as an owned object: ${ref.kind}`);
  return ref;
}
