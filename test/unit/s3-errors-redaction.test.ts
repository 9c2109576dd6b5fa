// What an S3 failure may say in status and Events (shared/s3/errors.ts), one rule at a time: each row
// gives a message only that rule changes and the exact text that must come out, so a rule that
// stopped working (or started eating more) fails its own row. s3-errors-policy.test.ts has the
// mixed, realistic rows; this file pins the edges the mutation run found unpinned there.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_MESSAGE, reduceS3Error } from '../../shared/s3/errors.ts';

const err = (message: string, name = 'SomeCode', status?: number) =>
  Object.assign(new Error(message), {
    name,
    ...(status !== undefined && { $metadata: { httpStatusCode: status } }),
  });
const message = (text: string, secrets: string[] = []) => reduceS3Error(err(text), secrets).message;

describe('S3 error messages: each redaction on its own', () => {
  const rows: [string, string, string][] = [
    [
      'the SDK’s deserialization hint and all after it',
      'store said no Deserialization error: see the raw response {"x":1}',
      'store said no',
    ],
    ['a raw response quoted', 'could not parse. Raw response: {"k":"v"}', 'could not parse.'],
    ['a response body quoted', 'failed Response body : {"k":"v"}', 'failed'],
    ['request headers quoted', 'failed Request headers: host=x', 'failed'],
    ['a response quoted', 'failed Response: 200 OK', 'failed'],
    [
      'a Signature V4 authorization, up to the next separator',
      'sent AWS4-HMAC-SHA256 Credential=abc/20261129/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=ff00; then failed',
      'sent [redacted]; then failed',
    ],
    ['an X-Amz header value', 'with X-Amz-Date=20261129T000000Z set', 'with X-Amz-Date=[redacted] set'],
    [
      'a session token given with a colon',
      'x-amz-security-token: FQoGZXIvYXdzEJr token',
      'x-amz-security-token=[redacted] token',
    ],
    ['an AWSAccessKeyId field', 'AWSAccessKeyId=someid, rest', 'AWSAccessKeyId=[redacted], rest'],
    [
      'a signature written with spaces around the equals sign',
      'with Signature = ff00 set',
      'with Signature=[redacted] set',
    ],
    [
      'the query string of a plain http URL',
      'GET http://minio:9000/b/k?X-Amz-Signature=abc failed',
      'GET http://minio:9000/b/k failed',
    ],
    ['a temporary (ASIA) key id', 'key ASIAABCDEFGHIJKLMNOP expired', 'key [redacted] expired'],
    ['an XML body, whatever its case', 'unexpected <?XML version="1.0"?><a/>', 'unexpected'],
    ['an HTML page', 'bad gateway <html><body>502</body></html>', 'bad gateway'],
    ['only the first of CRLF lines', 'first line\r\nsecond line', 'first line'],
    ['only the first of LF lines', 'first line\nsecond line', 'first line'],
    ['an HTML page with spaces in it', 'bad gateway <html> <body>502</body> </html>', 'bad gateway'],
    ['runs of white space become one space', 'a \t  b', 'a b'],
  ];
  for (const [name, text, want] of rows) {
    it(name, () => {
      assert.equal(message(text), want);
    });
  }

  it('a message that is nothing but a quoted response leaves only the code', () => {
    assert.equal(message('Response: {"k":"v"}'), 'SomeCode');
  });

  it('literal secrets of four characters or more are removed; shorter ones would eat ordinary words', () => {
    assert.equal(message('user abcd denied', ['abcd']), 'user [redacted] denied');
    assert.equal(message('user abc denied', ['abc']), 'user abc denied');
  });

  it('a message of exactly the limit is kept; one longer is cut with an ellipsis to the limit', () => {
    assert.equal(message('x'.repeat(MAX_MESSAGE)), 'x'.repeat(MAX_MESSAGE));
    assert.equal(message('x'.repeat(MAX_MESSAGE + 1)), `${'x'.repeat(MAX_MESSAGE - 1)}…`);
  });
});

describe('S3 error codes and statuses', () => {
  it('a status outside 100–599 (or not a number) is no status', () => {
    for (const [status, want] of [
      [99, undefined],
      [100, 100],
      [599, 599],
      [600, undefined],
    ] as const) {
      assert.equal(reduceS3Error(err('m', 'Code', status)).status, want, String(status));
    }
    assert.equal(
      reduceS3Error(Object.assign(new Error('m'), { $metadata: { httpStatusCode: '404' } })).status,
      undefined,
    );
  });

  it('without a status the result has no status field at all', () => {
    assert.deepEqual(reduceS3Error(err('m', 'Code')), { code: 'Code', message: 'm' });
  });

  it('the SDK’s vague names for a bodiless answer give way to the status', () => {
    assert.equal(reduceS3Error(err('NotFound', 'NotFound', 404)).code, 'HTTP404');
    assert.equal(reduceS3Error(err('Forbidden', 'Forbidden', 403)).code, 'HTTP403');
    assert.equal(
      reduceS3Error(err('x', 'NotFound')).code,
      'NotFound',
      'with no status, the vague name is all there is',
    );
  });

  it('the words for a bodiless answer, by status', () => {
    const words: [number, string][] = [
      [400, 'the store refused the request as malformed'],
      [401, 'the store did not accept the credentials'],
      [404, 'not found'],
      [412, 'a precondition failed'],
    ];
    for (const [status, want] of words) {
      assert.equal(reduceS3Error(err('UnknownError', 'UnknownError', status)).message, want, String(status));
    }
  });

  it('a code must start with a letter', () => {
    assert.equal(reduceS3Error(err('m', '9Lives')).code, 'Error');
    assert.equal(reduceS3Error(err('m', '-Bad')).code, 'Error');
  });
});
