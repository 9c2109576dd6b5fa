// The cluster's PodDisruptionBudget: minAvailable keeps quorum through voluntary disruptions, so it
// follows the number of voters; none while there is no voter. Desired and drift from
// shared/builders/pdb.ts.
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { buildPdb, pdbDrift } from '../../builders/pdb.ts';
import type { KubeObject } from '../../k8s/objects.ts';
import { podDisruptionBudgetName } from '../../names.ts';
import { runningMembers } from '../cluster/members.ts';
import type { ClusterState } from '../cluster/types.ts';
import type { OwnedChanges } from './types.ts';

/** Voters as etcd counts them; as the members last recorded when etcd did not answer. */
export function voterCount(state: ClusterState): number {
  if (state.etcd?.reachable) return state.etcd.members.filter(e => !e.isLearner).length;
  return runningMembers(state).filter(m => m.status?.isVoter === true).length;
}

export function desiredPdb(state: ClusterState): V1PodDisruptionBudget | undefined {
  return buildPdb(state.cluster, { voters: voterCount(state) });
}

/** The change that makes the PodDisruptionBudget as wanted; undefined when it already is. */
export function pdbChanges(state: ClusterState): OwnedChanges | undefined {
  const desired = desiredPdb(state);
  const ref = {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    namespace: state.cluster.metadata.namespace ?? '',
    name: podDisruptionBudgetName(state.cluster.metadata.name ?? ''),
  };
  if (!desired) {
    if (!state.pdb) return undefined;
    return {
      changes: [{ kind: 'delete', ref }],
      summary: 'no voters: PodDisruptionBudget removed',
    };
  }
  const minAvailable = String(desired.spec?.minAvailable);
  if (!state.pdb) {
    return {
      changes: [{ kind: 'create', object: desired as KubeObject }],
      summary: `PodDisruptionBudget created (minAvailable ${minAvailable})`,
    };
  }
  const patch = pdbDrift(state.pdb, desired);
  if (!patch) return undefined;
  return {
    changes: [{ kind: 'patch', ref, patch: patch as unknown as Record<string, unknown> }],
    summary: `PodDisruptionBudget minAvailable ${minAvailable}`,
  };
}
