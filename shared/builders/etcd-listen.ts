// Where a member's etcd listens, and whose certificates it accepts. The same for every etcd minor
// (checked against `etcd --help` of 3.4.23, 3.5.35, 3.6.16 and 3.7.3: each has
// --listen-{client,peer,metrics}-urls, --client-cert-allowed-hostname and
// --peer-cert-allowed-hostname; 3.4 takes one name, 3.5+ a list, so one name is given).
//
// Addresses: the Pod IP (downward API, expanded by the kubelet in the command), not 0.0.0.0, for
// the client, peer and metrics ports. No probe needs loopback: the kubelet probes the Pod IP. An
// IPv6 Pod IP goes into a URL in brackets (`https://[fd00::5]:2379`): etcd parses each listen URL
// with Go's net/url and binds its host:port, so a bare IPv6 address fails ("URL address does not
// have the form host:port") and so does a bracketed IPv4 one (net/url refuses it from Go 1.24.8 on,
// which current etcd releases are built with). The kubelet's $(VAR) expansion only substitutes, so
// the brackets are in the flag and the operator must know the family of its Pods' IPs
// (podIPFamily: the operator's setting, see shared/runtime/pod-ip-family.ts).
//
// Metrics (`--listen-metrics-urls`): etcd serves /metrics and /health on every metrics URL, an
// https one with the whole client TLS configuration (embed.createMetricsListener: ClientTLSInfo,
// so --client-cert-auth and --client-cert-allowed-hostname apply there too; read in etcd 3.5.16,
// 3.6.16 and 3.7.3, and checked on the binaries by test/integration/etcd-metrics-tls.test.ts).
// - no client TLS: http on the Pod IP, like the client port;
// - client TLS without client certificates: https on the Pod IP; the readiness probe speaks HTTPS
//   (the kubelet does not verify the server's certificate and needs none of its own);
// - client mutual TLS: https on the Pod IP, so a scraper needs a client certificate as on the
//   client port; the kubelet cannot present one, so the readiness probe reads /health from a
//   second, plain listener on PROBE_PORT, which the NetworkPolicy admits no Pod to (traffic from
//   the node, where the kubelet probes from, is always allowed). That listener also answers
//   /metrics (etcd has no /health-only listener): without an enforcing NetworkPolicy, anyone who
//   reaches the Pod IP can read it. Unlike the client port, etcd's metrics listener also matches a
//   client certificate's SANs to the caller's address (client/pkg transport checkCertSAN): a
//   scraper's certificate carries no SANs, or scrapes /metrics on the client port. See
//   docs/security.md.
//
// Pinning: where the operator asks a possibly shared issuer for a cluster's certificates
// (cert-manager), etcd accepts only certificates that name this cluster in this namespace, so a
// certificate the same issuer signed for another cluster is refused on both planes.
import type { EtcdMemberTLS } from '../api/etcd-member.ts';
import { CLIENT_PORT, METRICS_PORT, PEER_PORT, PROBE_PORT } from '../names.ts';

/** The etcd container's variable holding the Pod IP (fieldRef status.podIP). */
export const POD_IP_ENV = 'POD_IP';

/** The family of the Pods' IPs (status.podIP): IPv4, or IPv6 on an IPv6-only (or IPv6-first) cluster. */
export type PodIPFamily = 'IPv4' | 'IPv6';
export const POD_IP_FAMILIES: readonly PodIPFamily[] = ['IPv4', 'IPv6'];

/** The Pod IP as the host of a URL: `$(POD_IP)`, or `[$(POD_IP)]` for IPv6. */
export function podIPHost(family: PodIPFamily = 'IPv4'): string {
  return family === 'IPv6' ? `[$(${POD_IP_ENV})]` : `$(${POD_IP_ENV})`;
}

const clientTLS = (tls: EtcdMemberTLS | undefined): boolean => tls?.clientServerSecretRef !== undefined;
const clientMTLS = (tls: EtcdMemberTLS | undefined): boolean => clientTLS(tls) && tls?.clientMTLS === true;

/** etcd's metrics port (2381): https whenever client TLS is on. */
export function metricsScheme(tls: EtcdMemberTLS | undefined): 'http' | 'https' {
  return clientTLS(tls) ? 'https' : 'http';
}

/** Where the readiness probe reads /health: the metrics port, or the probe port with client mTLS. */
export function healthEndpoint(tls: EtcdMemberTLS | undefined): { port: number; scheme: 'HTTP' | 'HTTPS' } {
  if (clientMTLS(tls)) return { port: PROBE_PORT, scheme: 'HTTP' };
  return { port: METRICS_PORT, scheme: metricsScheme(tls) === 'https' ? 'HTTPS' : 'HTTP' };
}

export function listenFlags(tls: EtcdMemberTLS | undefined, family: PodIPFamily = 'IPv4'): string[] {
  const host = podIPHost(family);
  const scheme = (on: boolean): string => (on ? 'https' : 'http');
  const metrics = [`${metricsScheme(tls)}://${host}:${METRICS_PORT}`];
  if (clientMTLS(tls)) metrics.push(`http://${host}:${PROBE_PORT}`);
  return [
    `--listen-peer-urls=${scheme(tls?.peerSecretRef !== undefined)}://${host}:${PEER_PORT}`,
    `--listen-client-urls=${scheme(clientTLS(tls))}://${host}:${CLIENT_PORT}`,
    `--listen-metrics-urls=${metrics.join(',')}`,
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
