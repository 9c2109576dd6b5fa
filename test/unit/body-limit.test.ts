// The function endpoints' body limit (shared/runtime/body-limit.ts) on its own, over an in-memory
// request: what is refused (413 over the limit, declared or counted; 415 compressed; 400 unreadable),
// what is read and how it is parsed, and the limit's setting. The same limit through the real
// program over HTTP, with memory measured, is test/integration/function-body-limit.test.ts.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import {
  DEFAULT_ETCDFN_MAX_EVENT_BYTES,
  maxEventBytesFromEnv,
  readLimitedBody,
  refuse,
} from '../../shared/runtime/body-limit.ts';

/** A request whose body arrives in the given chunks; `read` counts the bytes the reader took. */
function request(chunks: (string | Buffer)[], headers: Record<string, string> = {}) {
  const stats = { read: 0 };
  const stream = Readable.from(
    (function* () {
      for (const c of chunks) {
        const b = Buffer.from(c);
        stats.read += b.length;
        yield b;
      }
    })(),
    { objectMode: false },
  );
  return { req: Object.assign(stream, { headers }) as unknown as IncomingMessage, stats };
}

const json = { 'content-type': 'application/cloudevents+json' };

describe('readLimitedBody', () => {
  it('reads and parses a JSON body within the limit (application/json and any +json type)', async () => {
    for (const type of [
      'application/json',
      'application/cloudevents+json',
      'Application/JSON; charset=utf-8',
      'application/json ; charset=utf-8',
    ]) {
      const { req } = request(['{"a":', '1}'], { 'content-type': type });
      const result = await readLimitedBody(req, 1024);
      assert.equal(result.kind, 'read', type);
      assert.deepEqual(result.kind === 'read' && result.body, { a: 1 }, type);
      assert.equal(result.kind === 'read' && result.raw.toString(), '{"a":1}');
    }
  });

  it('reads a text body as a string, anything else as its bytes, and an empty body as nothing', async () => {
    const text = await readLimitedBody(request(['hi ', 'there'], { 'content-type': 'text/plain' }).req, 1024);
    assert.deepEqual(text.kind === 'read' && text.body, 'hi there');
    const bytes = await readLimitedBody(
      request(['\x01\x02'], { 'content-type': 'application/octet-stream' }).req,
      1024,
    );
    assert.ok(bytes.kind === 'read' && Buffer.isBuffer(bytes.body), JSON.stringify(bytes));
    assert.deepEqual(bytes.kind === 'read' && [...bytes.body], [1, 2]);
    const untyped = await readLimitedBody(request(['x']).req, 1024);
    assert.ok(untyped.kind === 'read' && Buffer.isBuffer(untyped.body));
    const empty = await readLimitedBody(request([], json).req, 1024);
    assert.equal(empty.kind, 'read');
    assert.equal(empty.kind === 'read' && empty.body, undefined);
    assert.equal(empty.kind === 'read' && empty.raw.length, 0);
  });

  it('answers 400, with the parser’s words, to JSON that does not parse', async () => {
    const result = await readLimitedBody(request(['{"a":'], json).req, 1024);
    assert.equal(result.kind, 'refused');
    assert.equal(result.kind === 'refused' && result.status, 400);
    assert.match(result.kind === 'refused' ? result.error : '', /^unreadable request body: .*JSON/);
  });

  it('answers 413 to a declared length over the limit without reading the body', async () => {
    const { req, stats } = request(['x'.repeat(2000)], { ...json, 'content-length': '2000' });
    const result = await readLimitedBody(req, 1024);
    assert.deepEqual(result, {
      kind: 'refused',
      status: 413,
      error:
        'request body larger than 1024 bytes; an event is a few KiB (raise ETCDFN_MAX_EVENT_BYTES if needed)',
    });
    assert.equal(stats.read, 0);
  });

  it('reads a body of exactly the limit, declared or not', async () => {
    const body = `"${'x'.repeat(1022)}"`;
    for (const headers of [{ ...json, 'content-length': '1024' }, json]) {
      const result = await readLimitedBody(request([body], headers).req, 1024);
      assert.equal(result.kind, 'read', JSON.stringify(headers));
    }
  });

  it('answers 413 to an undeclared body once the bytes counted pass the limit', async () => {
    const result = await readLimitedBody(
      request(['x'.repeat(600), 'x'.repeat(600), 'x'.repeat(600)], json).req,
      1024,
    );
    assert.equal(result.kind, 'refused');
    assert.equal(result.kind === 'refused' && result.status, 413);
  });

  it('answers 415 to a compressed body of any encoding, before reading it', async () => {
    for (const encoding of ['gzip', 'GZIP', 'deflate', 'br']) {
      const { req, stats } = request(['x'], { ...json, 'content-encoding': encoding });
      const result = await readLimitedBody(req, 1024);
      assert.equal(result.kind === 'refused' && result.status, 415, encoding);
      assert.match(
        result.kind === 'refused' ? result.error : '',
        new RegExp(`content-encoding "${encoding.toLowerCase()}" is not accepted`),
      );
      assert.equal(stats.read, 0);
    }
    const identity = await readLimitedBody(
      request(['{}'], { ...json, 'content-encoding': 'identity' }).req,
      1024,
    );
    assert.equal(identity.kind, 'read');
  });

  it('answers 400 when the request stream fails', async () => {
    const req = Object.assign(
      new Readable({
        read() {
          this.destroy(new Error('socket hang up'));
        },
      }),
      { headers: json },
    ) as unknown as IncomingMessage;
    const result = await readLimitedBody(req, 1024);
    assert.deepEqual(result, {
      kind: 'refused',
      status: 400,
      error: 'unreadable request body: socket hang up',
    });
  });
});

describe('refuse', () => {
  it('answers with the status and a JSON body naming the error', () => {
    const sent: { status?: number; headers?: Record<string, string>; body?: string } = {};
    const res = {
      writeHead(status: number, headers: Record<string, string>) {
        Object.assign(sent, { status, headers });
        return this;
      },
      end(body: string) {
        sent.body = body;
        return this;
      },
    } as unknown as ServerResponse;
    refuse(res, 413, 'too large');
    assert.deepEqual(sent, {
      status: 413,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: '{"error":"too large"}',
    });
  });
});

describe('maxEventBytesFromEnv', () => {
  it('is 64 KiB unless ETCDFN_MAX_EVENT_BYTES says otherwise', () => {
    assert.equal(DEFAULT_ETCDFN_MAX_EVENT_BYTES, 65536);
    assert.equal(maxEventBytesFromEnv({}), 65536);
    assert.equal(maxEventBytesFromEnv({ ETCDFN_MAX_EVENT_BYTES: '' }), 65536);
    assert.equal(maxEventBytesFromEnv({ ETCDFN_MAX_EVENT_BYTES: '2048' }), 2048);
    assert.equal(maxEventBytesFromEnv({ ETCDFN_MAX_EVENT_BYTES: '1024' }), 1024);
  });

  it('refuses a value that is not a whole number of at least 1024 bytes, naming the setting and the value', () => {
    for (const value of ['lots', '1023', '1500.5', '-2048']) {
      assert.throws(
        () => maxEventBytesFromEnv({ ETCDFN_MAX_EVENT_BYTES: value }),
        new RegExp(`ETCDFN_MAX_EVENT_BYTES must be a whole number of bytes, at least 1024; got "${value}"`),
      );
    }
  });
});
