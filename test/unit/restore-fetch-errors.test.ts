// The restore's S3 errors go into a termination message and from there into the cluster's Restored
// condition: they are reduced the way upload, verify and delete reduce theirs (shared/s3/errors.ts),
// so no signature, key, query string or raw response reaches status.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { s3Failure, sourceErrorText, type FetchSource } from '../../shared/restore/fetch.ts';

const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
const source: Extract<FetchSource, { kind: 's3' }> = {
  kind: 's3',
  endpoint: 'https://s3.example.com',
  bucket: 'backups',
  key: 'etcd/snap.db',
  credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET },
  secretName: 's3-creds',
};
const leaky = Object.assign(
  new Error(
    `socket hang up talking to https://s3.example.com/backups/etcd/snap.db?X-Amz-Signature=abcdef0123&X-Amz-Credential=${KEY_ID}%2F20261129 ` +
      `Authorization: AWS4-HMAC-SHA256 Credential=${KEY_ID}/20261129/us-east-1/s3/aws4_request, Signature=deadbeef secret=${SECRET}\n` +
      'Raw response: <?xml version="1.0"?><Error><Code>InternalError</Code></Error>',
  ),
  { name: 'InternalError', $metadata: { httpStatusCode: 500 } },
);

function assertClean(text: string): void {
  for (const bad of [SECRET, KEY_ID, 'X-Amz-Signature=abc', 'deadbeef', '<?xml', 'Raw response', '\n']) {
    assert.ok(!text.includes(bad), `${JSON.stringify(bad)} in: ${text}`);
  }
}

describe('restore-fetch: S3 error text is reduced before it reaches status', () => {
  it('a store that fails the read: StoreUnreachable with code and status, nothing secret', () => {
    const failure = s3Failure(leaky, 's3://backups/etcd/snap.db', source);
    assert.equal(failure.reason, 'StoreUnreachable');
    assert.match(
      failure.message,
      /^cannot read s3:\/\/backups\/etcd\/snap\.db from https:\/\/s3\.example\.com: InternalError \(HTTP 500\): /,
    );
    assertClean(failure.message);
  });

  it('a stream that breaks off mid-way: the same reduction', () => {
    const text = sourceErrorText(leaky, source);
    assert.match(text, /^InternalError \(HTTP 500\): socket hang up/);
    assertClean(text);
  });

  it('a file source keeps its local message (no store, nothing to redact)', () => {
    const err = new Error('EIO: i/o error, read');
    assert.equal(
      sourceErrorText(err, { kind: 'file', mount: '/m', path: '/m/x', display: 'pvc://c/x' }),
      err.message,
    );
  });
});
