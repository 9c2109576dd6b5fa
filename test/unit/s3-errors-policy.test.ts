// The pure parts of the S3 adapter: what an SDK error may say in status (reduceS3Error), which
// endpoints may be contacted (checkEndpoint, parseAllowList), and etcd's integrity hash on a
// snapshot's bytes (SnapshotDigest).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  checkEndpoint,
  parseAllowList,
  parseRanges,
  type AllowedEndpoint,
} from '../../shared/s3/endpoint-policy.ts';
import { MAX_MESSAGE, reduceS3Error, s3ErrorText } from '../../shared/s3/errors.ts';
import { SnapshotDigest } from '../../shared/snapshot-file/verify.ts';

const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
const awsError = (name: string, message: string, status?: number, extra: object = {}) =>
  Object.assign(new Error(message), {
    name,
    ...(status && { $metadata: { httpStatusCode: status } }),
    ...extra,
  });

describe('reduceS3Error', () => {
  const rows: [string, unknown, { code: string; status?: number; message: RegExp }][] = [
    [
      'a store error keeps its code, status and message',
      awsError('NoSuchBucket', 'The specified bucket does not exist', 404),
      { code: 'NoSuchBucket', status: 404, message: /^The specified bucket does not exist$/ },
    ],
    [
      'Code beats name',
      Object.assign(awsError('S3ServiceException', 'denied', 403), { Code: 'AccessDenied' }),
      { code: 'AccessDenied', status: 403, message: /^denied$/ },
    ],
    [
      'a network error keeps its errno code',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }),
      { code: 'ECONNREFUSED', message: /connect ECONNREFUSED/ },
    ],
    [
      'UnknownError with a status becomes HTTP<status>, with words for the status',
      awsError('UnknownError', 'UnknownError', 403),
      { code: 'HTTP403', status: 403, message: /^access denied: wrong credentials/ },
    ],
    [
      'a bodiless HEAD answer (Unknown) likewise',
      Object.assign(awsError('Unknown', 'UnknownError', 403), { Code: 'Unknown' }),
      { code: 'HTTP403', status: 403, message: /^access denied/ },
    ],
    [
      'a deserialization failure loses the raw response',
      awsError(
        'Error',
        'Deserialization error: to see the raw response, inspect the hidden field {error}.$response on this object.',
        500,
      ),
      { code: 'HTTP500', status: 500, message: /^HTTP500$/ },
    ],
    [
      'signature pieces are redacted',
      awsError(
        'SignatureDoesNotMatch',
        `The request signature we calculated does not match. Authorization: AWS4-HMAC-SHA256 Credential=${KEY_ID}/20261125/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=abcdef0123456789`,
        403,
      ),
      {
        code: 'SignatureDoesNotMatch',
        status: 403,
        message: /^The request signature we calculated does not match\. Authorization=\[redacted\]/,
      },
    ],
    [
      'presigned URL query strings are cut',
      awsError(
        'Error',
        'GET https://b.s3.amazonaws.com/k?X-Amz-Signature=deadbeef&X-Amz-Credential=x failed',
      ),
      { code: 'Error', message: /^GET https:\/\/b\.s3\.amazonaws\.com\/k failed$/ },
    ],
    [
      'a secret access key and key id quoted in a message are redacted',
      awsError('InvalidAccessKeyId', `key ${KEY_ID} with ${SECRET} is unknown`, 403),
      { code: 'InvalidAccessKeyId', status: 403, message: /^key \[redacted\] with \[redacted\] is unknown$/ },
    ],
    [
      'only the first line',
      awsError('SlowDown', 'Please reduce your request rate.\nRequest headers: x-amz-date: ...', 503),
      { code: 'SlowDown', status: 503, message: /^Please reduce your request rate\.$/ },
    ],
    [
      'an XML body is dropped',
      awsError('Error', 'unexpected <?xml version="1.0"?><Error><Code>X</Code></Error>'),
      { code: 'Error', message: /^unexpected$/ },
    ],
    [
      'a code that is not a code is not used',
      Object.assign(new Error('odd'), { name: 'has spaces <script>' }),
      { code: 'Error', message: /^odd$/ },
    ],
    ['not an Error at all', 'plain string failure', { code: 'Error', message: /^plain string failure$/ }],
    ['nothing at all', undefined, { code: 'Error', message: /^Error$/ }],
  ];
  for (const [name, err, want] of rows) {
    it(name, () => {
      const got = reduceS3Error(err);
      assert.equal(got.code, want.code);
      assert.equal(got.status, want.status);
      assert.match(got.message, want.message);
    });
  }

  it('literal secrets passed in are removed wherever they appear', () => {
    const got = reduceS3Error(awsError('AccessDenied', 'user S3RVER-custom-key denied', 403), [
      'S3RVER-custom-key',
      'x',
    ]);
    assert.equal(got.message, 'user [redacted] denied');
  });

  it('messages are capped', () => {
    const got = reduceS3Error(awsError('Error', 'word '.repeat(200)));
    assert.ok(got.message.length <= MAX_MESSAGE, `${got.message.length}`);
  });

  it('s3ErrorText: code, status, message on one line', () => {
    assert.equal(
      s3ErrorText({ code: 'AccessDenied', status: 403, message: 'Access Denied' }),
      'AccessDenied (HTTP 403): Access Denied',
    );
    assert.equal(s3ErrorText({ code: 'ECONNREFUSED', message: 'ECONNREFUSED' }), 'ECONNREFUSED');
  });
});

