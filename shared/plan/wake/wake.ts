// One-shot waits, the Knative way: while an object waits for something no event of ours announces
// (a cluster's restore for a user's Secret or claim, a snapshot for its cluster or for its retry
// time), a PingSource owned by it fires every minute and names it, so its function looks at it
// again within a minute instead of at the resync tick (10 minutes or more). Once the wait is over
// the PingSource is deleted, so an idle system keeps receiving only the tick. The standalone event
// bridge ticks these PingSources itself (the label it watches, shared with schedules' own timing).
// Pure: shared/reconcile/wake.ts reads it and has the change applied by the generic apply.
import type { KubeObject } from '../../k8s/objects.ts';
import { CLUSTER_LABEL, MANAGED_BY } from '../../names.ts';
import {
  ownedBy,
  sameSink,
  sinkSpec,
  type PingSink,
  PING_SOURCE_API_VERSION,
  PING_SOURCE_KIND,
  SCHEDULE_PING_LABEL,
  type PingSource,
} from '../../builders/ping-source.ts';
import { controllerRef } from '../../builders/owner.ts';
import type { PingSourceDrift } from '../owned/ping-sources.ts';

export const WAKE_SCHEDULE = '* * * * *';

export interface WakeOwner extends KubeObject {
  apiVersion: string;
  kind: string;
}

/** The wake-up PingSource of `owner`, named `name`, its event carrying `{ [dataKey]: {namespace, name} }`. */
export function wakePingSource(
  owner: WakeOwner,
  name: string,
  dataKey: string,
  clusterName: string,
  sink: PingSink,
): PingSource {
  const namespace = owner.metadata.namespace ?? '';
  const data = { [dataKey]: { namespace, name: owner.metadata.name ?? '' } };
  return {
    apiVersion: PING_SOURCE_API_VERSION,
    kind: PING_SOURCE_KIND,
    metadata: {
      name,
      namespace,
      labels: {
        [CLUSTER_LABEL]: clusterName,
        [SCHEDULE_PING_LABEL]: 'true',
        'app.kubernetes.io/managed-by': MANAGED_BY,
      },
      ownerReferences: [controllerRef(owner)],
    },
    spec: {
      schedule: WAKE_SCHEDULE,
      contentType: 'application/json',
      data: JSON.stringify(data),
      sink: sinkSpec(sink),
    },
  };
}

/**
 * The wake-up's drift, in the shape of every owned PingSource (shared/plan/owned/ping-sources.ts):
 * `update` when its timing changed (a defragmentation schedule edited), the existing one with the
 * new spec; `conflict` for a PingSource of that name the owner does not own (left alone).
 */
export type WakeStep = PingSourceDrift;

/** What to do to bring the existing wake (if any) to the desired one; only its timing may change. */
export function wakeStep(
  owner: WakeOwner,
  desired: PingSource | undefined,
  existing: PingSource | undefined,
): WakeStep {
  if (!existing) return desired ? { kind: 'create', object: desired } : { kind: 'none' };
  if (!ownedBy(existing, owner.metadata.uid)) {
    return {
      kind: 'conflict',
      message: `PingSource ${existing.metadata.namespace}/${existing.metadata.name} exists and does not belong to ${owner.kind} ${owner.metadata.name}: left alone, so it is looked at again on the resync tick`,
    };
  }
  if (desired) {
    const have = existing.spec as Partial<PingSource['spec']> | undefined;
    const same =
      have?.schedule === desired.spec.schedule &&
      (have.timezone ?? '') === (desired.spec.timezone ?? '') &&
      sameSink(have.sink, desired.spec.sink);
    return same ? { kind: 'none' } : { kind: 'update', object: { ...existing, spec: desired.spec } };
  }
  return {
    kind: 'delete',
    name: existing.metadata.name ?? '',
    ...(existing.metadata.uid && { uid: existing.metadata.uid }),
  };
}

/** The object a tick's data names under `dataKey`, when the tick came from such a wake-up. */
export function wokenObject(data: unknown, dataKey: string): { namespace: string; name: string } | undefined {
  let value = data;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  const ref = (value as Record<string, { namespace?: unknown; name?: unknown }> | null)?.[dataKey];
  if (!ref || typeof ref.namespace !== 'string' || typeof ref.name !== 'string') return undefined;
  if (!ref.namespace || !ref.name) return undefined;
  return { namespace: ref.namespace, name: ref.name };
}
