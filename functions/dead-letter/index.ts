// dead-letter: the dead-letter sink of every Trigger. Each event that exhausted its retries becomes
// one warning log line and one Kubernetes Event (reason EventDeliveryFailed) on the object it named,
// so `kubectl describe` and `kubectl get events` show it. Always answers 202: a dead letter is never
// retried. Entry point for the functions framework (FUNCTION_TARGET=dead-letter).
import * as ff from '@google-cloud/functions-framework';
import type { Request, Response } from 'express';
import { buildEvent } from '../../shared/builders/k8s-event.ts';
import { log } from '../../shared/log.ts';
import { defaultContext, type Context } from '../../shared/runtime/context.ts';
import { attributesOf, describeDeadLetter, FUNCTION_NAME } from './letter.ts';

export function createDeadLetterHandler(context: () => Context = defaultContext) {
  return async (req: Request, res: Response): Promise<void> => {
    if (req.method === 'GET' || req.method === 'HEAD') {
      res.status(200).json({ function: FUNCTION_NAME, ready: true });
      return;
    }
    const letter = describeDeadLetter(attributesOf(req.headers, req.body));
    log.warn({ function: FUNCTION_NAME, ...letter.fields }, 'event dead-lettered');
    if (letter.involved) {
      const ctx = context();
      try {
        await ctx.kube.create(
          buildEvent(letter.involved, letter.content, ctx.now(), { instance: FUNCTION_NAME }),
        );
      } catch (err) {
        log.warn(
          { err, object: letter.fields.object },
          'could not record the dead letter as a Kubernetes Event',
        );
      }
    }
    res.status(202).json({ recorded: letter.fields.object });
  };
}

ff.http(FUNCTION_NAME, createDeadLetterHandler());
