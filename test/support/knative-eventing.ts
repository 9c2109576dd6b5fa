// Knative Eventing's real programs (built by scripts/build-go.sh from test/go/knative) run as local
// processes against a test API server, with its admin kubeconfig, as Knative's binaries accept out
// of a cluster: the webhook (defaulting and validation of Knative's kinds) and the controllers.
//
// The API server reaches the webhook through its "cluster" egress: kube-apiserver resolves a
// webhook's Service to its ClusterIP and, with an egress selector configured, dials it through an
// HTTP CONNECT proxy on a Unix socket (as Konnectivity's does). startClusterEgress() is that proxy: it maps a
// Service's ClusterIP and port to the loopback port where the program behind it listens, and
// refuses every other destination, so no traffic leaves loopback.
//
// Knative's config (its namespace, config maps, the webhook's Secret, Service and webhook
// configurations) is applied from the same module's config/, as its release would install it.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { goCacheDir } from './etcd-binaries.ts';
import { kubectl } from './kubectl.ts';
import { freePort, logTail, startChild, type Child } from '../sandbox/control-plane/processes.ts';
import type { TestApiServer } from './api-server.ts';
import type { Obj } from './helm.ts';

export const SYSTEM_NAMESPACE = 'knative-eventing';

/** The programs scripts/build-go.sh builds from test/go/knative, named after their Deployments. */
export const KNATIVE_PROGRAMS = [
  'eventing-controller',
  'eventing-webhook',
  'apiserver-receive-adapter',
  'pingsource-mt-adapter',
  'imc-controller',
  'imc-dispatcher',
  'mt-broker-controller',
  'mt-broker-ingress',
  'mt-broker-filter',
] as const;
export type KnativeProgram = (typeof KNATIVE_PROGRAMS)[number];

/** Each program's path; throws when scripts/build-go.sh has not built them. */
export function knativeBinaries(): Record<KnativeProgram, string> {
  const dir = join(goCacheDir(), 'knative');
  const out = {} as Record<KnativeProgram, string>;
  for (const p of KNATIVE_PROGRAMS) {
    out[p] = join(dir, p);
    if (!existsSync(out[p])) throw new Error(`${out[p]} is missing: run bash scripts/build-go.sh knative`);
  }
  return out;
}

export interface ClusterEgress {
  /** the kube-apiserver flag that sends its cluster traffic (webhooks) through this proxy */
  apiserverFlag: string;
  /** routes connections to `clusterIP:port` to 127.0.0.1:`target` */
  route(clusterIP: string, port: number, target: number): void;
  /** the destinations asked for, in order (refused ones too) */
  asked: string[];
  close(): Promise<void>;
}

/** An HTTP CONNECT proxy for kube-apiserver's "cluster" egress, with its selector configuration. */
export async function startClusterEgress(dir: string): Promise<ClusterEgress> {
  const routes = new Map<string, number>();
  const asked: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((_req, res) => {
    res.writeHead(405).end();
  });
  server.on('connect', (req, client: Socket) => {
    const destination = req.url ?? '';
    asked.push(destination);
    const target = routes.get(destination);
    if (!target) {
      client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      return;
    }
    const upstream = connect(target, '127.0.0.1', () => {
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
  // a Unix socket: kube-apiserver 1.37 dereferences a TCP transport's tlsConfig even for an
  // http:// URL (a nil pointer panic at start), so plain TCP is not an option
  mkdirSync(dir, { recursive: true });
  const socket = join(dir, 'egress.sock');
  await new Promise<void>(resolve => server.listen(socket, resolve));
  const file = join(dir, 'egress-selector.yaml');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'apiserver.k8s.io/v1beta1',
      kind: 'EgressSelectorConfiguration',
      egressSelections: [
        {
          name: 'cluster',
          connection: {
            proxyProtocol: 'HTTPConnect',
            transport: { uds: { udsName: socket } },
          },
        },
      ],
    }),
  );
  return {
    apiserverFlag: `--egress-selector-config-file=${file}`,
    route: (clusterIP, servicePort, target) => routes.set(`${clusterIP}:${servicePort}`, target),
    asked,
    close: async () => {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>(resolve => server.close(() => resolve()));
    },
  };
}

/** Every object of the YAML files given, in order. */
export function readObjects(files: string[]): Obj[] {
  return files.flatMap(file =>
    parseAllDocuments(readFileSync(file, 'utf8'))
      .map(d => d.toJS() as Obj | null)
      .filter((o): o is Obj => !!o?.kind),
  );
}

/** Applies objects with kubectl (server-side), as a user would; returns kubectl's output. */
export async function applyObjects(
  api: TestApiServer,
  dir: string,
  name: string,
  objects: Obj[],
  extra: string[] = [],
) {
  const file = join(dir, `${name.replace(/[^a-z0-9]+/gi, '-')}.yaml`);
  writeFileSync(file, objects.map(o => stringify(o)).join('---\n'));
  return kubectl(
    api.kubeconfig,
    'apply',
    '--server-side',
    '--force-conflicts',
    '--field-manager=etcdfn-test',
    '-f',
    file,
    ...extra,
  );
}

export interface KnativeProcess {
  child: Child;
  stop(): Promise<void>;
  tail(lines?: number): string;
}

/**
 * Starts one of Knative's programs with the environment its Deployment sets (SYSTEM_NAMESPACE,
 * config map names, POD_NAME...) and the admin kubeconfig. Every program also listens on :8080
 * (health probes, fixed in knative.dev/pkg's sharedmain) and on a profiling port (PROFILING_PORT,
 * given a free one here): two of them cannot run at once in one network namespace.
 */
export async function startKnativeProgram(
  api: TestApiServer,
  dir: string,
  binary: KnativeProgram,
  env: Record<string, string> = {},
): Promise<KnativeProcess> {
  const bins = knativeBinaries();
  const kubeconfig = join(dir, `${binary}.kubeconfig`);
  api.writeKubeconfig(kubeconfig);
  const child = startChild(binary, bins[binary], [`--kubeconfig=${kubeconfig}`], join(dir, `${binary}.log`), {
    PATH: process.env.PATH,
    HOME: dir,
    SYSTEM_NAMESPACE,
    CONFIG_LOGGING_NAME: 'config-logging',
    CONFIG_OBSERVABILITY_NAME: 'config-observability',
    METRICS_DOMAIN: 'knative.dev/eventing',
    POD_NAME: `${binary}-sandbox`,
    PROFILING_PORT: String(await freePort()),
    ...env,
  });
  return { child, stop: () => child.stop(), tail: (lines = 40) => logTail(child, lines) };
}
