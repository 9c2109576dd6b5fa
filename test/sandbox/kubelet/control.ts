// The kubelet's control endpoint: a small HTTP server on 127.0.0.1 that exposes the fault
// operations, so that tests in another process and the command line (fault.ts) can use them.
// Its URL is written to <dataDir>/control.json ({ "url": ..., "pid": ... }).
//
//   POST /kill        {"namespace","pod","container"?,"signal"?}  → {"killed":[{"container","pid"}]}
//   POST /wipe-pvc    {"namespace","claim"}                       → {"path"}
//   POST /fill-pvc    {"namespace","claim","bytes"}               → {"path"}
//   POST /read-only-pvc {"namespace","claim"}                     → {"path"}
//   POST /release-pvc {"namespace","claim"}                       → {"path"}
//   POST /freeze, POST /unfreeze
//   POST /delay-start {"namespace","pod","seconds"}
//   GET  /state                                                   → NodeState
//   GET  /logs?namespace=&pod=&container=[&previous=1]            → text
// Errors answer {"error": message} with 4xx/5xx.
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type {
  DelayRequest,
  DiskFaultRequest,
  Faults,
  KillRequest,
  KillResult,
  NodeState,
  WipeRequest,
} from './faults.ts';
import { FaultError } from './faults.ts';

export type LogReader = (namespace: string, pod: string, container: string, previous: boolean) => string;

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

function send(res: ServerResponse, status: number, value: unknown): void {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  res.writeHead(status, { 'content-type': typeof value === 'string' ? 'text/plain' : 'application/json' });
  res.end(text);
}

async function route(faults: Faults, logs: LogReader, req: IncomingMessage): Promise<unknown> {
  const url = new URL(req.url ?? '/', 'http://control');
  const key = `${req.method} ${url.pathname}`;
  switch (key) {
    case 'POST /kill':
      return faults.kill((await body(req)) as unknown as KillRequest);
    case 'POST /wipe-pvc':
      return faults.wipePvc((await body(req)) as unknown as WipeRequest);
    case 'POST /fill-pvc':
      return faults.fillPvc((await body(req)) as unknown as DiskFaultRequest);
    case 'POST /read-only-pvc':
      return faults.readOnlyPvc((await body(req)) as unknown as DiskFaultRequest);
    case 'POST /release-pvc':
      return faults.releasePvc((await body(req)) as unknown as DiskFaultRequest);
    case 'POST /freeze':
      await faults.freeze();
      return { frozen: true };
    case 'POST /unfreeze':
      await faults.unfreeze();
      return { frozen: false };
    case 'POST /delay-start':
      await faults.delayStart((await body(req)) as unknown as DelayRequest);
      return { ok: true };
    case 'GET /state':
      return faults.state();
    case 'GET /logs': {
      const q = url.searchParams;
      return logs(
        q.get('namespace') ?? 'default',
        q.get('pod') ?? '',
        q.get('container') ?? '',
        q.get('previous') === '1',
      );
    }
    default:
      throw new FaultError(`no such endpoint: ${key}`, 404);
  }
}

/** Starts the control server on 127.0.0.1:port and records its URL in <dataDir>/control.json. */
export async function startControlServer(
  faults: Faults,
  logs: LogReader,
  dataDir: string,
  port = 0,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    route(faults, logs, req).then(
      value => send(res, 200, value ?? {}),
      (err: unknown) =>
        send(res, err instanceof FaultError ? err.status : 500, { error: (err as Error).message }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  writeFileSync(join(dataDir, 'control.json'), `${JSON.stringify({ url, pid: process.pid })}\n`);
  return {
    url,
    close: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The control URL recorded in a kubelet data directory. */
export function controlUrlOf(dataDir: string): string {
  const info = JSON.parse(readFileSync(join(dataDir, 'control.json'), 'utf8')) as { url: string };
  return info.url;
}

/** The fault operations of a kubelet running elsewhere, through its control endpoint. */
export class FaultClient implements Faults {
  readonly url: string;
  constructor(url: string) {
    this.url = url;
  }

  private async call<T>(method: string, path: string, payload?: unknown): Promise<T> {
    const res = await fetch(this.url + path, {
      method,
      headers: { 'content-type': 'application/json' },
      body: payload === undefined ? undefined : JSON.stringify(payload),
    });
    const text = await res.text();
    if (!res.ok) {
      let message = text;
      try {
        message = (JSON.parse(text) as { error?: string }).error ?? text;
      } catch {
        // plain text
      }
      throw new FaultError(message, res.status);
    }
    return (res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text) as T;
  }

  kill(req: KillRequest): Promise<KillResult> {
    return this.call('POST', '/kill', req);
  }

  wipePvc(req: WipeRequest): Promise<{ path: string }> {
    return this.call('POST', '/wipe-pvc', req);
  }

  fillPvc(req: DiskFaultRequest): Promise<{ path: string }> {
    return this.call('POST', '/fill-pvc', req);
  }

  readOnlyPvc(req: DiskFaultRequest): Promise<{ path: string }> {
    return this.call('POST', '/read-only-pvc', req);
  }

  releasePvc(req: DiskFaultRequest): Promise<{ path: string }> {
    return this.call('POST', '/release-pvc', req);
  }

  async freeze(): Promise<void> {
    await this.call('POST', '/freeze');
  }

  async unfreeze(): Promise<void> {
    await this.call('POST', '/unfreeze');
  }

  async delayStart(req: DelayRequest): Promise<void> {
    await this.call('POST', '/delay-start', req);
  }

  state(): Promise<NodeState> {
    return this.call('GET', '/state');
  }

  logs(namespace: string, pod: string, container: string, previous = false): Promise<string> {
    const q = new URLSearchParams({ namespace, pod, container, previous: previous ? '1' : '0' });
    return this.call('GET', `/logs?${q.toString()}`);
  }
}
