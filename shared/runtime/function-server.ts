// Builds the HTTP server for one registered function. It is the functions framework's own server
// (same middleware, same routing), plus what it lacks: a body limit (64 KiB by default, 413 beyond;
// see body-limit.ts), and a body that fails to parse answered 400 with a JSON message instead of an
// HTML page, because the event system must be told clearly that such an event can never succeed.
// When sender authentication is configured (ETCDFN_OIDC_*, oidc-claims.ts), a request without a valid
// Bearer token from an allowed Trigger is answered 401 before its body is read, so no work is done
// (503 when the signing keys cannot be fetched: the sender may be genuine, so it should try again).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import type { NextFunction, Request, Response } from 'express';
import { maxEventBytesFromEnv, readLimitedBody, refuse } from './body-limit.ts';
import { oidcConfigFromEnv } from './oidc-claims.ts';
import { OIDC_FETCH_TOKEN_FILE_ENV, senderVerifier, type SenderVerifier } from './oidc-verifier.ts';

type ExpressLike = {
  use(handler: (err: unknown, req: Request, res: Response, next: NextFunction) => void): void;
};

export interface FunctionServerOptions {
  /** Largest request body accepted, in bytes (default: $ETCDFN_MAX_EVENT_BYTES, or 64 KiB). */
  maxBodyBytes?: number;
  /** Checks the sender's token (default: from $ETCDFN_OIDC_*; none when unset). */
  sender?: SenderVerifier;
}

export function functionServer(name: string, options: FunctionServerOptions = {}): Server {
  const limit = options.maxBodyBytes ?? maxEventBytesFromEnv();
  const sender = options.sender ?? senderFromEnv();
  // getTestServer is the framework's getServer() with the registered signature type.
  const server = getTestServer(name);
  const app = server.listeners('request')[0] as unknown as ExpressLike &
    ((req: IncomingMessage, res: ServerResponse) => void);
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // GET /metrics (counts, no secrets) stays open to the scraper, which has no Trigger's token.
    const authenticated =
      sender && !isMetricsScrape(req)
        ? sender.verify(req.headers.authorization)
        : Promise.resolve({ ok: true } as const);
    void authenticated.then(async verdict => {
      if (!verdict.ok) {
        if (verdict.status === 401) res.setHeader('www-authenticate', 'Bearer');
        refuse(res, verdict.status, `sender not authenticated: ${verdict.reason}`);
        return;
      }
      const result = await readLimitedBody(req, limit);
      if (result.kind === 'refused') {
        refuse(res, result.status, result.error);
        return;
      }
      // The request has been read to its end, so the framework's body parsers skip it.
      Object.assign(req, { body: result.body, rawBody: result.raw });
      app(req, res);
    });
  });
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

function isMetricsScrape(req: IncomingMessage): boolean {
  return req.method === 'GET' && (req.url ?? '').split('?')[0] === '/metrics';
}

function senderFromEnv(): SenderVerifier | undefined {
  const config = oidcConfigFromEnv(process.env);
  if (!config) return undefined;
  return senderVerifier(config, { fetchTokenFile: process.env[OIDC_FETCH_TOKEN_FILE_ENV] || undefined });
}

function httpStatusOf(err: unknown): number | undefined {
  const status = (err as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' ? status : undefined;
}
