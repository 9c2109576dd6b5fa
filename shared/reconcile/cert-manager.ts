// Keeps the cluster's cert-manager Certificates as certManagerCertificates says: created when
// missing, their spec put back when it drifted. cert-manager does the signing and the renewal.
import { isDeepStrictEqual } from 'node:util';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import {
  certManagerCertificates,
  type CertManagerCertificate,
} from '../builders/cert-manager-certificate.ts';
import type { KubeObject, KubeObjects } from '../k8s/objects.ts';

type Certificate = CertManagerCertificate & KubeObject;

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
    if (!have) {
      if ((await kube.create<Certificate>(want)).kind === 'created') written.push(want.metadata.name);
      continue;
    }
    if (isDeepStrictEqual(have.spec, want.spec)) continue;
    const replaced = await kube.replace<Certificate>({ ...have, spec: want.spec });
    if (replaced.kind === 'written') written.push(want.metadata.name);
  }
  return written;
}
