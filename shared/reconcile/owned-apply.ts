// The one apply of every owned object's changes (shared/plan/owned/): made as planned, in order.
// Each is idempotent or detectable (KubeObjects: AlreadyExists on create and NotFound on delete are
// success), so a crash between two of them converges on the next invocation.
import type { OwnedChanges } from '../plan/owned/types.ts';
import type { Context } from '../runtime/context.ts';
import { crashPoint, type CrashPoint } from '../runtime/crash.ts';
import type { ActResult } from './act-result.ts';

/** `point`: where a crash may be injected after each change (shared/runtime/crash.ts). */
export async function applyOwned(ctx: Context, owned: OwnedChanges, point?: CrashPoint): Promise<ActResult> {
  for (const change of owned.changes) {
    if (change.kind === 'create') await ctx.kube.create(change.object);
    else if (change.kind === 'patch') await ctx.kube.mergePatch(change.ref, change.patch);
    else await ctx.kube.delete(change.ref);
    if (point) await crashPoint(point);
  }
  return { ok: true, summary: owned.summary };
}
