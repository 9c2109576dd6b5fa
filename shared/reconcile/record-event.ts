// Kubernetes Events are for people reading `kubectl describe`: best effort, never a reason to fail
// or retry a step that already happened. The same Event said again (same object, type, reason and
// message) is one Event whose count and lastTimestamp grow, as client-go's recorder aggregates
// them, so a step repeated on every event (a held deletion, a wait) does not flood the namespace.
import type { CoreV1Event } from '@kubernetes/client-node';
import { buildEvent, type EventContent } from '../builders/k8s-event.ts';
import type { KubeObject, KubeObjects } from '../k8s/objects.ts';
import { log } from '../log.ts';
import type { Context } from '../runtime/context.ts';

type Event = CoreV1Event & KubeObject;

/**
 * Creates the Event, or counts it once more when it exists. Only the patch verb is needed: the
 * first patch moves lastTimestamp and answers the stored count, the second sets count + 1 on that
 * resourceVersion (a concurrent writer's count wins; the Event is not worth a retry loop).
 */
export async function writeEvent(kube: KubeObjects, event: CoreV1Event): Promise<void> {
  const created = await kube.create(event);
  if (created.kind !== 'already-exists') return;
  const ref = {
    apiVersion: 'v1',
    kind: 'Event',
    namespace: event.metadata.namespace ?? '',
    name: event.metadata.name ?? '',
  };
  const touched = await kube.mergePatch<Event>(ref, { lastTimestamp: event.lastTimestamp });
  if (touched.kind !== 'written') return;
  const { count, metadata } = touched.object;
  await kube.mergePatch<Event>(ref, {
    count: (count ?? 1) + 1,
    metadata: { resourceVersion: metadata.resourceVersion },
  });
}

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
    await writeEvent(ctx.kube, event);
  } catch (err) {
    log.warn({ err, reason: content.reason }, 'could not record a Kubernetes Event');
  }
}
