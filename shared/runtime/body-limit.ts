// Reads a request body before the functions framework sees it, refusing anything over a limit.
// The framework parses bodies of up to 1 GiB and inflates gzip without a cap, so one large POST
// could push a function over its memory limit. An event is a few KiB: a body over the limit is
// answered 413 without being buffered (a declared length is refused before reading; a chunked body
// is counted as it arrives and dropped at the limit), a compressed body 415. A body within the limit
// is parsed as the framework would (JSON for JSON types, text for text/*, a Buffer otherwise), and
// the framework's own parsers then skip the request, which has been read.
import type { IncomingMessage, ServerResponse } from 'node:http';

export const DEFAULT_ETCDFN_MAX_EVENT_BYTES = 64 * 1024;

export type BodyResult =
  { kind: 'read'; body: unknown; raw: Buffer } | { kind: 'refused'; status: number; error: string };

/** The limit from $ETCDFN_MAX_EVENT_BYTES, or 64 KiB. */
export function maxEventBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const value = env.ETCDFN_MAX_EVENT_BYTES;
  if (value === undefined || value === '') return DEFAULT_ETCDFN_MAX_EVENT_BYTES;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1024) {
    throw new Error(`ETCDFN_MAX_EVENT_BYTES must be a whole number of bytes, at least 1024; got "${value}"`);
  }
  return n;
}

export function readLimitedBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity') {
    return Promise.resolve({
      kind: 'refused',
      status: 415,
      error: `content-encoding "${encoding}" is not accepted; send the event uncompressed`,
    });
  }
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.resolve(tooLarge(limit));
  return new Promise(resolve => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (over) return;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        resolve(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', err =>
      resolve({ kind: 'refused', status: 400, error: `unreadable request body: ${err.message}` }),
    );
    req.on('end', () => {
      if (over) return;
      const raw = Buffer.concat(chunks);
      resolve(parse(req.headers['content-type'] ?? '', raw));
    });
  });
}

/**
 * Answers a refused body. The connection is not cut: the rest of the body is read and dropped (Node
 * does this for an unread request), since closing a socket with unread data resets it and the
 * sender could lose the answer.
 */
export function refuse(res: ServerResponse, status: number, error: string): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ error }));
}

function tooLarge(limit: number): BodyResult {
  return {
    kind: 'refused',
    status: 413,
    error: `request body larger than ${limit} bytes; an event is a few KiB (raise ETCDFN_MAX_EVENT_BYTES if needed)`,
  };
}

function parse(contentType: string, raw: Buffer): BodyResult {
  const type = contentType.split(';')[0].trim().toLowerCase();
  if (raw.length === 0) return { kind: 'read', body: undefined, raw };
  if (type === 'application/json' || type.endsWith('+json')) {
    try {
      return { kind: 'read', body: JSON.parse(raw.toString('utf8')) as unknown, raw };
    } catch (err) {
      return {
        kind: 'refused',
        status: 400,
        error: `unreadable request body: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
  }
  if (type.startsWith('text/')) return { kind: 'read', body: raw.toString('utf8'), raw };
  return { kind: 'read', body: raw, raw };
}
