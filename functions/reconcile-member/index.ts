// reconcile-member: keeps one EtcdMember's PVC and Pod in line with the member and etcd's view of
// it (shared/reconcile/member.ts). Entry point for the functions framework (FUNCTION_TARGET).
import * as ff from '@google-cloud/functions-framework';
import { API_VERSION, ETCD_MEMBER } from '../../shared/api/group.ts';
import { eventFunction, type EventHandler, type HandlerOutcome } from '../../shared/events/handler.ts';
import { reconcileMember } from '../../shared/reconcile/member.ts';
import { defaultContext, type Context } from '../../shared/runtime/context.ts';
import { FUNCTION_NAME, memberTarget } from './targets.ts';

/** The handler over a given context (tests pass their own; the context is created on first use). */
export function createHandler(context: () => Context = defaultContext): EventHandler {
  return async event => {
    const target = memberTarget(event);
    if (target.kind === 'ignore') return { result: 'done', summary: target.summary };
    if (target.kind === 'all-members') return resyncAll(context());
    return reconcileMember(context(), { namespace: target.namespace, name: target.name });
  };
}

async function resyncAll(ctx: Context): Promise<HandlerOutcome> {
  const members = await ctx.kube.list(API_VERSION, ETCD_MEMBER.kind, '');
  const summaries: string[] = [];
  for (const member of members) {
    const ref = { namespace: member.metadata.namespace ?? '', name: member.metadata.name ?? '' };
    const outcome = await reconcileMember(ctx, ref);
    summaries.push(
      `${ref.namespace}/${ref.name}: ${outcome.result === 'done' ? outcome.summary : `retry: ${outcome.reason}`}`,
    );
  }
  return { result: 'done', summary: `resync of ${members.length} member(s)`, details: summaries };
}

export const handler: EventHandler = createHandler();

ff.http(FUNCTION_NAME, eventFunction(FUNCTION_NAME, handler));
