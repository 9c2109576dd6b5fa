// reconcile-member: keeps one EtcdMember's PVC and Pod in line with the member and etcd's view of
// it (shared/reconcile/member.ts). Entry point for the functions framework (FUNCTION_TARGET).
import * as ff from '@google-cloud/functions-framework';
import { eventFunction, type EventHandler } from '../../shared/events/handler.ts';
import { reconcileMember } from '../../shared/reconcile/member.ts';
import { defaultContext, type Context } from '../../shared/runtime/context.ts';
import { FUNCTION_NAME, memberTarget } from './targets.ts';

/** The handler over a given context (tests pass their own; the context is created on first use). */
export function createHandler(context: () => Context = defaultContext): EventHandler {
  return async event => {
    const target = memberTarget(event);
    if (target.kind === 'ignore') return { result: 'done', summary: target.summary };
    return reconcileMember(context(), target);
  };
}

export const handler: EventHandler = createHandler();

ff.http(FUNCTION_NAME, eventFunction(FUNCTION_NAME, handler));
