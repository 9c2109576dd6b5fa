// The cluster's two Services (headless for the members' names, client for the voters): desired and
// drift from shared/builders/services.ts, the changes that bring them there.
import type { KubeObject } from '../../k8s/objects.ts';
import { buildClientService, buildHeadlessService, serviceDrift } from '../../builders/services.ts';
import type { ClusterState } from '../cluster/types.ts';
import type { ObjectChange, OwnedChanges } from './types.ts';

/** The changes that make both Services as wanted; undefined when they already are. */
export function servicesChanges(state: ClusterState): OwnedChanges | undefined {
  const namespace = state.cluster.metadata.namespace ?? '';
  const wanted = [
    [state.services.headless, buildHeadlessService(state.cluster)],
    [state.services.client, buildClientService(state.cluster)],
  ] as const;
  const changes: ObjectChange[] = [];
  for (const [existing, desired] of wanted) {
    if (!existing) {
      changes.push({ kind: 'create', object: desired as KubeObject });
      continue;
    }
    const patch = serviceDrift(existing, desired);
    if (!patch) continue;
    const ref = {
      apiVersion: desired.apiVersion ?? 'v1',
      kind: desired.kind ?? '',
      namespace,
      name: desired.metadata?.name ?? '',
    };
    changes.push({ kind: 'patch', ref, patch: patch as unknown as Record<string, unknown> });
  }
  if (changes.length === 0) return undefined;
  return { changes, summary: 'Services in place' };
}
