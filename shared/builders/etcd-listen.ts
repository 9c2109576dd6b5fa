// Where a member's etcd listens, and whose certificates it accepts. The same for every etcd minor
// (checked against `etcd --help` of 3.4.23, 3.5.35, 3.6.16 and 3.7.3: each has
// --listen-{client,peer,metrics}-urls, --client-cert-allowed-hostname and
// --peer-cert-allowed-hostname; 3.4 takes one name, 3.5+ a list, so one name is given).
//
// Addresses: the Pod IP (downward API, expanded by the kubelet in the command), not 0.0.0.0, for
// the client, peer and metrics ports. No probe needs loopback: the kubelet probes the Pod IP.
// Metrics: over TLS when clients use TLS without client certificates (the readiness probe speaks
// HTTPS but cannot present a certificate); with client mTLS they stay plain HTTP on the Pod IP, as
// the readiness probe must read /health there, and only the metrics namespace may reach the port
// (NetworkPolicy). See docs/security.md.
//
// Pinning: where the operator asks a possibly shared issuer for a cluster's certificates
// (cert-manager), etcd accepts only certificates that name this cluster in this namespace, so a
// certificate the same issuer signed for another cluster is refused on both planes.
import type { EtcdMemberTLS } from '../api/etcd-member.ts';
import { CLIENT_PORT, METRICS_PORT, PEER_PORT } from '../names.ts';

/** The etcd container's variable holding the Pod IP (fieldRef status.podIP). */
export const POD_IP_ENV = 'POD_IP';
const POD_IP = `$(${POD_IP_ENV})`;

/** etcd's metrics and /health port: https only when client TLS is on and not mutual. */
export function metricsScheme(tls: EtcdMemberTLS | undefined): 'http' | 'https' {
  return tls?.clientServerSecretRef !== undefined && tls.clientMTLS !== true ? 'https' : 'http';
}

export function listenFlags(tls: EtcdMemberTLS | undefined): string[] {
  const scheme = (on: boolean): string => (on ? 'https' : 'http');
  return [
    `--listen-peer-urls=${scheme(tls?.peerSecretRef !== undefined)}://${POD_IP}:${PEER_PORT}`,
    `--listen-client-urls=${scheme(tls?.clientServerSecretRef !== undefined)}://${POD_IP}:${CLIENT_PORT}`,
    `--listen-metrics-urls=${metricsScheme(tls)}://${POD_IP}:${METRICS_PORT}`,
  ];
}

/** The pins a member's spec carries, as etcd flags; none where it carries none. */
export function certPinFlags(tls: EtcdMemberTLS | undefined): string[] {
  const flags: string[] = [];
  if (tls?.clientMTLS === true && tls.clientAllowedHostname) {
    flags.push(`--client-cert-allowed-hostname=${tls.clientAllowedHostname}`);
  }
  if (tls?.peerSecretRef && tls.peerAllowedHostname) {
    flags.push(`--peer-cert-allowed-hostname=${tls.peerAllowedHostname}`);
  }
  return flags;
}
