// Metadata and owner of the objects that belong to the cluster as a whole (Services, PDB).
import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import { clusterLabels } from '../names.ts';
import { objectMetadata } from './metadata.ts';
import { controllerRef } from './owner.ts';

/** The cluster's name, or a clear error for a caller that passed an unsaved object. */
export function clusterNameOf(cluster: EtcdCluster): string {
  const name = cluster.metadata.name;
  if (!name || !cluster.metadata.namespace) throw new Error('EtcdCluster has no name or namespace');
  return name;
}

/** name + namespace + cluster labels + additionalMetadata (the locked one once there is one) + owner. */
export function clusterOwnedMetadata(cluster: EtcdCluster, name: string): V1ObjectMeta {
  const extra = cluster.status?.observed?.additionalMetadata ?? cluster.spec.additionalMetadata;
  return {
    name,
    namespace: cluster.metadata.namespace,
    ...objectMetadata(extra, clusterLabels(clusterNameOf(cluster))),
    ownerReferences: [controllerRef(cluster)],
  };
}