describe('endpoint policy', () => {
  const sandbox = parseAllowList('http://127.0.0.0/8, http://[::1]/128').entries;
  const rows: [string, string, ReturnType<typeof parseAllowList>['entries'], string[], string | true][] = [
    ['https on a public name', 'https://s3.eu-west-1.amazonaws.com', [], ['52.95.1.1'], true],
    ['plain http, not allow-listed', 'http://minio.backup.svc:9000', [], ['10.0.0.5'], 'EndpointInsecure'],
    [
      'plain http, allow-listed by name',
      'http://minio.backup.svc:9000',
      parseAllowList('http://minio.backup.svc').entries,
      ['10.0.0.5'],
      true,
    ],
    [
      'allow-listed by name and port, other port',
      'http://minio.backup.svc:9001',
      parseAllowList('http://minio.backup.svc:9000').entries,
      ['10.0.0.5'],
      'EndpointInsecure',
    ],
    [
      'allow-listed for https only, used with http',
      'http://minio.backup.svc',
      parseAllowList('https://minio.backup.svc').entries,
      [],
      'EndpointInsecure',
    ],
    ['metadata service literal', 'http://169.254.169.254', sandbox, [], 'EndpointLinkLocal'],
    ['metadata service over https', 'https://169.254.169.254', [], [], 'EndpointLinkLocal'],
    [
      'link-local even when allow-listed',
      'http://169.254.169.254',
      parseAllowList('http://169.254.0.0/16').entries,
      [],
      'EndpointLinkLocal',
    ],
    ['IPv6 link-local', 'https://[fe80::1]:443', [], [], 'EndpointLinkLocal'],
    ['IPv4-mapped link-local', 'https://[::ffff:169.254.169.254]', [], [], 'EndpointLinkLocal'],
    ['hex-written link-local', 'https://0xa9fea9fe', [], [], 'EndpointLinkLocal'],
    [
      'a name resolving to link-local',
      'https://metadata.internal',
      [],
      ['169.254.169.254'],
      'EndpointLinkLocal',
    ],
    ['loopback over https, not allow-listed', 'https://127.0.0.1:9000', [], [], 'EndpointLoopback'],
    [
      'localhost over https, not allow-listed',
      'https://localhost:9000',
      [],
      ['127.0.0.1'],
      'EndpointLoopback',
    ],
    ['a name resolving to loopback', 'https://sneaky.example', [], ['127.0.0.2'], 'EndpointLoopback'],
    ['loopback http, sandbox allow-list', 'http://127.0.0.1:41234', sandbox, [], true],
    ['IPv6 loopback http, sandbox allow-list', 'http://[::1]:41234', sandbox, [], true],
    [
      'loopback https with an http-only allow-list',
      'https://127.0.0.1:9000',
      sandbox,
      [],
      'EndpointLoopback',
    ],
    [
      'a range entry needs every resolved address inside it',
      'http://mixed.example',
      sandbox,
      ['127.0.0.1', '10.0.0.1'],
      'EndpointInsecure',
    ],
    // Issue 29 (security 2): metadata and wildcard addresses that were allowed, and IPv6 forms
    // that carry a refused IPv4 address. Refused whatever the allow-list says.
    ['AWS IPv6 metadata', 'https://[fd00:ec2::254]', [], [], 'EndpointMetadata'],
    [
      'AWS IPv6 metadata, allow-listed',
      'http://[fd00:ec2::254]',
      parseAllowList('http://[fd00::]/8').entries,
      [],
      'EndpointMetadata',
    ],
    ['Alibaba metadata', 'https://100.100.100.200', [], [], 'EndpointMetadata'],
    ['Azure WireServer', 'https://168.63.129.16', [], [], 'EndpointMetadata'],
    [
      'a name resolving to Azure WireServer',
      'https://wire.example',
      [],
      ['168.63.129.16'],
      'EndpointMetadata',
    ],
    ['0.0.0.0', 'https://0.0.0.0:9000', [], [], 'EndpointUnspecified'],
    ['0.0.0.0/8', 'https://0.1.2.3', [], [], 'EndpointUnspecified'],
    ['"0" as a host (0.0.0.0)', 'https://0:9000', [], [], 'EndpointUnspecified'],
    [
      '0.0.0.0 allow-listed',
      'http://0.0.0.0',
      parseAllowList('http://0.0.0.0').entries,
      [],
      'EndpointUnspecified',
    ],
    ['IPv6 unspecified', 'https://[::]:9000', [], [], 'EndpointUnspecified'],
    ['a name resolving to ::', 'https://wild.example', [], ['::'], 'EndpointUnspecified'],
    ['IPv4-compatible metadata', 'https://[::169.254.169.254]', [], [], 'EndpointLinkLocal'],
    ['IPv4-compatible metadata, hex', 'https://[::a9fe:a9fe]', [], [], 'EndpointLinkLocal'],
    ['NAT64 metadata', 'https://[64:ff9b::a9fe:a9fe]', [], [], 'EndpointLinkLocal'],
    ['NAT64 metadata, dotted', 'https://[64:ff9b::169.254.169.254]', [], [], 'EndpointLinkLocal'],
    ['local-use NAT64 metadata', 'https://[64:ff9b:1::a9fe:a9fe]', [], [], 'EndpointLinkLocal'],
    ['NAT64 Alibaba metadata', 'https://[64:ff9b::6464:64c8]', [], [], 'EndpointMetadata'],
    ['IPv4-mapped Azure WireServer', 'https://[::ffff:168.63.129.16]', [], [], 'EndpointMetadata'],
    ['IPv4-compatible loopback', 'https://[::127.0.0.1]', [], [], 'EndpointLoopback'],
    ['NAT64 loopback', 'https://[64:ff9b::7f00:1]', [], [], 'EndpointLoopback'],
    ['IPv4-compatible 0.0.0.5', 'https://[::0.0.0.5]', [], [], 'EndpointUnspecified'],
    [
      'a name resolving to NAT64 metadata',
      'https://n.example',
      [],
      ['64:ff9b::a9fe:a9fe'],
      'EndpointLinkLocal',
    ],
    ['an ordinary IPv6 store', 'https://[2001:db8::5]', [], [], true],
    ['an ordinary NAT64 store', 'https://[64:ff9b::c633:6405]', [], [], true],
    ['not a URL', 'minio:9000', [], [], 'EndpointInvalid'],
    ['ftp', 'ftp://files.example', [], [], 'EndpointInvalid'],
  ];
  for (const [name, endpoint, allow, addresses, want] of rows) {
    it(`${name}: ${endpoint} → ${want === true ? 'allowed' : want}`, () => {
      const verdict = checkEndpoint(endpoint, allow, addresses);
      if (want === true) assert.equal(verdict.allowed, true, JSON.stringify(verdict));
      else {
        assert.equal(verdict.allowed, false);
        if (!verdict.allowed) {
          assert.equal(verdict.reason, want);
          assert.ok(verdict.message.length > 20, verdict.message);
        }
      }
    });
  }

  it('refusals say what to do', () => {
    const insecure = checkEndpoint('http://minio:9000', [], []);
    assert.ok(!insecure.allowed && /use https:\/\/.*ETCDFN_S3_ALLOWED_ENDPOINTS/.test(insecure.message));
    const metadata = checkEndpoint('http://169.254.169.254', [], []);
    assert.ok(!metadata.allowed && /link-local address, which is never contacted/.test(metadata.message));
  });

  describe("the cluster's own ranges (ETCDFN_S3_DENIED_RANGES)", () => {
    const { ranges, errors } = parseRanges('10.96.0.0/12, 10.244.0.0/16  fd00:10::/64 10.0.0.0/40 nope');
    it('parses CIDRs and names the bad ones', () => {
      assert.deepEqual(ranges, [
        { address: '10.96.0.0', prefixLength: 12 },
        { address: '10.244.0.0', prefixLength: 16 },
        { address: 'fd00:10::', prefixLength: 64 },
      ]);
      assert.equal(errors.length, 2, errors.join('; '));
      assert.deepEqual(parseRanges(undefined), { ranges: [], errors: [] });
    });
    const minio = parseAllowList('https://minio.backup.svc:9000').entries;
    const rangeRows: [string, string, AllowedEndpoint[], string[], true | string][] = [
      ['a Service IP', 'https://10.96.0.10', [], [], 'EndpointClusterInternal'],
      [
        'a name resolving to a Pod IP',
        'https://minio.backup.svc:9000',
        [],
        ['10.244.3.7'],
        'EndpointClusterInternal',
      ],
      ['an IPv6 Pod address', 'https://[fd00:10::5]', [], [], 'EndpointClusterInternal'],
      [
        'one of several addresses inside',
        'https://store.example',
        [],
        ['203.0.113.5', '10.100.0.1'],
        'EndpointClusterInternal',
      ],
      ['outside every range', 'https://s3.example', [], ['203.0.113.5'], true],
      [
        'the in-cluster store the administrator allow-listed',
        'https://minio.backup.svc:9000',
        minio,
        ['10.244.3.7'],
        true,
      ],
    ];
    for (const [name, endpoint, allow, addresses, want] of rangeRows) {
      it(`${name}: ${endpoint} → ${want === true ? 'allowed' : want}`, () => {
        const verdict = checkEndpoint(endpoint, allow, addresses, ranges);
        if (want === true) assert.equal(verdict.allowed, true, JSON.stringify(verdict));
        else {
          assert.ok(!verdict.allowed && verdict.reason === want, JSON.stringify(verdict));
          assert.match(
            verdict.message,
            /inside the cluster's own address range .* ETCDFN_S3_ALLOWED_ENDPOINTS/,
          );
        }
      });
    }
    it('without ranges configured nothing changes', () => {
      assert.equal(checkEndpoint('https://10.96.0.10', [], []).allowed, true);
    });
  });

  it('parseAllowList: entries, ranges, and errors for bad ones', () => {
    const { entries, errors } = parseAllowList(
      ' http://127.0.0.0/8,https://minio:9000  http://[::1]/128 ftp://x http://10.0.0.0/40 nope',
    );
    assert.deepEqual(entries, [
      { protocol: 'http:', host: '127.0.0.0', prefixLength: 8 },
      { protocol: 'https:', host: 'minio', port: '9000' },
      { protocol: 'http:', host: '::1', prefixLength: 128 },
    ]);
    assert.equal(errors.length, 3, errors.join('; '));
    assert.deepEqual(parseAllowList(undefined), { entries: [], errors: [] });
  });
});

