// The HTTP server: non-resource endpoints (health, version, discovery, OpenAPI), then resources.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { ServerContext } from './context.ts';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, VERSION_INFO } from './discovery.ts';
import { ApiError, resourceNotFound } from './errors.ts';
import { handleResource } from './handlers.ts';
import { openApiV3GroupVersion, openApiV3Root } from './openapi.ts';
import { sendError, sendJson } from './respond.ts';
import { parseResourcePath } from './router.ts';

const EMPTY = Buffer.alloc(0);

function readBody(req: IncomingMessage): Promise<Buffer> {
  if (req.method === 'GET' || req.method === 'HEAD') {
    req.resume();
    return Promise.resolve(EMPTY);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendText(res: ServerResponse, code: number, text: string): void {
  res.writeHead(code, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Answer non-resource paths; returns false when the path is not one of them. */
function handleNonResource(ctx: ServerContext, path: string, res: ServerResponse): boolean {
  const parts = path.split('/').filter(Boolean);
  if (
    path === '/healthz' ||
    path === '/readyz' ||
    path === '/livez' ||
    /^\/(healthz|readyz|livez)\//.test(path)
  ) {
    sendText(res, 200, 'ok');
    return true;
  }
  if (path === '/version' || path === '/version/') {
    sendJson(res, 200, VERSION_INFO);
    return true;
  }
  if (path === '/api' || path === '/api/') {
    sendJson(res, 200, apiVersions(ctx.hostPort));
    return true;
  }
  if (path === '/apis' || path === '/apis/') {
    sendJson(res, 200, apiGroupList(ctx.registry));
    return true;
  }
  if (parts[0] === 'api' && parts.length === 2) {
    const doc = apiResourceList(ctx.registry, '', parts[1]);
    if (!doc) throw resourceNotFound();
    sendJson(res, 200, doc);
    return true;
  }
  if (parts[0] === 'apis' && (parts.length === 2 || parts.length === 3)) {
    const doc =
      parts.length === 2
        ? apiGroup(ctx.registry, parts[1])
        : apiResourceList(ctx.registry, parts[1], parts[2]);
    if (!doc) throw resourceNotFound();
    sendJson(res, 200, doc);
    return true;
  }
  if (parts[0] === 'openapi') {
    if (parts[1] === 'v3' && parts.length === 2) sendJson(res, 200, openApiV3Root(ctx.registry));
    else if (parts[1] === 'v3') {
      const group = parts[2] === 'api' ? '' : parts[3];
      const version = parts[2] === 'api' ? parts[3] : parts[4];
      const doc = version ? openApiV3GroupVersion(ctx.registry, group, version) : undefined;
      if (!doc) throw resourceNotFound();
      sendJson(res, 200, doc);
    } else throw resourceNotFound();
    return true;
  }
  return false;
}

export function createHttpServer(ctx: ServerContext): Server {
  const server = createServer((req, res) => {
    void (async () => {
      try {
        const url = new URL(req.url ?? '/', 'http://sandbox');
        const raw = await readBody(req);
        ctx.log?.(`${req.method} ${url.pathname}${url.search}`);
        if (handleNonResource(ctx, url.pathname, res)) return;
        const info = parseResourcePath(url.pathname);
        if (!info) throw resourceNotFound();
        await handleResource(ctx, {
          info,
          query: url.searchParams,
          body: raw.toString('utf8'),
          raw,
          req,
          res,
        });
      } catch (err) {
        if (!(err instanceof ApiError))
          ctx.log?.(`internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        sendError(res, err);
      }
    })();
  });
  server.keepAliveTimeout = 30_000;
  return server;
}
