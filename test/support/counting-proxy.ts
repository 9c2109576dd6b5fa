// A small HTTP proxy in front of an API server that records every request passing through it, so a
// benchmark or a test can say how many reads and writes one piece of code makes. It serves plain
// HTTP on loopback and calls the API server over HTTPS with the kubeconfig's credentials, as
// `kubectl proxy` does; bodies are streamed through untouched.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { request, type RequestOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';

/** What a request was, as the API server would count it. */
export type RequestKind =
  'discovery' | 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'other';

export interface ProxiedRequest {
  method: string;
  path: string;
  kind: RequestKind;
  status: number;
}

export interface CountingProxy {
  url: string;
  /** Every request since the last `reset()`, in the order the answers came back. */
  requests(): ProxiedRequest[];
  reset(): void;
  close(): Promise<void>;
}

const WRITES: ReadonlySet<RequestKind> = new Set(['create', 'update', 'patch', 'delete']);

export function isWrite(kind: RequestKind): boolean {
  return WRITES.has(kind);
}

/** Classifies a request by method and path (`/api/v1/...`, `/apis/<group>/<version>/...`). */
export function classify(method: string, rawPath: string): RequestKind {
  const url = new URL(rawPath, 'http://proxy');
  const parts = url.pathname.split('/').filter(Boolean);
  let rest: string[];
  if (parts[0] === 'api') rest = parts.slice(2);
  else if (parts[0] === 'apis') rest = parts.slice(3);
  else return method === 'GET' ? 'discovery' : 'other';
  if (rest.length === 0) return method === 'GET' ? 'discovery' : 'other';
  // Namespaced: namespaces/<ns>/<resource>/...; a bare namespaces[/<name>] is the Namespace kind.
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const collection = rest.length === 1;
  switch (method) {
    case 'GET':
      if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') return 'watch';
      return collection ? 'list' : 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return 'other';
  }
}

/** A proxy to the API server of `kc` (its current cluster and user). */
export async function startCountingProxy(kc: KubeConfig): Promise<CountingProxy> {
  const upstream = new URL(kc.getCurrentCluster()!.server);
  const tls: RequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  let log: ProxiedRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const forward = request(
      {
        ...tls,
        host: upstream.hostname,
        port: upstream.port,
        method,
        path,
        headers: { ...req.headers, ...tls.headers, host: upstream.host },
      },
      answer => {
        const status = answer.statusCode ?? 502;
        log.push({ method, path, kind: classify(method, path), status });
        res.writeHead(status, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', err => {
      log.push({ method, path, kind: classify(method, path), status: 502 });
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${err.message}`);
    });
    req.pipe(forward);
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => [...log],
    reset: () => {
      log = [];
    },
    close: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
