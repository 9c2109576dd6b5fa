// dead-letter: the dead-letter sink of every Trigger. Each event that exhausted its retries becomes
// one warning log line and, when it names an etcdfn object that exists, one Kubernetes Event (reason
// EventDeliveryFailed) on it, so `kubectl describe` and `kubectl get events` show it. Always answers 202: a dead letter is never
// retried. Entry point for the functions framework (FUNCTION_TARGET=dead-letter).
import * as ff from '@google-cloud/functions-framework';
import type { Request, Response } from 'express';
import type { EtcdCluster, EtcdMember, EtcdSnapshot, EtcdSnapshotSchedule } from '../../shared/api/types.ts';
import { buildEvent } from '../../shared/builders/k8s-event.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { log } from '../../shared/log.ts';
import { writeEvent } from '../../shared/reconcile/record-event.ts';
import { defaultContext, type Context } from '../../shared/runtime/context.ts';
import { attributesOf, describeDeadLetter, FUNCTION_NAME } from './letter.ts';

/** The kinds a dead letter may write an Event about (functions/dead-letter/letter.ts). */
type EtcdfnObject = (EtcdCluster | EtcdMember | EtcdSnapshot | EtcdSnapshotSchedule) & KubeObject;

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
        // Only about an object that exists (a forged event can name anything): read it first.
        const read = await ctx.kube.get<EtcdfnObject>(letter.involved);
        if (read.kind === 'found') {
          const involved = { ...letter.involved, uid: read.object.metadata?.uid ?? '' };
          await writeEvent(
            ctx.kube,
            buildEvent(involved, letter.content, ctx.now(), { instance: FUNCTION_NAME }),
          );
        } else {
          log.info(
            { object: letter.fields.object },
            'the dead letter names no existing etcdfn object: no Event',
          );
        }
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
