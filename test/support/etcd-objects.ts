// The one place the unit tests build etcdfn's own objects: an EtcdCluster "demo" in "prod" and its
// EtcdMembers, with every field a test cares about given as an override. Overrides are merged one
// level deep (metadata, spec); an override set to undefined leaves the field out, so a test can
// ask for "no uid" or "no replicas" as plainly as for a value. Worlds built on these (a planCluster
// state, a planMember state) are in cluster-world.ts and member-world.ts.
import type { EtcdCluster, EtcdClusterSpec, EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember, EtcdMemberSpec, EtcdMemberStatus } from '../../shared/api/etcd-member.ts';

/** An override: a value replaces the default, undefined removes it. */
type Override<T> = { [K in keyof T]?: T[K] | undefined };

export interface ClusterOverrides {
  metadata?: Override<EtcdCluster['metadata']>;
  spec?: Override<EtcdClusterSpec>;
  /** The whole status (none by default). */
  status?: EtcdClusterStatus;
}

export interface MemberOverrides {
  metadata?: Override<EtcdMember['metadata']>;
  spec?: Override<EtcdMemberSpec>;
  /** The whole status (none by default). */
  status?: EtcdMemberStatus;
}

/** `defaults` with `overrides` on top, fields overridden with undefined left out. */
function merged<T extends object>(defaults: T, overrides: Override<T> = {}): T {
  const out: Record<string, unknown> = { ...defaults, ...overrides };
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out as T;
}

/** EtcdCluster demo in prod (uid uid-1), 3 replicas of etcd 3.5.16, no status. */
export function etcdCluster(o: ClusterOverrides = {}): EtcdCluster {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdCluster',
    metadata: merged<EtcdCluster['metadata']>({ name: 'demo', namespace: 'prod', uid: 'uid-1' }, o.metadata),
    spec: merged<EtcdClusterSpec>({ replicas: 3, version: '3.5.16' }, o.spec),
    ...(o.status && { status: o.status }),
  };
}

/** The peer URL of a member of demo in prod, as its headless Service names it. */
export const peerURL = (name: string): string => `http://${name}.demo.prod.svc:2380`;

/**
 * EtcdMember `name` of demo in prod: etcd 3.5.16 on 1Gi, an initial cluster of itself alone, the
 * token of demo's uid-1; no uid, labels, finalizers or status unless given.
 */
export function etcdMember(name = 'demo-0', o: MemberOverrides = {}): EtcdMember {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdMember',
    metadata: merged<EtcdMember['metadata']>({ name, namespace: 'prod' }, o.metadata),
    spec: merged<EtcdMemberSpec>(
      {
        clusterName: 'demo',
        version: '3.5.16',
        storage: { size: '1Gi' },
        initialCluster: `${name}=${peerURL(name)}`,
        clusterToken: 'prod-demo-uid-1',
      },
      o.spec,
    ),
    ...(o.status && { status: o.status }),
  };
}
