// The standalone Pod's health endpoints, for the kubelet's probes. The functions listen on loopback
// only, where the kubelet cannot reach them, so the bridge answers for them:
//   /healthz            200 while the bridge process serves (liveness);
//   /readyz             200 once the bridge has started watching, 503 before (readiness);
//   /functions/<name>   200 when that subscriber's port accepts a TCP connection, else 503;
//   /functions/<name>/metrics   that function's Prometheus metrics (GET /metrics on its port), so
//                       a scraper reaches them on the Pod IP;
//   /metrics            the bridge's own (etcdfn_bridge_deliveries_dropped_total: what it coalesced or shed).
// Replies are one short line of text and carry no data (metrics carry counts by kind and outcome).
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { registry } from '../shared/runtime/metrics.ts';

export interface HealthOptions {
  /** Subscriber name → URL, as given to the bridge with --subscriber. */
  subscribers: Record<string, string>;
  /** Whether the bridge is ready (started, watches open). */
  ready: () => boolean;
  /** How long a function's port may take to accept a connection (default 1000 ms). */
  connectTimeoutMs?: number;
}

export function healthServer(options: HealthOptions): Server {
  const timeout = options.connectTimeoutMs ?? 1000;
  return createServer((req, res) => {
    const reply = (status: number, text: string) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${text}\n`);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, 'method not allowed');
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return reply(200, 'ok');
    if (path === '/readyz') return options.ready() ? reply(200, 'ready') : reply(503, 'starting');
    if (path === '/metrics') {
      void registry.metrics().then(
        text => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        () => reply(500, 'metrics failed'),
      );
      return;
    }
    const metrics = /^\/functions\/([a-z0-9-]+)\/metrics$/.exec(path);
    const metricsOf = metrics ? options.subscribers[metrics[1] ?? ''] : undefined;
    if (metricsOf) {
      void fetch(new URL('/metrics', metricsOf), { signal: AbortSignal.timeout(timeout * 5) })
        .then(async r => {
          const type = r.headers.get('content-type') ?? 'text/plain; charset=utf-8';
          res.writeHead(r.status, { 'content-type': type }).end(await r.text());
        })
        .catch(() => reply(503, 'not listening'));
      return;
    }
    const match = /^\/functions\/([a-z0-9-]+)$/.exec(path);
    const url = match ? options.subscribers[match[1]] : undefined;
    if (!url) return reply(404, 'unknown path');
    void portOpen(new URL(url), timeout).then(open =>
      open ? reply(200, 'listening') : reply(503, 'not listening'),
    );
  });
}

/** Whether a TCP connection to the URL's host and port succeeds within the timeout. */
export function portOpen(url: URL, timeoutMs: number): Promise<boolean> {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise(resolve => {
    const socket = connect({ host, port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Listens on host:port (0 = any port); resolves with the port. */
export async function listenOn(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return typeof address === 'object' && address ? address.port : port;
}
