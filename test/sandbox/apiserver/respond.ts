// Writing responses: JSON bodies (with a per-object serialisation cache), Status errors, warnings.

import type { ServerResponse } from 'node:http';
import { ApiError, internalError } from './errors.ts';
import type { KObject } from './types.ts';

const jsonCache = new WeakMap<object, string>();

/** JSON of an object; stored objects are immutable, so their serialisation is cached. */
export function objectJson(obj: KObject): string {
  let json = jsonCache.get(obj);
  if (json === undefined) {
    json = JSON.stringify(obj);
    jsonCache.set(obj, json);
  }
  return json;
}

export function sendJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  opts: { contentType?: string; warnings?: string[] } = {},
): void {
  const data = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string | number | string[]> = {
    'Content-Type': opts.contentType ?? 'application/json',
    'Content-Length': Buffer.byteLength(data),
    'Cache-Control': 'no-cache, private',
  };
  if (opts.warnings?.length) headers.Warning = opts.warnings.map(w => `299 - ${JSON.stringify(w)}`);
  res.writeHead(code, headers);
  res.end(data);
}

export function sendObject(res: ServerResponse, code: number, obj: KObject, warnings?: string[]): void {
  sendJson(res, code, objectJson(obj), { warnings });
}

export function sendError(res: ServerResponse, err: unknown): void {
  const apiErr =
    err instanceof ApiError ? err : internalError(err instanceof Error ? err.message : String(err));
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, apiErr.code, apiErr.toStatus());
}
