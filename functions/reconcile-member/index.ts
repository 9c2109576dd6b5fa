// reconcile-member: keeps one EtcdMember's PVC and Pod in line with the member and etcd's view of
// it (shared/reconcile/member.ts). Entry point for the functions framework (FUNCTION_TARGET).
import { inWatchedNamespaces } from '../../shared/runtime/watched.ts';
import * as ff from '@google-cloud/functions-framework';
import { API_VERSION, ETCD_MEMBER } from '../../shared/api/group.ts';
import { eventFunction, type EventHandler, type HandlerOutcome } from '../../shared/events/handler.ts';
import { reconcileMember } from '../../shared/reconcile/member.ts';
import { RESYNC_CONCURRENCY, resyncEach, resyncSummary } from '../../shared/reconcile/resync-each.ts';
import { resyncGate } from '../../shared/reconcile/resync-gate.ts';
import { defaultContext, type Context } from '../../shared/runtime/context.ts';
import { FUNCTION_NAME, memberTarget } from './targets.ts';

/** The handler over a given context (tests pass their own; the context is created on first use). */
export function createHandler(context: () => Context = defaultContext): EventHandler {
  // One per handler (per process): full resyncs coalesced, at most one running and one queued.
  const gate = resyncGate(FUNCTION_NAME);
  return async event => {
    const target = memberTarget(event);
    if (target.kind === 'ignore') return { result: 'done', summary: target.summary };
    if (target.kind === 'all-members') return gate(() => resyncAll(context()));
    return reconcileMember(context(), { namespace: target.namespace, name: target.name });
  };
}

/** The tick: every member gets one step, each on its own (one that throws does not stop the rest). */
async function resyncAll(ctx: Context): Promise<HandlerOutcome> {
  const members = await inWatchedNamespaces(ctx, ns => ctx.kube.list(API_VERSION, ETCD_MEMBER.kind, ns));
  const refs = members.map(m => ({ namespace: m.metadata.namespace ?? '', name: m.metadata.name ?? '' }));
  const result = await resyncEach(ETCD_MEMBER.kind, refs, ref => reconcileMember(ctx, ref), {
    now: ctx.now,
    concurrency: RESYNC_CONCURRENCY,
    ...(ctx.settings.resyncBudgetMs !== undefined && { budgetMs: ctx.settings.resyncBudgetMs }),
  });
  return {
    result: 'done',
    summary: resyncSummary('member(s)', members.length, result),
    details: result.details,
  };
}

export const handler: EventHandler = createHandler();

ff.http(FUNCTION_NAME, eventFunction(FUNCTION_NAME, handler));
