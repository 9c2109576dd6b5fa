// reconcile-cluster's event handler: map the event to clusters, reconcile each one step.
import { inWatchedNamespaces } from '../../shared/runtime/watched.ts';
import { API_VERSION, ETCD_CLUSTER } from '../../shared/api/group.ts';
import type { EventHandler, HandlerOutcome } from '../../shared/events/handler.ts';
import { reconcileCluster } from '../../shared/reconcile/cluster.ts';
import { RESYNC_CONCURRENCY, resyncEach, resyncSummary } from '../../shared/reconcile/resync-each.ts';
import { resyncGate } from '../../shared/reconcile/resync-gate.ts';
import { defaultContext, type Context } from '../../shared/runtime/context.ts';
import { recordClusterPhases } from '../../shared/runtime/metrics.ts';
import type { EtcdCluster } from '../../shared/api/types.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { clusterTarget } from './targets.ts';

export function clusterHandler(context: () => Context = defaultContext): EventHandler {
  // One per handler (per process): full resyncs coalesced, at most one running and one queued.
  const gate = resyncGate('reconcile-cluster');
  return async event => {
    const target = clusterTarget(event);
    const ctx = context();
    if (target.kind === 'ignore') return { result: 'done', summary: target.why };
    if (target.kind === 'cluster')
      return reconcileCluster(
        ctx,
        { namespace: target.namespace, name: target.name },
        { woken: target.woken === true },
      );
    return gate(() => resyncAll(ctx));
  };
}

/** The tick: every cluster gets one step, so a cluster whose events were lost still converges. */
async function resyncAll(ctx: Context): Promise<HandlerOutcome> {
  const clusters = await inWatchedNamespaces(ctx, ns =>
    ctx.kube.list<EtcdCluster & KubeObject>(API_VERSION, ETCD_CLUSTER.kind, ns),
  );
  recordClusterPhases(clusters.map(c => c.status?.phase));
  const refs = clusters.map(c => ({ namespace: c.metadata.namespace ?? '', name: c.metadata.name ?? '' }));
  const result = await resyncEach(ETCD_CLUSTER.kind, refs, ref => reconcileCluster(ctx, ref), {
    now: ctx.now,
    concurrency: RESYNC_CONCURRENCY,
    ...(ctx.settings.resyncBudgetMs !== undefined && { budgetMs: ctx.settings.resyncBudgetMs }),
  });
  return {
    result: 'done',
    summary: resyncSummary('cluster(s)', clusters.length, result),
    details: result.details,
  };
}

export const handler: EventHandler = clusterHandler();
