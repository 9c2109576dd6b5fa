// The snapshot upload (shared/s3/upload.ts) against a small in-memory store on loopback that behaves
// as AWS S3 documents: a PUT with `If-None-Match: *` is refused (412) when the key exists, a DELETE
// with `If-Match` only deletes that ETag. Fast and scripted, so the races and failures s3rver cannot
// produce on cue are here: another writer between etcdfn's HEAD and its PUT, an object replaced
// after the upload, a store that loses bytes, a store that fails. Nothing is ever overwritten that
// this EtcdSnapshot did not write. test/integration/s3-snapshot.test.ts and
// s3-conditional-create.test.ts run real etcd snapshots through s3rver (and a proxy honouring
// If-None-Match).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, beforeEach, describe, it } from 'node:test';
import { parseAllowList } from '../../shared/s3/endpoint-policy.ts';
import { OWNER_METADATA, type S3Target } from '../../shared/s3/location.ts';
import { classifyS3Error, uploadStream, type UploadResult } from '../../shared/s3/upload.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const ALLOW = parseAllowList('http://127.0.0.0/8').entries;
const UID = 'aaaabbbb-owner';
const KEY = 'etcd/prod/demo/snap-aaaabbbb.db';
const URI = `s3://backups/${KEY}`;
const credentials = { accessKeyId: 'AKIDUPLOAD', secretAccessKey: 'upload-secret' };
const META = `x-amz-meta-${OWNER_METADATA}`;

interface Stored {
  body: Buffer;
  etag: string;
  owner?: string;
}
const etagOf = (b: Buffer) => `"${createHash('md5').update(b).digest('hex')}"`;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const xmlError = (res: ServerResponse, code: number, xmlCode: string, message = `${xmlCode} here`) => {
  const xml = `<?xml version="1.0"?><Error><Code>${xmlCode}</Code><Message>${message}</Message></Error>`;
  res
    .writeHead(code, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) })
    .end(xml);
};

