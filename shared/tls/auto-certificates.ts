// The certificates the auto TLS provider keeps for a cluster: which Secret each lives in, whom it
// names and what it may be used for. Members are covered by a wildcard under the headless Service,
// so scaling never waits for a new certificate; etcd accepts a peer whose address reverse-resolves
// to a name the wildcard matches (and 127.0.0.1 for loopback checks such as etcdctl in a Pod).
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import { operatorClientTlsSecretName, peerTlsSecretName, serverTlsSecretName } from './secret-names.ts';
import { clientServiceName, headlessServiceName, clientPinHostname } from '../names.ts';
import type { LeafUsage } from './issue.ts';

export const caSecretName = (cluster: string): string => `${cluster}-ca`;

/** The operator's identity in etcd (the CN is the user name once etcd auth reads certificates). */
export const OPERATOR_CLIENT_COMMON_NAME = 'etcdfn-operator';

export type AutoCertificateRole = 'server' | 'peer' | 'operator-client';

export interface AutoCertificate {
  role: AutoCertificateRole;
  secret: string;
  commonName: string;
  dnsNames: string[];
  ipAddresses: string[];
  usages: LeafUsage[];
}

const LOOPBACK_IPS = ['127.0.0.1', '::1'];

function memberNames(cluster: string, namespace: string): string[] {
  const headless = `${headlessServiceName(cluster)}.${namespace}.svc`;
  return [`*.${headless}`, `*.${headless}.cluster.local`];
}

function clientServiceNames(cluster: string, namespace: string): string[] {
  const service = clientServiceName(cluster);
  const svc = `${service}.${namespace}.svc`;
  return [service, `${service}.${namespace}`, svc, `${svc}.cluster.local`];
}

/** The names and usages each role's certificate needs, whoever signs it (auto or cert-manager). */
export function certificateShape(
  role: AutoCertificateRole,
  cluster: string,
  namespace: string,
): AutoCertificate {
  const members = memberNames(cluster, namespace);
  switch (role) {
    case 'server':
      return {
        role,
        secret: serverTlsSecretName(cluster),
        commonName: `${cluster}-server`,
        dnsNames: [...members, ...clientServiceNames(cluster, namespace), 'localhost'],
        ipAddresses: LOOPBACK_IPS,
        usages: ['server'],
      };
    case 'operator-client':
      return {
        role,
        secret: operatorClientTlsSecretName(cluster),
        commonName: OPERATOR_CLIENT_COMMON_NAME,
        // The name a cert-manager cluster's etcd pins client certificates to (etcd-listen.ts).
        dnsNames: [clientPinHostname(cluster, namespace)],
        ipAddresses: [],
        usages: ['client'],
      };
    case 'peer':
      // A member dials its peers with the same certificate it serves them with: both usages.
      return {
        role,
        secret: peerTlsSecretName(cluster),
        commonName: `${cluster}-peer`,
        dnsNames: [...members, 'localhost'],
        ipAddresses: LOOPBACK_IPS,
        usages: ['server', 'client'],
      };
  }
}

/** The certificates this cluster's spec asks the operator to issue; empty without auto TLS. */
export function autoCertificates(cluster: EtcdCluster): AutoCertificate[] {
  const name = cluster.metadata.name ?? '';
  const namespace = cluster.metadata.namespace ?? 'default';
  const roles: AutoCertificateRole[] = [];
  if (cluster.spec.tls?.client?.auto) roles.push('server', 'operator-client');
  if (cluster.spec.tls?.peer?.auto) roles.push('peer');
  return roles.map(role => certificateShape(role, name, namespace));
}
