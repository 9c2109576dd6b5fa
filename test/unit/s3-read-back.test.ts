// Reading a stored snapshot back before it may be called Complete (shared/s3/verify.ts's readBack)
// against a scripted store on loopback: the read is conditional on the ETag the upload stored
// (If-Match), and an object replaced or gone since is `changed`, whether the store honours If-Match
// (412), ignores it (another ETag comes back) or lost the object (404); refusals and failures keep
// their kind. The size, SHA-256 and etcd's integrity hash come from the bytes the store returns.
// test/integration/s3-snapshot.test.ts does the same with a real etcd snapshot through s3rver.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parseAllowList } from '../../shared/s3/endpoint-policy.ts';
import type { S3Target } from '../../shared/s3/location.ts';
import { readBack } from '../../shared/s3/verify.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const ALLOW = parseAllowList('http://127.0.0.0/8').entries;
const URI = 's3://backups/etcd/snap.db';
const credentials = { accessKeyId: 'AKIDREADBACK', secretAccessKey: 'read-back-secret' };
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** 512-byte pages and the SHA-256 of them, as etcd's snapshot save writes. */
const pages = Buffer.alloc(8 * 512, 0x11);
const SNAPSHOT = Buffer.concat([pages, createHash('sha256').update(pages).digest()]);
const STORED_ETAG = '"stored-etag"';

type Answer = (req: IncomingMessage, res: ServerResponse) => void;
const xmlError =
  (code: number, xmlCode: string, message = `${xmlCode} here`): Answer =>
  (_req, res) => {
    const xml = `<?xml version="1.0"?><Error><Code>${xmlCode}</Code><Message>${message}</Message></Error>`;
    res
      .writeHead(code, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) })
      .end(xml);
  };
/** A store holding `body` under `etag`, honouring If-Match unless told to ignore it. */
const holding =
  (body: Buffer, etag = STORED_ETAG, honourIfMatch = true): Answer =>
  (req, res) => {
    const ifMatch = req.headers['if-match'];
    if (honourIfMatch && ifMatch !== undefined && ifMatch !== etag)
      return xmlError(412, 'PreconditionFailed')(req, res);
    res.writeHead(200, { 'content-length': body.length, etag }).end(body);
  };

describe('readBack against a scripted store', { timeout: 60_000 }, () => {
  let server: Server;
  let endpoint = '';
  let answer: Answer = holding(SNAPSHOT);
  const seen: { method: string; ifMatch?: string }[] = [];

  before(async () => {
    server = createServer((req, res) => {
      const ifMatch = req.headers['if-match'];
      seen.push({ method: req.method ?? '', ...(typeof ifMatch === 'string' && { ifMatch }) });
      req.resume();
      answer(req, res);
    });
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise(resolve => server.close(resolve));
  });

  const target = (): S3Target => ({
    endpoint,
    bucket: 'backups',
    key: 'etcd/snap.db',
    region: 'us-east-1',
    forcePathStyle: true,
    secretName: 'creds',
    uri: URI,
    ownerUid: 'owner',
  });
  const read = (with_: Answer, etag = STORED_ETAG, allowList = ALLOW) => {
    answer = with_;
    seen.length = 0;
    return readBack(target(), credentials, etag, { allowList });
  };

  it('reads the object as stored (If-Match: its ETag) and digests the bytes the store returned', async () => {
    const got = await read(holding(SNAPSHOT));
    assert.equal(got.kind, 'read', JSON.stringify(got));
    if (got.kind !== 'read') return;
    assert.deepEqual(
      { etag: got.etag, sizeBytes: got.sizeBytes, sha256: got.sha256, integrity: got.integrity },
      { etag: STORED_ETAG, sizeBytes: SNAPSHOT.length, sha256: sha256(SNAPSHOT), integrity: 'ok' },
    );
    assert.deepEqual(seen, [{ method: 'GET', ifMatch: STORED_ETAG }]);
  });

  it('damaged bytes under the same ETag: read, and etcd’s integrity hash says mismatch', async () => {
    const damaged = Buffer.from(SNAPSHOT);
    damaged[100] ^= 0xff;
    const got = await read(holding(damaged));
    assert.equal(got.kind === 'read' && got.integrity, 'mismatch');
    assert.equal(got.kind === 'read' && got.sha256, sha256(damaged));
  });

  it('no ETag recorded: an unconditional read', async () => {
    const got = await read(holding(SNAPSHOT), '');
    assert.equal(got.kind, 'read');
    assert.deepEqual(seen, [{ method: 'GET' }]);
  });

  it('replaced since the upload, on a store that honours If-Match (412): changed', async () => {
    assert.deepEqual(await read(holding(SNAPSHOT, '"another"')), {
      kind: 'changed',
      message: `${URI} is gone or was replaced after the upload (PreconditionFailed)`,
    });
  });

  it('replaced since the upload, on a store that ignores If-Match (another ETag back): changed', async () => {
    assert.deepEqual(await read(holding(SNAPSHOT, '"another"', false)), {
      kind: 'changed',
      message: `${URI} was replaced after the upload (ETag "another", not ${STORED_ETAG})`,
    });
  });

  it('a store that sends no ETag back: read (nothing says it changed)', async () => {
    const got = await read((_req, res) => {
      res.writeHead(200, { 'content-length': SNAPSHOT.length }).end(SNAPSHOT);
    });
    assert.equal(got.kind, 'read', JSON.stringify(got));
    assert.equal(got.kind === 'read' && 'etag' in got, false);
  });

  it('gone (404): changed', async () => {
    assert.deepEqual(await read(xmlError(404, 'NoSuchKey')), {
      kind: 'changed',
      message: `${URI} is gone or was replaced after the upload (NoSuchKey)`,
    });
  });

  it('refused (403): refused, the keys redacted even when the store echoes them', async () => {
    const got = await read(xmlError(403, 'AccessDenied', 'AKIDREADBACK with read-back-secret may not read'));
    assert.equal(got.kind, 'refused', JSON.stringify(got));
    assert.equal(got.kind === 'refused' && got.code, 'AccessDenied');
    assert.equal(got.kind === 'refused' && got.message, '[redacted] with [redacted] may not read');
  });

  it('failing (500 twice): unavailable, retried later', async () => {
    assert.equal((await read(xmlError(500, 'InternalError'))).kind, 'unavailable');
  });

  it('the endpoint policy first: without an allow-list, plain http on loopback is refused, nothing read', async () => {
    const got = await read(holding(SNAPSHOT), STORED_ETAG, []);
    assert.equal(got.kind, 'endpoint-refused', JSON.stringify(got));
    assert.equal(got.kind === 'endpoint-refused' && got.reason, 'EndpointInsecure');
    assert.deepEqual(seen, []);
  });

  it('a read its caller cancels (the EtcdSnapshot deleted) stops, and is not a read', async () => {
    answer = holding(SNAPSHOT);
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    const got = await readBack(target(), credentials, STORED_ETAG, {
      allowList: ALLOW,
      signal: controller.signal,
    });
    assert.notEqual(got.kind, 'read', JSON.stringify(got));
  });

  it('leaves no connection open', async () => {
    await read(holding(SNAPSHOT));
    const open = () => new Promise<number>(resolve => server.getConnections((_e, count) => resolve(count)));
    for (let i = 0; i < 50 && (await open()) > 0; i++) await new Promise(r => setTimeout(r, 20));
    assert.equal(await open(), 0);
  });
});
