// The sandbox's storage, as a CSI driver's external-provisioner would make it: for a claim that
// kube-controller-manager's persistent-volume controller hands to an external provisioner
// (annotation volume.kubernetes.io/storage-provisioner), a PersistentVolume pvc-<claim uid> whose
// claimRef names the claim; the controller then binds the two. A claim of a WaitForFirstConsumer
// class is provisioned once the scheduler has picked its node (volume.kubernetes.io/selected-node),
// with node affinity to it. The volume is a directory the kubelet mounts (volumes.ts).

/** The CSI driver the sandbox's volumes name (a CSIDriver object says no attach is needed). */
export const CSI_DRIVER = 'hostpath.sandbox.etcdfn.io';
export const PROVISIONER_ANNOTATION = 'volume.kubernetes.io/storage-provisioner';
export const PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
export const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';

/**
 * The class the sandbox creates at start (unless one by that name exists): the default, and it
 * allows expansion, as most managed clusters' default classes do (kind's does not: create a class
 * without it to see the refusal).
 */
export const SANDBOX_DEFAULT_CLASS = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name: 'standard', annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } },
  provisioner: CSI_DRIVER,
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'Immediate',
  allowVolumeExpansion: true,
};

export interface ClaimView {
  metadata: { name: string; namespace?: string; uid: string; annotations?: Record<string, string> };
  spec?: {
    storageClassName?: string;
    accessModes?: string[];
    resources?: { requests?: Record<string, string | number> };
    volumeMode?: string;
  };
}

/** The name of the volume provisioned for a claim. */
export const volumeNameFor = (claim: ClaimView): string => `pvc-${claim.metadata.uid}`;

/**
 * The PersistentVolume for a claim handed to a provisioner, or undefined while it must wait (no
 * provisioner annotation yet: the controller has not judged it, or the class does not exist).
 */
export function persistentVolumeFor(
  claim: ClaimView,
  node: string | undefined,
): Record<string, unknown> | undefined {
  const provisioner = claim.metadata.annotations?.[PROVISIONER_ANNOTATION];
  if (!provisioner) return undefined;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: volumeNameFor(claim), annotations: { [PROVISIONED_BY]: provisioner } },
    spec: {
      capacity: { storage: claim.spec?.resources?.requests?.storage ?? '1Gi' },
      accessModes: claim.spec?.accessModes ?? ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: claim.spec?.storageClassName ?? '',
      volumeMode: claim.spec?.volumeMode ?? 'Filesystem',
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: claim.metadata.namespace,
        name: claim.metadata.name,
        uid: claim.metadata.uid,
      },
      csi: { driver: CSI_DRIVER, volumeHandle: volumeNameFor(claim), fsType: 'ext4' },
      ...(node && {
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
            ],
          },
        },
      }),
    },
  };
}
