// Builds the HTTP server for one registered function. It is the functions framework's own server
// (same middleware, same routing), plus one thing it lacks: a body that fails to parse is answered
// 400 with a JSON message instead of an HTML page, because the event system must be told clearly
// that such an event can never succeed.
import type { Server } from 'node:http';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import type { NextFunction, Request, Response } from 'express';

type ExpressLike = {
  use(handler: (err: unknown, req: Request, res: Response, next: NextFunction) => void): void;
};

export function functionServer(name: string): Server {
  // getTestServer is the framework's getServer() with the registered signature type.
  const server = getTestServer(name);
  const app = server.listeners('request')[0] as unknown as ExpressLike;
  app.use((err, _req, res, next) => {
    const status = httpStatusOf(err);
    if (res.headersSent || status === undefined || status >= 500) {
      next(err);
      return;
    }
    res
      .status(status)
      .json({ error: `unreadable request body: ${err instanceof Error ? err.message : String(err)}` });
  });
  return server;
}

/** Listens on the given port (0 = any) on loopback unless a host is given; resolves with the port. */
export async function listen(server: Server, port: number, host = '127.0.0.1'): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return typeof address === 'object' && address ? address.port : port;
}

function httpStatusOf(err: unknown): number | undefined {
  const status = (err as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' ? status : undefined;
}
