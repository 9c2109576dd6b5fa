// The I/O of a wake-up PingSource (shared/plan/wake/wake.ts): read it, then have its drift applied
// by the generic apply (shared/reconcile/owned-apply.ts). A failure (no PingSource API in standalone
// mode without Knative's CRDs, the API server unavailable) is said in the summary, not thrown: the
// object itself was handled, and the resync tick looks at it again.
import type { KubeObject } from '../k8s/objects.ts';
import type { PingSource } from '../builders/ping-source.ts';
import { pingSourceChange, pingSourceRef } from '../plan/owned/ping-sources.ts';
import { wakeStep, type WakeOwner } from '../plan/wake/wake.ts';
import type { Context } from '../runtime/context.ts';
import { applyChange } from './owned-apply.ts';

/** Brings `owner`'s wake-up `name` to `desired`; a one-line summary, or '' when nothing changed. */
export async function ensureWake(
  ctx: Context,
  owner: WakeOwner & KubeObject,
  name: string,
  desired: PingSource | undefined,
): Promise<string> {
  const ref = pingSourceRef(owner.metadata.namespace ?? '', name);
  try {
    const existing = await ctx.kube.find<PingSource>(ref);
    const step = wakeStep(owner, desired, existing);
    if (step.kind === 'none') return '';
    if (step.kind === 'conflict') return step.message;
    const result = await applyChange(ctx.kube, pingSourceChange(step, ref.namespace));
    if (result.kind === 'invalid') return `PingSource ${name} refused: ${result.message}`;
    switch (step.kind) {
      case 'create':
        return `PingSource ${name} ${result.kind === 'created' ? `created: looked at again on "${step.object.spec.schedule}"` : result.kind}`;
      case 'update':
        return `PingSource ${name} ${result.kind === 'written' ? `now on ${step.object.spec.schedule}` : result.kind}`;
      case 'delete':
        return `PingSource ${name} deleted (no longer waiting)`;
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return `wake-up PingSource ${name} not written (${message}): looked at again on the resync tick`;
  }
}