describe('uploadStream against a store that honours conditional requests', { timeout: 60_000 }, () => {
  let server: Server;
  let endpoint = '';
  const objects = new Map<string, Stored>();
  const requests: { method: string; ifNoneMatch?: string; ifMatch?: string; contentType?: string }[] = [];
  /** Runs once, before the store answers the next request of that method (a race, a failure). */
  const next: Partial<Record<string, (res: ServerResponse) => boolean>> = {};
  /** Runs before the store answers the HEAD after the upload (the check that it is stored). */
  let confirmHead: ((res: ServerResponse) => boolean) | undefined;
  let heads = 0;
  /** After each PUT: what the store keeps (a store that loses bytes). */
  let keep = (b: Buffer) => b;

  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const method = req.method ?? '';
        const key = decodeURIComponent((req.url ?? '').split('?')[0].split('/').slice(2).join('/'));
        const ifNoneMatch = req.headers['if-none-match'];
        const ifMatch = req.headers['if-match'];
        const contentType = method === 'PUT' ? req.headers['content-type'] : undefined;
        requests.push({
          method,
          ...(ifNoneMatch !== undefined && { ifNoneMatch }),
          ...(ifMatch !== undefined && { ifMatch }),
          ...(contentType !== undefined && { contentType }),
        });
        if (method === 'HEAD' && ++heads > 1 && confirmHead?.(res)) return;
        const hook = next[method];
        if (hook) {
          delete next[method];
          if (hook(res)) return;
        }
        const have = objects.get(key);
        if (method === 'HEAD') {
          if (!have) return void res.writeHead(404).end();
          return void res
            .writeHead(200, {
              'content-length': have.body.length,
              etag: have.etag,
              ...(have.owner && { [META]: have.owner }),
            })
            .end();
        }
        if (method === 'PUT') {
          if (ifNoneMatch === '*' && have) return xmlError(res, 412, 'PreconditionFailed');
          const body = keep(Buffer.concat(chunks));
          const owner = req.headers[META] as string | undefined;
          const etag = etagOf(body);
          objects.set(key, { body, etag, ...(owner && { owner }) });
          return void res.writeHead(200, { etag }).end();
        }
        if (method === 'DELETE') {
          if (ifMatch !== undefined && have && have.etag !== ifMatch)
            return xmlError(res, 412, 'PreconditionFailed');
          objects.delete(key);
          return void res.writeHead(204).end();
        }
        xmlError(res, 405, 'MethodNotAllowed');
      });
    });
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise(resolve => server.close(resolve));
  });
  beforeEach(() => {
    objects.clear();
    requests.length = 0;
    for (const m of Object.keys(next)) delete next[m];
    keep = b => b;
    confirmHead = undefined;
    heads = 0;
  });

  const target = (ownerUid = UID): S3Target => ({
    endpoint,
    bucket: 'backups',
    key: KEY,
    region: 'us-east-1',
    forcePathStyle: true,
    secretName: 'creds',
    uri: URI,
    ownerUid,
  });
  const BYTES = Buffer.from('an etcd snapshot, more or less');
  const upload = (body: Buffer = BYTES, ownerUid = UID): Promise<UploadResult> =>
    uploadStream(target(ownerUid), credentials, Readable.from([body]), { allowList: ALLOW });
  const methods = () => requests.map(r => r.method);

  it('creates the object only if nothing is there (If-None-Match: *), owned, and says what it stored', async () => {
    const result = await upload();
    const stored = objects.get(KEY)!;
    assert.deepEqual(result, {
      kind: 'uploaded',
      uri: URI,
      sizeBytes: BYTES.length,
      sha256: sha256(BYTES),
      etag: stored.etag,
    });
    assert.deepEqual(stored.body, BYTES);
    assert.equal(stored.owner, UID);
    assert.deepEqual(methods(), ['HEAD', 'PUT', 'HEAD']);
    assert.equal(requests[1]?.ifNoneMatch, '*');
    assert.equal(requests[1]?.contentType, 'application/octet-stream');
  });

  it('a snapshot of 6 MiB goes in one request (parts are 8 MiB unless asked otherwise)', async () => {
    const big = Buffer.alloc(6 * 1024 * 1024, 7);
    const result = await upload(big);
    assert.equal(result.kind === 'uploaded' && result.sizeBytes, big.length);
    assert.deepEqual(methods(), ['HEAD', 'PUT', 'HEAD']);
  });

  it('an endpoint the policy refuses (plain http, no allow-list): nothing sent, the source closed', async () => {
    const body = Readable.from([BYTES]);
    const result = await uploadStream(target(), credentials, body);
    assert.equal(result.kind, 'endpoint-refused', JSON.stringify(result));
    assert.equal(result.kind === 'endpoint-refused' && result.reason, 'EndpointInsecure');
    assert.match(result.kind === 'endpoint-refused' ? result.message : '', /uses plain http/);
    assert.deepEqual(requests, []);
    assert.equal(body.destroyed, true);
  });

  it('leaves no abort listener on the caller’s signal and no connection open', async () => {
    const signal = new AbortController().signal;
    const result = await uploadStream(target(), credentials, Readable.from([BYTES]), {
      allowList: ALLOW,
      signal,
    });
    assert.equal(result.kind, 'uploaded');
    assert.equal(getEventListeners(signal, 'abort').length, 0);
    const open = () => new Promise<number>(resolve => server.getConnections((_e, count) => resolve(count)));
    // The socket closes on its own turn of the event loop; a loaded machine may take seconds.
    for (const until = Date.now() + 10_000; (await open()) > 0 && Date.now() < until;)
      await new Promise(r => setTimeout(r, 20));
    assert.equal(await open(), 0);
  });

  it('another writer between the HEAD and the PUT: the store refuses the PUT and their object stays', async () => {
    const theirs = Buffer.from('their object');
    next.PUT = () => {
      objects.set(KEY, { body: theirs, etag: etagOf(theirs), owner: 'someone-else' });
      return false;
    };
    assert.deepEqual(await upload(), {
      kind: 'object-exists',
      message: `${URI} was created while this snapshot was uploading; it is left as it is (nothing is ever overwritten)`,
    });
    assert.deepEqual(objects.get(KEY)?.body, theirs);
  });

  it('an object someone else wrote (another owner, or none) is refused before anything is sent', async () => {
    for (const owner of ['someone-else', undefined]) {
      objects.set(KEY, { body: Buffer.from('x'), etag: '"x"', ...(owner && { owner }) });
      requests.length = 0;
      assert.deepEqual(await upload(), {
        kind: 'object-exists',
        message: `${URI} holds an object this EtcdSnapshot did not write; it is left as it is (nothing is ever overwritten)`,
      });
      assert.deepEqual(methods(), ['HEAD']);
      assert.deepEqual(objects.get(KEY)?.body, Buffer.from('x'));
    }
  });

  it('its own leftover (a crashed attempt) is deleted, only as the HEAD saw it, and written again', async () => {
    const old = Buffer.from('the crashed attempt');
    objects.set(KEY, { body: old, etag: etagOf(old), owner: UID });
    const result = await upload();
    assert.equal(result.kind, 'uploaded', JSON.stringify(result));
    assert.deepEqual(methods(), ['HEAD', 'DELETE', 'PUT', 'HEAD']);
    assert.equal(requests[1]?.ifMatch, etagOf(old));
    assert.deepEqual(objects.get(KEY)?.body, BYTES);
  });

  it('its own leftover replaced by someone between the HEAD and the delete: the delete fails, theirs stays', async () => {
    const old = Buffer.from('the crashed attempt');
    const theirs = Buffer.from('their object');
    objects.set(KEY, { body: old, etag: etagOf(old), owner: UID });
    next.DELETE = () => {
      objects.set(KEY, { body: theirs, etag: etagOf(theirs), owner: 'someone-else' });
      return false;
    };
    const result = await upload();
    assert.notEqual(result.kind, 'uploaded', JSON.stringify(result));
    assert.deepEqual(objects.get(KEY)?.body, theirs);
    assert.ok(!methods().includes('PUT'), methods().join());
  });

  it('a store that keeps fewer bytes than were sent: unavailable (retried), saying both sizes', async () => {
    keep = b => b.subarray(0, 5);
    assert.deepEqual(await upload(), {
      kind: 'unavailable',
      message: `${URI} holds 5 bytes after ${BYTES.length} were sent`,
    });
  });

  it('an object replaced by another writer right after the upload: object-exists, not uploaded', async () => {
    confirmHead = () => {
      const theirs = Buffer.from(BYTES);
      objects.set(KEY, { body: theirs, etag: etagOf(theirs), owner: 'someone-else' });
      return false;
    };
    assert.deepEqual(await upload(), {
      kind: 'object-exists',
      message: `${URI} was replaced by another writer during the upload; it is left as it is (nothing is ever overwritten)`,
    });
  });

  it('the check after the upload failing (the store failing twice): unavailable, not uploaded', async () => {
    confirmHead = res => {
      res.writeHead(500).end();
      return true;
    };
    const result = await upload();
    assert.equal(result.kind, 'unavailable', JSON.stringify(result));
  });

  it('a store whose check after the upload gives no length: uploaded (nothing says bytes were lost)', async () => {
    confirmHead = res => {
      const have = objects.get(KEY)!;
      res.writeHead(200, { etag: have.etag, [META]: UID }).end();
      return true;
    };
    assert.equal((await upload()).kind, 'uploaded');
  });

  it('gone right after the upload: unavailable (retried)', async () => {
    next.PUT = res => {
      res.writeHead(200, { etag: '"nothing"' }).end(); // says stored, keeps nothing
      return true;
    };
    assert.deepEqual(await upload(), {
      kind: 'unavailable',
      message: `${URI} is not there after the upload`,
    });
  });

  it('a store that reports no ETag on the HEAD: uploaded, with an empty ETag', async () => {
    confirmHead = res => {
      res.writeHead(200, { 'content-length': objects.get(KEY)!.body.length, [META]: UID }).end();
      return true;
    };
    const result = await upload();
    assert.equal(result.kind === 'uploaded' && result.etag, '');
  });

  const failures: [string, (res: ServerResponse) => void, UploadResult['kind'], string | undefined][] = [
    ['refused (403)', res => xmlError(res, 403, 'AccessDenied'), 'refused', 'AccessDenied'],
    ['no such bucket (404)', res => xmlError(res, 404, 'NoSuchBucket'), 'refused', 'NoSuchBucket'],
    ['throttled (429)', res => xmlError(res, 429, 'SlowDown'), 'unavailable', undefined],
    ['failing (500)', res => xmlError(res, 500, 'InternalError'), 'unavailable', undefined],
  ];
  for (const [name, answer, kind, code] of failures) {
    it(`a PUT ${name}: ${kind}`, async () => {
      // The SDK tries a failed request twice (maxAttempts 2): both answers fail.
      let left = 2;
      const fail = (res: ServerResponse) => {
        answer(res);
        if (--left > 0) next.PUT = fail;
        return true;
      };
      next.PUT = fail;
      const result = await upload();
      assert.equal(result.kind, kind, JSON.stringify(result));
      if (code) assert.equal(result.kind === 'refused' && result.code, code);
      assert.equal(objects.has(KEY), false);
    });
  }

  it('a store answering 412 with no error body: object-exists all the same', async () => {
    next.PUT = res => {
      res.writeHead(412).end();
      return true;
    };
    assert.equal((await upload()).kind, 'object-exists');
  });

  it('a refusal that echoes the keys: they are removed from the message', async () => {
    let left = 2;
    const fail = (res: ServerResponse) => {
      xmlError(res, 403, 'AccessDenied', 'AKIDUPLOAD with upload-secret may not write');
      if (--left > 0) next.PUT = fail;
      return true;
    };
    next.PUT = fail;
    const result = await upload();
    assert.equal(result.kind, 'refused', JSON.stringify(result));
    assert.equal(result.kind === 'refused' && result.message, '[redacted] with [redacted] may not write');
  });

  it('a HEAD refused before the upload: refused, nothing sent', async () => {
    next.HEAD = res => {
      res.writeHead(403).end();
      return true;
    };
    const result = await upload();
    assert.equal(result.kind, 'refused', JSON.stringify(result));
    assert.deepEqual(methods(), ['HEAD']);
  });

  it('a source that fails before its end: source-failed with its message, nothing stored', async () => {
    const body = new Readable({
      read() {
        this.destroy(new Error('etcd went away'));
      },
    });
    const result = await uploadStream(target(), credentials, body, { allowList: ALLOW });
    assert.deepEqual(result, { kind: 'source-failed', message: 'etcd went away' });
    assert.equal(objects.has(KEY), false);
  });

  it('an aborted upload says so, with the reason, whether aborted before or during', async () => {
    const early = new AbortController();
    early.abort(new Error('the snapshot was deleted'));
    const result = await uploadStream(target(), credentials, Readable.from([BYTES]), {
      allowList: ALLOW,
      signal: early.signal,
    });
    assert.deepEqual(result, {
      kind: 'aborted',
      message: `upload to ${URI} aborted: the snapshot was deleted`,
    });
    assert.equal(objects.has(KEY), false);
  });

  it('aborted while the store is receiving: aborted, with the reason given (a plain string too)', async () => {
    const controller = new AbortController();
    next.PUT = res => {
      controller.abort('the EtcdSnapshot was deleted');
      // A store that would have answered: only the abort stops the upload.
      setTimeout(() => {
        if (!res.writableEnded && !res.destroyed) res.writeHead(200, { etag: '"late"' }).end();
      }, 500);
      return true;
    };
    const result = await uploadStream(target(), credentials, Readable.from([BYTES]), {
      allowList: ALLOW,
      signal: controller.signal,
    });
    assert.deepEqual(result, {
      kind: 'aborted',
      message: `upload to ${URI} aborted: the EtcdSnapshot was deleted`,
    });
  });

  it('tells the caller once when the first bytes are on their way', async () => {
    let told = 0;
    const result = await uploadStream(target(), credentials, Readable.from([BYTES, BYTES]), {
      allowList: ALLOW,
      onStreaming: () => (told++, Promise.resolve()),
    });
    assert.equal(result.kind, 'uploaded');
    assert.equal(told, 1);
  });
});

describe('classifyS3Error: what is final and what is retried', () => {
  const rows: [number | undefined, UploadResult['kind']][] = [
    [399, 'unavailable'],
    [400, 'refused'],
    [403, 'refused'],
    [404, 'refused'],
    [408, 'unavailable'],
    [409, 'unavailable'],
    [429, 'unavailable'],
    [499, 'refused'],
    [500, 'unavailable'],
    [503, 'unavailable'],
    [undefined, 'unavailable'],
  ];
  for (const [status, kind] of rows) {
    it(`HTTP ${status ?? 'none'}: ${kind}`, () => {
      const err = {
        name: 'SomeCode',
        message: 'm',
        ...(status && { $metadata: { httpStatusCode: status } }),
      };
      assert.equal(classifyS3Error(err).kind, kind);
    });
  }
});
