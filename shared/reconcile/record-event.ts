// Kubernetes Events are for people reading `kubectl describe`: best effort, never a reason to fail
// or retry a step that already happened.
import { buildEvent, type EventContent } from '../builders/k8s-event.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { log } from '../log.ts';
import type { Context } from '../runtime/context.ts';

export async function recordEvent(
  ctx: Context,
  involved: KubeObject,
  content: EventContent,
  instance: string,
): Promise<void> {
  const event = buildEvent(
    {
      apiVersion: involved.apiVersion ?? '',
      kind: involved.kind ?? '',
      name: involved.metadata.name ?? '',
      namespace: involved.metadata.namespace ?? '',
      uid: involved.metadata.uid ?? '',
    },
    content,
    ctx.now(),
    { instance },
  );
  try {
    await ctx.kube.create(event);
  } catch (err) {
    log.warn({ err, reason: content.reason }, 'could not record a Kubernetes Event');
  }
}
