// The etcdfn.io API group: one place for the group, version and resource names.

export const GROUP = 'etcdfn.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export interface ResourceName {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
}

export const ETCD_CLUSTER: ResourceName = {
  kind: 'EtcdCluster',
  plural: 'etcdclusters',
  singular: 'etcdcluster',
  shortNames: ['etcd', 'etcdc'],
};
export const ETCD_MEMBER: ResourceName = {
  kind: 'EtcdMember',
  plural: 'etcdmembers',
  singular: 'etcdmember',
  shortNames: ['etcdm'],
};
export const ETCD_SNAPSHOT: ResourceName = {
  kind: 'EtcdSnapshot',
  plural: 'etcdsnapshots',
  singular: 'etcdsnapshot',
  shortNames: ['etcdsnap'],
};
export const ETCD_SNAPSHOT_SCHEDULE: ResourceName = {
  kind: 'EtcdSnapshotSchedule',
  plural: 'etcdsnapshotschedules',
  singular: 'etcdsnapshotschedule',
  shortNames: ['etcdsched'],
};

export const RESOURCES = [ETCD_CLUSTER, ETCD_MEMBER, ETCD_SNAPSHOT, ETCD_SNAPSHOT_SCHEDULE] as const;
