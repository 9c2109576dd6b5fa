// Keeps the cluster's cert-manager Certificates as certManagerCertificates says: created when
// missing, their spec put back when it drifted (shared/plan/owned/cert-manager-certificates.ts), by
// the generic apply (shared/reconcile/owned-apply.ts). cert-manager does the signing and the renewal.
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import { certManagerCertificates } from '../builders/cert-manager-certificate.ts';
import type { KubeObjects } from '../k8s/objects.ts';
import { certificateChange, type Certificate } from '../plan/owned/cert-manager-certificates.ts';
import { applyChange } from './owned-apply.ts';

/** The names of the Certificates written (created or corrected) by this pass. */
export async function ensureCertManagerCertificates(
  kube: KubeObjects,
  cluster: EtcdCluster,
): Promise<string[]> {
  const written: string[] = [];
  for (const want of certManagerCertificates(cluster)) {
    const ref = {
      apiVersion: want.apiVersion,
      kind: 'Certificate',
      namespace: want.metadata.namespace,
      name: want.metadata.name,
    };
    const have = await kube.find<Certificate>(ref);
    const change = certificateChange(have, want);
    if (!change) continue;
    const result = await applyChange(kube, change);
    if (result.kind === (change.kind === 'create' ? 'created' : 'written')) written.push(want.metadata.name);
  }
  return written;
}
