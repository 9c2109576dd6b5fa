// The pure builders of every object etcdfn creates: no I/O, one job per file.
export * from './owner.ts';
export * from '../tls/secret-names.ts';
export * from './storage.ts';
export * from './metadata.ts';
export * from './member.ts';
export * from './etcd-flags.ts';
export * from './pod.ts';
export * from './pvc.ts';
export * from './services.ts';
export * from './pdb.ts';
export * from './k8s-event.ts';
