// finalize-member: removes a deleted EtcdMember from etcd before letting it go
// (shared/reconcile/finalize.ts). Entry point for the functions framework (FUNCTION_TARGET).
import * as ff from '@google-cloud/functions-framework';
import { eventFunction, type EventHandler } from '../../shared/events/handler.ts';
import { finalizeMember } from '../../shared/reconcile/finalize.ts';
import { defaultContext, type Context } from '../../shared/runtime/context.ts';
import { finalizeTarget, FUNCTION_NAME } from './targets.ts';

/** The handler over a given context (tests pass their own; the context is created on first use). */
export function createHandler(context: () => Context = defaultContext): EventHandler {
  return async event => {
    const target = finalizeTarget(event);
    if (target.kind === 'ignore') return { result: 'done', summary: target.summary };
    return finalizeMember(context(), target);
  };
}

export const handler: EventHandler = createHandler();

ff.http(FUNCTION_NAME, eventFunction(FUNCTION_NAME, handler));
