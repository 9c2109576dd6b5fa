// Deleting a snapshot's object (shared/s3/delete.ts) against a scripted store on loopback: the
// answers s3rver cannot give on cue. The delete is conditional on the ETag the HEAD saw (If-Match),
// so an object replaced between the HEAD and the delete is kept (the store answers 412, as AWS S3
// does); an object that vanished meanwhile is gone already; a key allowed to be read but not deleted
// is a refusal a person must fix; a failing store is retried. Nothing is deleted that the HEAD did
// not show as this EtcdSnapshot's own. test/integration/s3-delete.test.ts has the same against s3rver.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { deleteOwnedObject, type DeleteObjectResult } from '../../shared/s3/delete.ts';
import { parseAllowList } from '../../shared/s3/endpoint-policy.ts';
import { OWNER_METADATA, type S3Target } from '../../shared/s3/location.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const ALLOW = parseAllowList('http://127.0.0.0/8').entries;
const UID = 'aaaabbbb-owner';
const ETAG = '"0123456789abcdef"';
const credentials = { accessKeyId: 'AKIDDELETE', secretAccessKey: 'delete-secret' };

type Answer = (res: ServerResponse) => void;
const owned =
  (etag = ETAG, owner = UID): Answer =>
  res => {
    res
      .writeHead(200, {
        'content-length': 5,
        ...(etag && { etag }),
        [`x-amz-meta-${OWNER_METADATA}`]: owner,
      })
      .end();
  };
const status =
  (code: number, xmlCode: string, message = `${xmlCode} here`): Answer =>
  res => {
    const xml = `<?xml version="1.0"?><Error><Code>${xmlCode}</Code><Message>${message}</Message></Error>`;
    res.writeHead(code, { 'content-type': 'application/xml' }).end(xml);
  };
const noContent: Answer = res => {
  res.writeHead(204).end();
};

describe('deleteOwnedObject against a scripted store', { timeout: 60_000 }, () => {
  let server: Server;
  let endpoint = '';
  let head: Answer = owned();
  let del: Answer = noContent;
  const seen: { method: string; path: string; ifMatch?: string }[] = [];

  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const ifMatch = req.headers['if-match'];
      seen.push({
        method: req.method ?? '',
        path: (req.url ?? '').split('?')[0] ?? '',
        ...(typeof ifMatch === 'string' && { ifMatch }),
      });
      req.resume();
      // HEAD answers carry no body (the status helper's XML is dropped by Node for HEAD).
      if (req.method === 'HEAD') head(res);
      else if (req.method === 'DELETE') del(res);
      else status(405, 'MethodNotAllowed')(res);
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
    key: 'prod/demo/snap-aaaabbbb.db',
    region: 'us-east-1',
    forcePathStyle: true,
    secretName: 'creds',
    uri: 's3://backups/prod/demo/snap-aaaabbbb.db',
    ownerUid: UID,
  });
  async function remove(
    headAnswer: Answer,
    deleteAnswer: Answer,
    recorded: { etag?: string } = { etag: ETAG },
  ): Promise<DeleteObjectResult> {
    head = headAnswer;
    del = deleteAnswer;
    seen.length = 0;
    return deleteOwnedObject(target(), credentials, recorded, ALLOW);
  }
  const deletes = () => seen.filter(s => s.method === 'DELETE');

  it('deletes its own object only if it is still the one the HEAD saw (If-Match: its ETag)', async () => {
    assert.deepEqual(await remove(owned(), noContent), { kind: 'deleted' });
    assert.deepEqual(deletes(), [
      { method: 'DELETE', path: '/backups/prod/demo/snap-aaaabbbb.db', ifMatch: ETAG },
    ]);
  });

  it('a store that reports no ETag: the owner decides, and the delete is unconditional', async () => {
    assert.deepEqual(await remove(owned(''), noContent, {}), { kind: 'deleted' });
    assert.deepEqual(deletes(), [{ method: 'DELETE', path: '/backups/prod/demo/snap-aaaabbbb.db' }]);
  });

  it('replaced between the HEAD and the delete (412): kept', async () => {
    assert.deepEqual(await remove(owned(), status(412, 'PreconditionFailed')), {
      kind: 'kept',
      message:
        's3://backups/prod/demo/snap-aaaabbbb.db changed while it was being deleted; it is left as it is',
    });
  });

  it('gone between the HEAD and the delete (404): gone', async () => {
    assert.deepEqual(await remove(owned(), status(404, 'NoSuchKey')), { kind: 'gone' });
  });

  it('keys that may read but not delete (403 on the delete): refused, with the code, no key in it', async () => {
    // Some stores echo the key id (and worse) in their message: the literal keys are removed.
    const echo = 'key AKIDDELETE with delete-secret may not delete';
    assert.deepEqual(await remove(owned(), status(403, 'AccessDenied', echo)), {
      kind: 'refused',
      code: 'AccessDenied',
      message: 'key [redacted] with [redacted] may not delete',
    });
  });

  it('a store failing the delete (503): unavailable, retried later', async () => {
    const result = await remove(owned(), status(503, 'SlowDown'));
    assert.equal(result.kind, 'unavailable', JSON.stringify(result));
    assert.match(result.kind === 'unavailable' ? result.message : '', /503/);
  });

  const headFailures: [string, Answer, DeleteObjectResult['kind'], string | undefined][] = [
    // A HEAD answer has no body, so the code is the status.
    ['the HEAD refused (403)', status(403, 'Forbidden'), 'refused', 'HTTP403'],
    ['the HEAD failing (500)', status(500, 'InternalError'), 'unavailable', undefined],
    ['nothing at the key (404)', status(404, 'NotFound'), 'gone', undefined],
  ];
  for (const [name, answer, kind, code] of headFailures) {
    it(`${name}: ${kind}, and no delete is sent`, async () => {
      const result = await remove(answer, noContent);
      assert.equal(result.kind, kind, JSON.stringify(result));
      // A refusal carries its code and message only (no HTTP status field).
      if (code) assert.deepEqual(Object.keys(result).sort(), ['code', 'kind', 'message']);
      if (code) assert.equal(result.kind === 'refused' && result.code, code);
      assert.deepEqual(deletes(), []);
    });
  }

  it('leaves no connection to the store open, whatever the answer', async () => {
    const open = () => new Promise<number>(resolve => server.getConnections((_e, count) => resolve(count)));
    for (const answer of [noContent, status(412, 'PreconditionFailed')]) {
      await remove(owned(), answer);
      for (let i = 0; i < 50 && (await open()) > 0; i++) await new Promise(r => setTimeout(r, 20));
      assert.equal(await open(), 0);
    }
  });

  it('another owner, or a changed ETag: kept, saying which, and no delete is sent', async () => {
    assert.deepEqual(await remove(owned(ETAG, 'someone-else'), noContent), {
      kind: 'kept',
      message:
        's3://backups/prod/demo/snap-aaaabbbb.db was not written by this EtcdSnapshot; it is left as it is',
    });
    assert.deepEqual(await remove(owned('"fedcba"'), noContent), {
      kind: 'kept',
      message:
        's3://backups/prod/demo/snap-aaaabbbb.db changed since this EtcdSnapshot wrote it (ETag "fedcba", recorded "0123456789abcdef"); it is left as it is',
    });
    assert.deepEqual(deletes(), []);
  });
});
