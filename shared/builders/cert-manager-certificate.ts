// The cert-manager Certificate (cert-manager.io/v1) the operator asks for when a plane's certificate
// source is certManager: the same Secret, names and usages as auto TLS, signed by the user's Issuer
// or ClusterIssuer. cert-manager writes tls.crt, tls.key and ca.crt into spec.secretName.
import type { EtcdCluster, IssuerReference } from '../api/etcd-cluster.ts';
import { API_VERSION } from '../api/group.ts';
import { clusterLabels } from '../names.ts';
import {
  certificateShape,
  type AutoCertificate,
  type AutoCertificateRole,
} from '../tls/auto-certificates.ts';
import { controllerRef } from './owner.ts';

export const CERT_MANAGER_API_VERSION = 'cert-manager.io/v1';

export interface CertManagerCertificate {
  apiVersion: typeof CERT_MANAGER_API_VERSION;
  kind: 'Certificate';
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    ownerReferences: ReturnType<typeof controllerRef>[];
    resourceVersion?: string;
  };
  spec: {
    secretName: string;
    commonName: string;
    dnsNames?: string[];
    ipAddresses?: string[];
    usages: string[];
    issuerRef: { name: string; kind: string; group: 'cert-manager.io' };
    privateKey: { algorithm: 'ECDSA'; size: 256; rotationPolicy: 'Always' };
  };
  status?: { notAfter?: string; renewalTime?: string; conditions?: { type: string; status: string }[] };
}

const USAGES: Record<AutoCertificate['usages'][number], string> = {
  server: 'server auth',
  client: 'client auth',
};

/** Which roles the cluster's spec asks cert-manager for, each with its issuer. */
export function certManagerRequests(
  cluster: EtcdCluster,
): { role: AutoCertificateRole; issuer: IssuerReference }[] {
  const client = cluster.spec.tls?.client?.certManager;
  const peer = cluster.spec.tls?.peer?.certManager;
  const out: { role: AutoCertificateRole; issuer: IssuerReference }[] = [];
  if (client) out.push({ role: 'server', issuer: client.serverIssuerRef });
  if (client?.operatorClientIssuerRef)
    out.push({ role: 'operator-client', issuer: client.operatorClientIssuerRef });
  if (peer) out.push({ role: 'peer', issuer: peer.issuerRef });
  return out;
}

/** The Certificates to keep for the cluster (named after their Secrets); empty without certManager. */
export function certManagerCertificates(cluster: EtcdCluster): CertManagerCertificate[] {
  const name = cluster.metadata.name ?? '';
  const namespace = cluster.metadata.namespace ?? 'default';
  return certManagerRequests(cluster).map(({ role, issuer }) => {
    const shape = certificateShape(role, name, namespace);
    return {
      apiVersion: CERT_MANAGER_API_VERSION,
      kind: 'Certificate',
      metadata: {
        name: shape.secret,
        namespace,
        labels: clusterLabels(name),
        ownerReferences: [controllerRef({ ...cluster, apiVersion: API_VERSION })],
      },
      spec: {
        secretName: shape.secret,
        commonName: shape.commonName,
        ...(shape.dnsNames.length && { dnsNames: shape.dnsNames }),
        ...(shape.ipAddresses.length && { ipAddresses: shape.ipAddresses }),
        usages: ['digital signature', 'key encipherment', ...shape.usages.map(u => USAGES[u])],
        issuerRef: { name: issuer.name, kind: issuer.kind ?? 'Issuer', group: 'cert-manager.io' },
        privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
      },
    };
  });
}
