// One import for the etcdfn.io resource types and their defaults.
export type * from './common.ts';
export type * from './etcd-cluster.ts';
export type * from './etcd-member.ts';
export type * from './etcd-snapshot.ts';
export type * from './etcd-snapshot-schedule.ts';
export * from './defaults.ts';
