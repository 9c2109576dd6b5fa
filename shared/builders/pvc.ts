// The data volume claim of a member. It belongs to the EtcdMember (not the Pod), so a Pod can be
// deleted and recreated — or a paused cluster resumed — on the same data.
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { EtcdMember } from '../api/etcd-member.ts';
import { memberLabels, pvcName } from '../names.ts';
import { objectMetadata } from './metadata.ts';
import { controllerRef } from './owner.ts';
import { isMemoryMedium, storageSize } from './storage.ts';

/** undefined for a Memory-medium member: its data lives in an emptyDir and dies with the Pod. */
export function buildMemberPvc(member: EtcdMember, namespace: string): V1PersistentVolumeClaim | undefined {
  const storage = member.spec.storage;
  if (isMemoryMedium(storage)) return undefined;
  const name = member.metadata.name;
  if (!name) throw new Error('buildMemberPvc: the member has no name yet (create it first)');
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: pvcName(name),
      namespace,
      ...objectMetadata(member.spec.additionalMetadata, memberLabels(member.spec.clusterName, name)),
      ownerReferences: [controllerRef(member)],
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      // Unset means the default StorageClass; "" is different and deliberate (no dynamic
      // provisioning: bind a pre-created volume), so it is passed through as it is.
      ...(storage.storageClassName !== undefined && { storageClassName: storage.storageClassName }),
      resources: { requests: { storage: storageSize(storage) } },
    },
  };
}
