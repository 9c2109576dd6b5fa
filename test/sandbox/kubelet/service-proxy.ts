// ClusterIP Services when the pod network (pod-network.ts) runs, as kube-proxy's old userspace mode
// did them: for each ClusterIP Service with endpoints (pod-network or loopback Pods),
// the kubelet puts the ClusterIP on the pod network's bridge (a /32, local to this machine) and
// listens on it at each Service port, piping every connection to a ready endpoint at its target
// port. Each Pod namespace routes the service CIDR to the gateway, and the name server answers such
// a Service's name with its ClusterIP (dns.ts), so `http://broker-ingress.knative-eventing.svc`
// (port 80 → 8080) works from inside. The addresses go with the bridge; nothing is routed off the
// machine (the host does not forward; a ClusterIP not served here is not answered).
import { execFile } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { promisify } from 'node:util';
import type { Endpoints, Logger, Service } from './types.ts';

const execFileAsync = promisify(execFile);

export interface ServiceProxyView {
  services(): Service[];
  endpoints(): Endpoints[];
}

interface Served {
  ip: string;
  servers: Map<number, Server>;
}

export class ServiceProxy {
  private readonly served = new Map<string, Served>();
  private readonly sockets = new Set<Socket>();
  private running: Promise<void> | undefined;
  private again = false;

  private readonly bridge: string;
  private readonly view: ServiceProxyView;
  private readonly log: Logger;
  constructor(bridge: string, view: ServiceProxyView, log: Logger) {
    this.bridge = bridge;
    this.view = view;
    this.log = log;
  }

  /** The ClusterIPs served now (the name server answers their Services' names with them). */
  clusterIP(namespace: string, name: string): string | undefined {
    return this.served.get(`${namespace}/${name}`)?.ip;
  }

  /** Brings the served Services in line with the view (coalesced). */
  sync(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.syncOnce()
      .catch(err => this.log(`service proxy: ${(err as Error).message}`))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.sync();
        }
      });
  }

  private endpointsOf(svc: Service): Endpoints | undefined {
    return this.view
      .endpoints()
      .find(e => e.metadata.namespace === svc.metadata.namespace && e.metadata.name === svc.metadata.name);
  }

  private wanted(svc: Service): boolean {
    const ip = svc.spec?.clusterIP;
    if (!ip || ip === 'None' || svc.spec?.type === 'ExternalName') return false;
    const subsets = this.endpointsOf(svc)?.subsets ?? [];
    const addresses = subsets.flatMap(s => [...(s.addresses ?? []), ...(s.notReadyAddresses ?? [])]);
    // Loopback Pods' Services too: Pod namespaces reach them only this way (the kubelet dials 127.x).
    return addresses.length > 0;
  }

  private async syncOnce(): Promise<void> {
    const live = new Set<string>();
    for (const svc of this.view.services()) {
      const key = `${svc.metadata.namespace ?? 'default'}/${svc.metadata.name}`;
      if (!this.served.has(key) && !this.wanted(svc)) continue;
      live.add(key);
      if (!this.served.has(key)) await this.serve(key, svc);
    }
    for (const key of [...this.served.keys()]) if (!live.has(key)) await this.unserve(key);
  }

  private async serve(key: string, svc: Service): Promise<void> {
    const ip = svc.spec!.clusterIP!;
    await execFileAsync('ip', ['addr', 'add', `${ip}/32`, 'dev', this.bridge]).catch(() => undefined);
    const served: Served = { ip, servers: new Map() };
    this.served.set(key, served);
    for (const port of svc.spec?.ports ?? []) {
      if ((port.protocol ?? 'TCP') !== 'TCP') continue;
      const server = createServer(client => this.pipe(client, key, port.name));
      await new Promise<void>(resolve => {
        server.once('error', err => {
          this.log(`service proxy: ${key} ${ip}:${port.port}: ${err.message}`);
          resolve();
        });
        server.listen({ host: ip, port: port.port }, resolve);
      });
      served.servers.set(port.port, server);
    }
    this.log(`service proxy: ${key} at ${ip}`);
  }

  private async unserve(key: string): Promise<void> {
    const served = this.served.get(key)!;
    this.served.delete(key);
    for (const server of served.servers.values()) server.close();
    await execFileAsync('ip', ['addr', 'del', `${served.ip}/32`, 'dev', this.bridge]).catch(() => undefined);
  }

  /** A connection to the Service: to its first ready endpoint (as a ClusterIP would, minus balancing). */
  private pipe(client: Socket, key: string, portName: string | undefined): void {
    const [ns, name] = key.split('/');
    const svc = this.view.services().find(s => s.metadata.namespace === ns && s.metadata.name === name);
    const subset = (svc && this.endpointsOf(svc)?.subsets?.find(s => s.addresses?.length)) || undefined;
    const port = subset?.ports?.find(p => p.name === portName) ?? subset?.ports?.[0];
    const address = subset?.addresses?.[0];
    if (!port || !address) {
      client.destroy(); // no ready endpoint: refused, as kube-proxy's REJECT
      return;
    }
    const upstream = connect(port.port, address.ip);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => (s === client ? upstream : client).destroy());
    }
    client.pipe(upstream).pipe(client);
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    for (const key of [...this.served.keys()]) await this.unserve(key);
  }
}
