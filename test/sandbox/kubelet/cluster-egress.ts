// kube-apiserver's "cluster" egress for the sandbox (opt-in, with the pod network): with an egress
// selector configured, the API server dials webhooks' Services at their ClusterIPs, aggregated
// APIs and kubelets through an HTTP CONNECT proxy on a Unix socket (as Konnectivity's). Nothing
// routes ClusterIPs here (no kube-proxy), and a ClusterIP dialled directly would follow the
// machine's default route off the machine: this proxy is where they go instead. It maps
// `<clusterIP>:<port>` to a ready address of the Service (endpoints.ts, the kubelet's view) at its
// target port, passes loopback destinations (the kubelet's own port for `kubectl logs`) and Pod
// IPs of the pod network through, and refuses everything else.
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Endpoints, Logger, Service } from './types.ts';

export interface EgressView {
  services(): Service[];
  /** each Service's Endpoints as the endpoints controller would compute them */
  endpoints(): Endpoints[];
  /** whether a destination outside the Services may be dialled (loopback, pod network) */
  local(ip: string): boolean;
}

/** Writes the API server's egress selector configuration; returns its flag and the socket path. */
export function egressSelector(dir: string): { flag: string; socket: string } {
  const socket = join(dir, 'cluster-egress.sock');
  const file = join(dir, 'egress-selector.json');
  const connection = { proxyProtocol: 'HTTPConnect', transport: { uds: { udsName: socket } } };
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'apiserver.k8s.io/v1beta1',
      kind: 'EgressSelectorConfiguration',
      egressSelections: [{ name: 'cluster', connection }],
    }),
  );
  return { flag: `--egress-selector-config-file=${file}`, socket };
}

/** Where `host:port` goes: a Service's endpoint, the destination itself, or nowhere. */
export function route(destination: string, view: EgressView): { host: string; port: number } | undefined {
  const m = /^\[?([^\]]+)\]?:(\d+)$/.exec(destination);
  if (!m) return undefined;
  const [, host, portText] = m;
  const port = Number(portText);
  const svc = view.services().find(s => s.spec?.clusterIP === host);
  if (!svc) return view.local(host) ? { host, port } : undefined;
  const servicePort = svc.spec?.ports?.find(p => p.port === port);
  if (!servicePort) return undefined;
  const ep = view
    .endpoints()
    .find(e => e.metadata.namespace === svc.metadata.namespace && e.metadata.name === svc.metadata.name);
  for (const subset of ep?.subsets ?? []) {
    const target = subset.ports?.find(p => p.name === servicePort.name) ?? subset.ports?.[0];
    const address = subset.addresses?.[0];
    if (target && address) return { host: address.ip, port: target.port };
  }
  return undefined;
}

export async function startClusterEgress(
  socket: string,
  view: EgressView,
  log: Logger,
): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req, client: Socket) => {
    const destination = req.url ?? '';
    const target = route(destination, view);
    if (!target) {
      log(`cluster egress: refused ${destination} (no such Service endpoint or local address)`);
      client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      return;
    }
    const upstream = connect(target.port, target.host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  rmSync(socket, { force: true }); // left by a sandbox that was killed
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, resolve);
  });
  return {
    close: async () => {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>(resolve => server.close(() => resolve()));
    },
  };
}
