// Cluster DNS for the sandbox: the names below, served by the name server (dns-server.ts) or written
// to a hosts file (../hosts.ts, ../namespace.ts):
//   <hostname>.<subdomain>.<ns>.svc[.cluster.local] → the Pod's IP, for every Pod with
//       spec.hostname and spec.subdomain that has an IP (published as soon as the Pod is admitted,
//       before its processes start: more permissive than CoreDNS, which waits for the Pod to be
//       in the headless Service's Endpoints — ready, or any with publishNotReadyAddresses);
//   <svc>.<ns>.svc[.cluster.local] → the addresses of the Service's Endpoints (ready Pods of its
//       selector; not-ready ones too with publishNotReadyAddresses), headless and ClusterIP alike:
//       there is no kube-proxy, so a ClusterIP name resolves to the Pod IPs and only works when
//       port == targetPort; but asked from a Pod namespace (the gateway's name server), a Service
//       service-proxy.ts serves at its ClusterIP answers the ClusterIP. Services without a selector
//       use whatever Endpoints the user wrote; an ExternalName naming a sandbox name, its addresses.
import type { HostsEntry, HostsFile } from '../hosts.ts';
import type { Endpoints, Service } from './types.ts';

export interface DnsPod {
  namespace: string;
  ip: string | undefined;
  hostname?: string;
  subdomain?: string;
}

export interface DnsSources {
  pods(): DnsPod[];
  endpoints(): Endpoints[];
  service(namespace: string, name: string): Service | undefined;
  /** every Service (ExternalName ones name another sandbox name) */
  services?(): Service[];
  /** the ClusterIP a Service is served at (service-proxy.ts), when it is */
  clusterIP?(namespace: string, name: string): string | undefined;
}

export function dnsNames(name: string, clusterDomain: string): string[] {
  return [name, `${name}.${clusterDomain}`];
}

/** Computes the hosts entries of the whole sandbox. */
export function dnsEntries(
  sources: DnsSources,
  clusterDomain = 'cluster.local',
  clusterIPs = false,
): HostsEntry[] {
  const entries: HostsEntry[] = [];
  for (const pod of sources.pods()) {
    if (!pod.ip || !pod.hostname || !pod.subdomain) continue;
    entries.push({
      ip: pod.ip,
      names: dnsNames(`${pod.hostname}.${pod.subdomain}.${pod.namespace}.svc`, clusterDomain),
    });
  }
  for (const ep of sources.endpoints()) {
    const ns = ep.metadata.namespace ?? 'default';
    const svc = sources.service(ns, ep.metadata.name);
    if (!svc || svc.spec?.type === 'ExternalName') continue;
    const service = `${ep.metadata.name}.${ns}.svc`;
    const clusterIP = clusterIPs ? sources.clusterIP?.(ns, ep.metadata.name) : undefined;
    if (clusterIP) entries.push({ ip: clusterIP, names: dnsNames(service, clusterDomain) });
    for (const subset of ep.subsets ?? []) {
      for (const address of subset.addresses ?? []) {
        if (!clusterIP) entries.push({ ip: address.ip, names: dnsNames(service, clusterDomain) });
        if (address.hostname) {
          entries.push({ ip: address.ip, names: dnsNames(`${address.hostname}.${service}`, clusterDomain) });
        }
      }
    }
  }
  // An ExternalName Service naming a sandbox name answers with that name's addresses (CoreDNS
  // answers a CNAME; the client's Host header keeps the Service's own name either way).
  for (const svc of sources.services?.() ?? []) {
    const target = svc.spec?.type === 'ExternalName' ? svc.spec.externalName : undefined;
    if (!target) continue;
    const name = target.toLowerCase().replace(/\.$/, '');
    const ips = new Set(entries.filter(e => e.names.includes(name)).map(e => e.ip));
    const own = `${svc.metadata.name}.${svc.metadata.namespace ?? 'default'}.svc`;
    for (const ip of ips) entries.push({ ip, names: dnsNames(own, clusterDomain) });
  }
  return entries;
}

/**
 * The sandbox's names, served two ways: a hosts file kept in sync (coalescing bursts of changes)
 * and `lookup` for the name server (dns-server.ts). Once the name server runs, the hosts file keeps
 * only the machine's lines, so no reader can hold a stale copy of a Pod's name.
 */
export class Dns {
  private timer: NodeJS.Timeout | undefined;
  private hostsEntries = true;

  private readonly hosts: HostsFile | undefined;
  private readonly sources: DnsSources;
  private readonly clusterDomain;
  constructor(hosts: HostsFile | undefined, sources: DnsSources, clusterDomain = 'cluster.local') {
    this.hosts = hosts;
    this.sources = sources;
    this.clusterDomain = clusterDomain;
  }

  /** Rewrites the hosts file now (call before starting processes that must resolve new names). */
  refreshNow(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.hosts?.set(this.hostsEntries ? dnsEntries(this.sources, this.clusterDomain) : []);
  }

  /**
   * The addresses of `name` now (lower-case, no trailing dot); empty for a name the sandbox lacks.
   * `clusterIPs`: for Pod namespaces (asking at the gateway), Services served at their ClusterIPs
   * answer those; the host's processes keep the Pod IPs they always had.
   */
  lookup(name: string, clusterIPs = false): string[] {
    const ips = new Set<string>();
    for (const entry of dnsEntries(this.sources, this.clusterDomain, clusterIPs)) {
      if (entry.names.includes(name)) ips.add(entry.ip);
    }
    return [...ips];
  }

  /** Names are answered by the name server from now on: empty the hosts file's managed section. */
  servedByNameServer(): void {
    this.hostsEntries = false;
    this.refreshNow();
  }

  /** Rewrites the hosts file soon. */
  refresh(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refreshNow();
    }, 10);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
