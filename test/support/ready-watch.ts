// Follows every change of a cluster's Pods through a watch (from the resourceVersion of a list, so
// no change between the two is missed) and keeps the fewest Ready Pods ever seen at once. Unlike a
// sampling loop it cannot miss a short dip: each Pod update is one watch event.
import { CoreV1Api, Watch, type KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../../shared/k8s/objects.ts';

interface PodLike extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
}

export interface ReadinessWatch {
  /** The fewest Ready, not-deleting Pods seen at any moment since the watch started. */
  fewest(): number;
  /** Every watch event seen, as "TYPE pod ready|not-ready", for failure messages. */
  seen(): string[];
  stop(): void;
}

const readyNow = (pod: PodLike): boolean =>
  !pod.metadata.deletionTimestamp &&
  pod.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True') === true;

export async function watchReadiness(
  kc: KubeConfig,
  namespace: string,
  labelSelector: string,
): Promise<ReadinessWatch> {
  const path = `/api/v1/namespaces/${namespace}/pods`;
  const list = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace, labelSelector });
  const ready = new Map((list.items as PodLike[]).map(p => [p.metadata.name ?? '', readyNow(p)]));
  const count = () => [...ready.values()].filter(Boolean).length;
  let fewest = count();
  const seen: string[] = [];
  let failure: unknown;
  let stopped = false;
  const request = await new Watch(kc).watch(
    path,
    { labelSelector, resourceVersion: list.metadata?.resourceVersion },
    (type: string, pod: PodLike) => {
      const name = pod.metadata?.name ?? '';
      const isReady = type !== 'DELETED' && readyNow(pod);
      ready.set(name, isReady);
      seen.push(`${type} ${name} ${isReady ? 'ready' : 'not-ready'}`);
      fewest = Math.min(fewest, count());
    },
    // A watch that ends before stop() may have missed changes: that fails the reading.
    (err: unknown) => {
      if (!stopped) failure = err ?? new Error('the watch ended before it was stopped');
    },
  );
  return {
    fewest: () => {
      if (failure)
        throw new Error(
          `the Pod watch failed: ${failure instanceof Error ? failure.message : JSON.stringify(failure)}`,
        );
      return fewest;
    },
    seen: () => [...seen],
    stop: () => {
      stopped = true;
      request.abort();
    },
  };
}
