// The locked target: the spec the operator is working toward, copied into status.observed, so a
// spec edit mid-flight waits until the current target is reached (or its deadline passes).
import { isDeepStrictEqual } from 'node:util';
import type { EtcdCluster, ObservedClusterSpec } from '../../api/etcd-cluster.ts';
import {
  DEFAULT_PROGRESS_DEADLINE_SECONDS,
  DEFAULT_REPLICAS,
  DEFAULT_STORAGE_MEDIUM,
  DEFAULT_STORAGE_SIZE,
} from '../../api/defaults.ts';
import { toKubeTime } from '../../conditions.ts';
import { compareQuantities, parseQuantity } from '../../quantity.ts';

export function observedFromSpec(cluster: EtcdCluster): ObservedClusterSpec {
  const spec = cluster.spec;
  const observed: ObservedClusterSpec = {
    replicas: spec.replicas ?? DEFAULT_REPLICAS,
    version: spec.version,
    storage: {
      size: spec.storage?.size ?? DEFAULT_STORAGE_SIZE,
      medium: spec.storage?.medium ?? DEFAULT_STORAGE_MEDIUM,
    },
  };
  if (spec.storage?.storageClassName !== undefined)
    observed.storage.storageClassName = spec.storage.storageClassName;
  for (const key of [
    'resources',
    'affinity',
    'topologySpreadConstraints',
    'additionalMetadata',
    'options',
    'imagePullSecrets',
  ] as const) {
    if (spec[key] !== undefined)
      (observed as unknown as Record<string, unknown>)[key] = structuredClone(spec[key]);
  }
  return observed;
}

/** True when the spec asks for something other than the locked target. */
export function specDiffersFromObserved(cluster: EtcdCluster): boolean {
  const observed = cluster.status?.observed;
  if (!observed) return true;
  const wanted = observedFromSpec(cluster);
  const { storage: a, ...restA } = wanted;
  const { storage: b, ...restB } = observed;
  const sameSize =
    compareQuantities(
      parseQuantity(String(a.size)),
      parseQuantity(String(b.size ?? DEFAULT_STORAGE_SIZE)),
    ) === 0;
  return (
    !sameSize ||
    (a.medium ?? '') !== (b.medium ?? '') ||
    !isDeepStrictEqual(stripUndefined(restA), stripUndefined(restB))
  );
}

export function deadlineFrom(cluster: EtcdCluster, now: Date): string {
  const seconds = cluster.spec.progressDeadlineSeconds ?? DEFAULT_PROGRESS_DEADLINE_SECONDS;
  return toKubeTime(new Date(now.getTime() + seconds * 1000));
}

export function deadlinePassed(cluster: EtcdCluster, now: Date): boolean {
  const deadline = cluster.status?.progressDeadline;
  return deadline !== undefined && Date.parse(deadline) <= now.getTime();
}

function stripUndefined(value: object): unknown {
  return JSON.parse(JSON.stringify(value));
}
