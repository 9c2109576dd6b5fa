// Which Secrets hold a cluster's certificates, whatever their source (a Secret the user names,
// cert-manager or the operator's own CA). Members copy these names at creation, so a member's Pod
// never has to look at the cluster's TLS spec again.
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import type { EtcdMemberTLS } from '../api/etcd-member.ts';
import { clientPinHostname, peerPinHostname } from '../names.ts';

export interface TlsSecretNames {
  /** The client-facing server certificate (tls.crt, tls.key, ca.crt); unset: plaintext clients. */
  clientServer?: string;
  /** The operator's own client certificate; set exactly when clients must present one (mTLS). */
  operatorClient?: string;
  /** The peer certificate (always mutual); unset: plaintext between members. */
  peer?: string;
}

export const serverTlsSecretName = (cluster: string): string => `${cluster}-server-tls`;
export const operatorClientTlsSecretName = (cluster: string): string => `${cluster}-operator-client-tls`;
export const peerTlsSecretName = (cluster: string): string => `${cluster}-peer-tls`;

export function tlsSecretNames(cluster: EtcdCluster): TlsSecretNames {
  const name = cluster.metadata.name ?? '';
  const client = cluster.spec.tls?.client;
  const peer = cluster.spec.tls?.peer;
  const names: TlsSecretNames = {};

  if (client?.serverSecretRef) {
    names.clientServer = client.serverSecretRef.name;
    if (client.operatorClientSecretRef) names.operatorClient = client.operatorClientSecretRef.name;
  } else if (client?.certManager) {
    names.clientServer = serverTlsSecretName(name);
    if (client.certManager.operatorClientIssuerRef) names.operatorClient = operatorClientTlsSecretName(name);
  } else if (client?.auto) {
    // The operator keeps the CA, so it can always issue itself a client certificate: auto TLS is
    // mutual from the start (a later change of mind would need every member's flags rewritten).
    names.clientServer = serverTlsSecretName(name);
    names.operatorClient = operatorClientTlsSecretName(name);
  }

  if (peer?.secretRef) names.peer = peer.secretRef.name;
  else if (peer?.certManager || peer?.auto) names.peer = peerTlsSecretName(name);
  return names;
}

/** The TLS part of a new member's spec; undefined when both planes are plaintext. */
export function memberTls(cluster: EtcdCluster): EtcdMemberTLS | undefined {
  const names = tlsSecretNames(cluster);
  const tls: EtcdMemberTLS = {};
  if (names.clientServer) {
    tls.clientServerSecretRef = { name: names.clientServer };
    tls.clientMTLS = names.operatorClient !== undefined;
  }
  if (names.peer) tls.peerSecretRef = { name: names.peer };
  // A cert-manager issuer may be shared with other tenants (a ClusterIssuer): pin what this
  // cluster's etcd accepts to certificates that name it (shared/builders/etcd-listen.ts).
  const name = cluster.metadata.name ?? '';
  const namespace = cluster.metadata.namespace ?? 'default';
  const client = cluster.spec.tls?.client;
  if (client?.certManager && tls.clientMTLS) tls.clientAllowedHostname = clientPinHostname(name, namespace);
  if (cluster.spec.tls?.peer?.certManager) tls.peerAllowedHostname = peerPinHostname(name, namespace);
  return Object.keys(tls).length ? tls : undefined;
}
