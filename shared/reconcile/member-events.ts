// Kubernetes Events from reconcile-member and finalize-member. Best effort: an Event that cannot be
// written is logged, never a reason to redo a step that already happened.
import { buildEvent, type EventContent } from '../builders/k8s-event.ts';
import { log } from '../log.ts';
import type { Context } from '../runtime/context.ts';
import { writeEvent } from './record-event.ts';

export interface Involved {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; uid?: string };
}

export async function emitEvents(
  ctx: Context,
  about: Involved,
  contents: readonly EventContent[],
  instance: string,
): Promise<void> {
  const { name, namespace, uid } = about.metadata;
  if (!name || !namespace || !uid) return;
  const involved = { apiVersion: about.apiVersion, kind: about.kind, name, namespace, uid };
  for (const content of contents) {
    const event = buildEvent(involved, content, ctx.now(), { instance });
    try {
      await writeEvent(ctx.kube, event);
    } catch (err) {
      log.warn({ err, reason: content.reason, involved }, 'could not record a Kubernetes Event');
    }
  }
}
