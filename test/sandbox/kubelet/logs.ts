// The kubelet's own API, as far as the API server calls it: GET /containerLogs/<ns>/<pod>/<container>
// (what `kubectl logs` reaches through the API server's pods/log), over HTTPS with the node's
// serving certificate, answering only clients whose certificate the cluster CA signed (the API
// server's kubelet client). The API server has already checked that the container exists.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface ContainerLogs {
  logs(namespace: string, pod: string, container: string, previous?: boolean): string;
}

export interface KubeletServing {
  cert: string;
  key: string;
  /** the CA whose client certificates may call (the cluster CA) */
  ca: string;
}

/** The last `tail` lines of a log (all of them when tail is undefined). */
export function tailLines(text: string, tail: number | undefined): string {
  if (tail === undefined || !Number.isInteger(tail) || tail < 0) return text;
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.slice(Math.max(0, lines.length - tail)).join('\n') + (tail > 0 && lines.length ? '\n' : '');
}

export async function startKubeletServer(
  source: ContainerLogs,
  serving: KubeletServing,
): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer(
    {
      cert: readFileSync(serving.cert),
      key: readFileSync(serving.key),
      ca: readFileSync(serving.ca),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      const url = new URL(req.url ?? '/', 'https://kubelet');
      const match = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
      if (req.method !== 'GET' || !match) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('404 page not found\n');
        return;
      }
      const [, namespace, pod, container] = match.map(decodeURIComponent) as [string, string, string, string];
      let text: string;
      try {
        text = source.logs(namespace, pod, container, url.searchParams.get('previous') === 'true');
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end((err as Error).message);
        return;
      }
      const tail = url.searchParams.has('tailLines') ? Number(url.searchParams.get('tailLines')) : undefined;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(tailLines(text, tail));
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise(resolve => server.close(() => resolve())),
  };
}
