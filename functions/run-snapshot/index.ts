// run-snapshot: takes on-demand EtcdSnapshots to S3 (shared/reconcile/snapshot.ts). Entry point for
// the functions framework (FUNCTION_TARGET).
import * as ff from '@google-cloud/functions-framework';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { API_VERSION, ETCD_SNAPSHOT } from '../../shared/api/group.ts';
import { eventFunction, type EventHandler, type HandlerOutcome } from '../../shared/events/handler.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { isFinished } from '../../shared/plan/snapshot-plan.ts';
import { reconcileSnapshot } from '../../shared/reconcile/snapshot.ts';
import { defaultContext, type Context } from '../../shared/runtime/context.ts';
import { FUNCTION_NAME, snapshotTarget } from './targets.ts';

/** The handler over a given context (tests pass their own; the context is created on first use). */
export function createHandler(context: () => Context = defaultContext): EventHandler {
  return async event => {
    const target = snapshotTarget(event);
    if (target.kind === 'ignore') return { result: 'done', summary: target.summary };
    if (target.kind === 'unfinished-snapshots') return resyncUnfinished(context());
    return reconcileSnapshot(context(), { namespace: target.namespace, name: target.name });
  };
}

/** The tick: every snapshot not Complete or Failed, one after the other. */
async function resyncUnfinished(ctx: Context): Promise<HandlerOutcome> {
  const all = await ctx.kube.list<EtcdSnapshot & KubeObject>(API_VERSION, ETCD_SNAPSHOT.kind, '');
  const unfinished = all.filter(s => !isFinished(s));
  const summaries: string[] = [];
  for (const snapshot of unfinished) {
    const ref = { namespace: snapshot.metadata.namespace ?? '', name: snapshot.metadata.name ?? '' };
    const outcome = await reconcileSnapshot(ctx, ref);
    summaries.push(
      `${ref.namespace}/${ref.name}: ${outcome.result === 'done' ? outcome.summary : `retry: ${outcome.reason}`}`,
    );
  }
  return {
    result: 'done',
    summary: `resync of ${unfinished.length} unfinished snapshot(s) of ${all.length}`,
    details: summaries,
  };
}

export const handler: EventHandler = createHandler();

ff.http(FUNCTION_NAME, eventFunction(FUNCTION_NAME, handler));
