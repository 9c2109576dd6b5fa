// The one apply of every owned object's changes (shared/plan/owned/): made as planned, in order.
// Each is idempotent or detectable (KubeObjects: AlreadyExists on create and NotFound on delete are
// success), so a crash between two of them converges on the next invocation.
import type { KubeObject, ObjectRef } from '../k8s/objects.ts';
import type { OwnedChanges } from '../plan/owned/types.ts';
import type { Context } from '../runtime/context.ts';
import { crashPoint, type CrashPoint } from '../runtime/crash.ts';
import type { ActResult } from './act-result.ts';

/** `point`: where a crash may be injected after each change (shared/runtime/crash.ts). */
export async function applyOwned(ctx: Context, owned: OwnedChanges, point?: CrashPoint): Promise<ActResult> {
  for (const change of owned.changes) {
    if (change.kind === 'create') {
      const object = ownedObject(change.object);
      await ctx.kube.create(object);
    } else if (change.kind === 'patch') {
      const ref = ownedRef(change.ref);
      await ctx.kube.mergePatch(ref, change.patch);
    } else {
      const ref = deletableRef(change.ref);
      await ctx.kube.delete(ref);
    }
    if (point) await crashPoint(point);
  }
  return { ok: true, summary: owned.summary };
}

// The kinds a cluster owns beside its members, written out: a change about any other kind is a bug,
// and the RBAC scan (test/support/rbac-calls.ts) reads the kinds these calls may touch from here.
function ownedRef(ref: ObjectRef): ObjectRef {
  if (ref.kind !== 'Service' && ref.kind !== 'PodDisruptionBudget' && ref.kind !== 'NetworkPolicy')
    throw new Error(`not a kind a cluster owns: ${ref.kind}`);
  return ref;
}

function ownedObject(object: KubeObject): KubeObject {
  const kind = object.kind;
  if (kind !== 'Service' && kind !== 'PodDisruptionBudget' && kind !== 'NetworkPolicy')
    throw new Error(`not a kind a cluster owns: ${kind}`);
  return object;
}

/** Services are kept while the cluster lives (only patched); the others may go with their policy. */
function deletableRef(ref: ObjectRef): ObjectRef {
  if (ref.kind !== 'PodDisruptionBudget' && ref.kind !== 'NetworkPolicy')
    throw new Error(`not a kind a cluster's plan deletes: ${ref.kind}`);
  return ref;
}