describe('SnapshotDigest: etcd integrity hash', () => {
  /** A fake snapshot: `sectors` × 512 bytes of data, then the SHA-256 of the data. */
  const snapshotBytes = (sectors: number) => {
    const data = Buffer.alloc(sectors * 512);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
    return Buffer.concat([data, createHash('sha256').update(data).digest()]);
  };
  const digestIn = (bytes: Buffer, chunk: number) => {
    const d = new SnapshotDigest();
    for (let i = 0; i < bytes.length; i += chunk) d.update(bytes.subarray(i, i + chunk));
    return d.digest();
  };

  for (const chunk of [1, 7, 31, 32, 33, 512, 4096, 100_000]) {
    it(`a good snapshot in ${chunk}-byte chunks: ok, with size and sha256 of every byte`, () => {
      const bytes = snapshotBytes(9);
      const got = digestIn(bytes, chunk);
      assert.equal(got.integrity, 'ok');
      assert.equal(got.sizeBytes, bytes.length);
      assert.equal(got.sha256, createHash('sha256').update(bytes).digest('hex'));
    });
  }

  it('one flipped byte in the data: mismatch', () => {
    const bytes = snapshotBytes(4);
    bytes[700] ^= 1;
    assert.equal(digestIn(bytes, 100).integrity, 'mismatch');
  });

  it('one flipped byte in the trailer: mismatch', () => {
    const bytes = snapshotBytes(4);
    bytes[bytes.length - 1] ^= 1;
    assert.equal(digestIn(bytes, 100).integrity, 'mismatch');
  });

  it('truncated (not 512n + 32 bytes): absent', () => {
    const bytes = snapshotBytes(4).subarray(0, 4 * 512 + 31);
    assert.equal(digestIn(bytes, 100).integrity, 'absent');
    assert.equal(digestIn(Buffer.alloc(0), 1).integrity, 'absent');
    assert.equal(digestIn(Buffer.alloc(32), 1).integrity, 'absent');
  });
});
