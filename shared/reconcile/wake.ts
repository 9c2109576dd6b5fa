// The I/O of a wake-up PingSource (shared/plan/wake/wake.ts): read it, then create or delete it. A
// failure (no PingSource API in standalone mode without Knative's CRDs, the API server unavailable)
// is said in the summary, not thrown: the object itself was handled, and the resync tick looks at
// it again.
import type { KubeObject } from '../k8s/objects.ts';
import { PING_SOURCE_API_VERSION, PING_SOURCE_KIND, type PingSource } from '../builders/ping-source.ts';
import { wakeStep, type WakeOwner } from '../plan/wake/wake.ts';
import type { Context } from '../runtime/context.ts';

/** Brings `owner`'s wake-up `name` to `desired`; a one-line summary, or '' when nothing changed. */
export async function ensureWake(
  ctx: Context,
  owner: WakeOwner & KubeObject,
  name: string,
  desired: PingSource | undefined,
): Promise<string> {
  const ref = {
    apiVersion: PING_SOURCE_API_VERSION,
    kind: PING_SOURCE_KIND,
    namespace: owner.metadata.namespace ?? '',
    name,
  };
  try {
    const existing = await ctx.kube.find<PingSource>(ref);
    const step = wakeStep(owner, desired, existing);
    switch (step.kind) {
      case 'none':
        return '';
      case 'conflict':
        return step.message;
      case 'create': {
        const created = await ctx.kube.create<PingSource>(step.object);
        if (created.kind === 'invalid') return `PingSource ${name} refused: ${created.message}`;
        return `PingSource ${name} ${created.kind === 'created' ? `created: looked at again on "${step.object.spec.schedule}"` : created.kind}`;
      }
      case 'update': {
        const written = await ctx.kube.replace<PingSource>(step.object);
        if (written.kind === 'invalid') return `PingSource ${name} refused: ${written.message}`;
        return `PingSource ${name} ${written.kind === 'written' ? `now on ${step.object.spec.schedule}` : written.kind}`;
      }
      case 'delete':
        await ctx.kube.delete(ref, step.uid ? { uid: step.uid } : {});
        return `PingSource ${name} deleted (no longer waiting)`;
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return `wake-up PingSource ${name} not written (${message}): looked at again on the resync tick`;
  }
}
