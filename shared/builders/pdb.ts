// The PodDisruptionBudget over a cluster's voters: a voluntary eviction (a node drain, an
// autoscaler) may never take away more voters than quorum can spare.
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import { DEFAULT_REPLICAS } from '../api/defaults.ts';
import { CLUSTER_LABEL, podDisruptionBudgetName, ROLE_LABEL } from '../names.ts';
import { clusterNameOf, clusterOwnedMetadata } from './cluster-meta.ts';
import { mapMergePatch } from './merge-patch.ts';

/**
 * Quorum of the larger of the voters there are and the voters there will be. Anchoring on the
 * target too means a cluster scaling 3 → 5 is already protected as a 5-member one (3 must stay),
 * and one scaling 5 → 3 keeps the stricter bound until the voters are actually gone.
 */
export function pdbMinAvailable(voters: number, targetReplicas: number): number {
  const anchor = Math.max(voters, targetReplicas);
  return anchor < 1 ? 0 : Math.floor(anchor / 2) + 1;
}

export interface PdbOptions {
  /** Members etcd counts as voters now. */
  voters: number;
  /** The locked target's replicas; defaults to status.observed, then spec. */
  targetReplicas?: number;
}

/** undefined when there are no voters: the caller deletes the PDB (nothing left to protect). */
export function buildPdb(cluster: EtcdCluster, opts: PdbOptions): V1PodDisruptionBudget | undefined {
  if (opts.voters <= 0) return undefined;
  const name = clusterNameOf(cluster);
  const target =
    opts.targetReplicas ?? cluster.status?.observed?.replicas ?? cluster.spec.replicas ?? DEFAULT_REPLICAS;
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: clusterOwnedMetadata(cluster, podDisruptionBudgetName(name)),
    spec: {
      minAvailable: pdbMinAvailable(opts.voters, target),
      selector: { matchLabels: { [CLUSTER_LABEL]: name, [ROLE_LABEL]: 'voter' } },
    },
  };
}

/** A JSON merge patch (RFC 7396) for a PDB's spec. */
export interface PdbPatch {
  spec: {
    minAvailable?: number;
    maxUnavailable?: null;
    selector?: { matchLabels: Record<string, string | null>; matchExpressions?: null };
  };
}

/**
 * What to patch on an existing PDB: minAvailable (it follows the voter count), a maxUnavailable
 * someone set (it cannot coexist with minAvailable), and the selector if it no longer selects
 * exactly our voters. Labels and annotations are left alone. undefined when nothing drifted.
 */
export function pdbDrift(
  existing: V1PodDisruptionBudget,
  desired: V1PodDisruptionBudget,
): PdbPatch | undefined {
  const patch: PdbPatch = { spec: {} };
  const want = desired.spec?.minAvailable;
  if (existing.spec?.minAvailable !== want && typeof want === 'number') patch.spec.minAvailable = want;
  if (existing.spec?.maxUnavailable !== undefined && existing.spec.maxUnavailable !== null) {
    patch.spec.maxUnavailable = null;
  }
  const have = existing.spec?.selector;
  const wantLabels = desired.spec?.selector?.matchLabels ?? {};
  const labels = mapMergePatch(have?.matchLabels, wantLabels);
  const expressions = (have?.matchExpressions?.length ?? 0) > 0;
  if (labels || expressions) {
    patch.spec.selector = { matchLabels: labels ?? {}, ...(expressions && { matchExpressions: null }) };
  }
  return Object.keys(patch.spec).length > 0 ? patch : undefined;
}
