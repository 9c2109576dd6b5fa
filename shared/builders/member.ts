// The EtcdMember the cluster controller creates for each new etcd member. Its spec is a copy of
// the cluster's locked target (status.observed), so a member never changes because someone edits
// the cluster halfway through a step.
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import type { EtcdMember, EtcdMemberSpec } from '../api/etcd-member.ts';
import type { RestoreSpec, StorageMedium } from '../api/common.ts';
import { API_VERSION, ETCD_MEMBER } from '../api/group.ts';
import { clusterLabels, MEMBER_FINALIZER, memberNamePrefix } from '../names.ts';
import { objectMetadata } from './metadata.ts';
import { controllerRef } from './owner.ts';
import { memberTls } from '../tls/secret-names.ts';

export interface BuildMemberOptions {
  /** The seed: the one member that starts a new cluster (and the only one that restores into it). */
  bootstrap: boolean;
  /** A deterministic name chosen by the caller; without one the API server picks `<cluster>-xxxxx`. */
  name?: string;
  /** The seed's restore, resolved to an exact object or file (default: the cluster's as written). */
  restore?: RestoreSpec;
}

/** A member to create, named by opts.name or else by generateName. */
export function buildMember(cluster: EtcdCluster, opts: BuildMemberOptions): EtcdMember {
  const name = cluster.metadata.name;
  const observed = cluster.status?.observed;
  const token = cluster.status?.clusterToken;
  if (!name || !cluster.metadata.namespace)
    throw new Error('buildMember: the cluster has no name or namespace');
  if (!observed) {
    throw new Error(
      `buildMember: EtcdCluster ${name} has no status.observed; lock the target before creating members`,
    );
  }
  if (!token) {
    throw new Error(
      `buildMember: EtcdCluster ${name} has no status.clusterToken; record it before creating members`,
    );
  }
  // structuredClone: the member must not share objects with the cluster it was copied from.
  const copy = structuredClone(observed);

  const spec: EtcdMemberSpec = {
    clusterName: name,
    version: copy.version,
    storage: { ...copy.storage, medium: copy.storage.medium as StorageMedium | undefined },
    ...(copy.resources && { resources: copy.resources }),
    ...(copy.additionalMetadata && { additionalMetadata: copy.additionalMetadata }),
    ...(copy.affinity && { affinity: copy.affinity }),
    ...(copy.topologySpreadConstraints && { topologySpreadConstraints: copy.topologySpreadConstraints }),
    ...(copy.options && { options: copy.options }),
    ...(copy.imagePullSecrets && { imagePullSecrets: copy.imagePullSecrets }),
    bootstrap: opts.bootstrap,
    initialCluster: '',
    clusterToken: token,
  };
  if (spec.storage.medium === undefined) delete spec.storage.medium;
  const tls = memberTls(cluster);
  if (tls) spec.tls = tls;
  const restore = opts.restore ?? cluster.spec.bootstrap?.restore;
  if (opts.bootstrap && restore) spec.restore = structuredClone(restore);

  return {
    apiVersion: API_VERSION,
    kind: ETCD_MEMBER.kind as 'EtcdMember',
    metadata: {
      ...(opts.name ? { name: opts.name } : { generateName: memberNamePrefix(name) }),
      namespace: cluster.metadata.namespace,
      ...objectMetadata(observed.additionalMetadata, clusterLabels(name)),
      // Set at creation, never added later: there is no moment in which a member exists in the
      // API server but could be deleted without being removed from etcd first.
      finalizers: [MEMBER_FINALIZER],
      ownerReferences: [controllerRef(cluster)],
    },
    spec,
  };
}
