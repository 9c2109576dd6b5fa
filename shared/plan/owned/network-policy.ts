// The cluster's NetworkPolicy (spec.networkPolicy): who may reach the client, peer and metrics
// ports. Desired and drift from shared/builders/network-policy.ts.
import type { V1NetworkPolicy } from '@kubernetes/client-node';
import { buildNetworkPolicy, networkPolicyDrift } from '../../builders/network-policy.ts';
import type { KubeObject } from '../../k8s/objects.ts';
import { networkPolicyName } from '../../names.ts';
import type { ClusterState } from '../cluster/types.ts';
import type { OwnedChanges } from './types.ts';

export function desiredNetworkPolicy(state: ClusterState): V1NetworkPolicy | undefined {
  return buildNetworkPolicy(state.cluster, { operatorNamespace: state.operatorNamespace });
}

/** The change that makes the NetworkPolicy as wanted; undefined when it already is. */
export function networkPolicyChanges(state: ClusterState): OwnedChanges | undefined {
  const desired = desiredNetworkPolicy(state);
  const ref = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    namespace: state.cluster.metadata.namespace ?? '',
    name: networkPolicyName(state.cluster.metadata.name ?? ''),
  };
  if (!desired) {
    if (!state.networkPolicy) return undefined;
    return {
      changes: [{ kind: 'delete', ref }],
      summary: 'NetworkPolicy removed (spec.networkPolicy.enabled is false)',
    };
  }
  if (!state.networkPolicy) {
    return { changes: [{ kind: 'create', object: desired as KubeObject }], summary: 'NetworkPolicy created' };
  }
  const patch = networkPolicyDrift(state.networkPolicy, desired);
  if (!patch) return undefined;
  return { changes: [{ kind: 'patch', ref, patch }], summary: 'NetworkPolicy in place' };
}
