// The S3 endpoint policy (shared/s3/endpoint-policy.ts) at the edges its mutation run found
// unpinned: settings that are almost ranges, the exact verdicts and words (with and without a DNS
// answer), IPv6 forms that carry an IPv4 address (IPv4-compatible, NAT64 with a dotted quad) and
// near-misses that do not, allow-list entries by port, by host and by range when the addresses are
// unknown. s3-errors-policy.test.ts has the main table; s3-endpoint-callers.test.ts the callers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkEndpoint, parseAllowList, parseRanges } from '../../shared/s3/endpoint-policy.ts';

const RANGE_WORDS = (text: string) => `${text}: a range is <address>/<prefix length>, e.g. 10.96.0.0/12`;
const ALLOW_RANGE_WORDS = (text: string) =>
  `${text}: a range is <address>/<prefix length>, e.g. http://127.0.0.0/8`;

describe('settings that are almost ranges are refused, with what a range looks like', () => {
  it('denied ranges', () => {
    for (const bad of ['10.0.0.0/x8', '10.0.0.0/8x', 'example.com/8', '10.0.0.0/33', '::1/129']) {
      assert.deepEqual(parseRanges(bad), { ranges: [], errors: [RANGE_WORDS(bad)] }, bad);
    }
    assert.deepEqual(parseRanges('10.0.0.0/32 ::1/128').ranges, [
      { address: '10.0.0.0', prefixLength: 32 },
      { address: '::1', prefixLength: 128 },
    ]);
  });

  it('allow-list entries', () => {
    for (const bad of [
      'http://10.0.0.0/x8',
      'http://10.0.0.0/8x',
      'http://example.com/8',
      'http://10.0.0.0/33',
    ]) {
      assert.deepEqual(parseAllowList(bad), { entries: [], errors: [ALLOW_RANGE_WORDS(bad)] }, bad);
    }
    assert.deepEqual(parseAllowList('nope'), { entries: [], errors: ['nope: not a URL'] });
    assert.deepEqual(parseAllowList('ftp://x'), {
      entries: [],
      errors: ['ftp://x: only http:// and https:// endpoints'],
    });
  });
});

describe('verdicts, exactly', () => {
  it('not a URL', () => {
    assert.deepEqual(checkEndpoint('not a url', []), {
      allowed: false,
      reason: 'EndpointInvalid',
      message: 'destination.s3.endpoint not a url is not a URL',
    });
  });

  it('plain http by name, no DNS answer: refused, the words naming only the endpoint', () => {
    assert.deepEqual(checkEndpoint('http://minio.local:9000', []), {
      allowed: false,
      reason: 'EndpointInsecure',
      message:
        "destination.s3.endpoint http://minio.local:9000 uses plain http, which would send the snapshot and the request signatures unencrypted; use https://, or have the operator's administrator allow-list it in ETCDFN_S3_ALLOWED_ENDPOINTS",
    });
  });

  it('a name that resolves to a link-local address: refused, saying what it resolves to', () => {
    assert.deepEqual(checkEndpoint('https://s3.example.com', [], ['169.254.169.254']), {
      allowed: false,
      reason: 'EndpointLinkLocal',
      message:
        'destination.s3.endpoint https://s3.example.com (s3.example.com resolves to 169.254.169.254) is a link-local address, which is never contacted (cloud metadata services live there); point it at your object store',
    });
  });

  it('an address written as the endpoint: refused, without a “resolves to”', () => {
    assert.deepEqual(checkEndpoint('https://169.254.169.254', [], ['169.254.169.254']), {
      allowed: false,
      reason: 'EndpointLinkLocal',
      message:
        'destination.s3.endpoint https://169.254.169.254 is a link-local address, which is never contacted (cloud metadata services live there); point it at your object store',
    });
  });

  it('https://localhost with no DNS answer is loopback', () => {
    const got = checkEndpoint('https://localhost', []);
    assert.equal(got.allowed === false && got.reason, 'EndpointLoopback');
  });

  it('an ordinary https store: allowed, not by the allow-list; an allow-listed one says so', () => {
    assert.deepEqual(checkEndpoint('https://s3.example.com', [], ['203.0.113.7']), {
      allowed: true,
      allowListed: false,
    });
    const allow = parseAllowList('http://minio.local:9000').entries;
    assert.deepEqual(checkEndpoint('http://minio.local:9000', allow, ['203.0.113.7']), {
      allowed: true,
      allowListed: true,
    });
  });
});

describe('IPv6 forms of an IPv4 address', () => {
  const reason = (endpoint: string, addresses: string[] = []) => {
    const got = checkEndpoint(endpoint, [], addresses);
    return got.allowed ? 'allowed' : got.reason;
  };

  it('forms that reach the metadata service are link-local', () => {
    assert.equal(reason('https://[::a9fe:a9fe]'), 'EndpointLinkLocal', 'IPv4-compatible');
    assert.equal(reason('https://[64:ff9b::a9fe:a9fe]'), 'EndpointLinkLocal', 'NAT64');
    assert.equal(reason('https://[64:ff9b:1::a9fe:a9fe]'), 'EndpointLinkLocal', 'local-use NAT64');
    // A DNS answer may write the IPv4 part as a dotted quad.
    assert.equal(reason('https://s3.example.com', ['64:ff9b::169.254.169.254']), 'EndpointLinkLocal');
    assert.equal(reason('https://s3.example.com', ['::169.254.169.254']), 'EndpointLinkLocal');
    assert.equal(reason('https://s3.example.com', ['fe80::1%eth0']), 'EndpointLinkLocal');
  });

  it('near-misses carry no IPv4 address: allowed', () => {
    for (const address of [
      '64::a9fe:a9fe',
      '64:ffff::a9fe:a9fe',
      '64:ff9b:2::a9fe:a9fe',
      '2001:db8::a9fe:a9fe',
    ]) {
      assert.equal(reason(`https://[${address}]`), 'allowed', address);
    }
  });

  it('a dotted quad is read whole (not from its last digit)', () => {
    assert.equal(reason('https://s3.example.com', ['64:ff9b::100.100.100.200']), 'EndpointMetadata');
  });
});

describe('allow-list entries', () => {
  const verdict = (allow: string, endpoint: string, addresses: string[] = []) => {
    const got = checkEndpoint(endpoint, parseAllowList(allow).entries, addresses);
    return got.allowed ? (got.allowListed ? 'allow-listed' : 'allowed') : got.reason;
  };

  it('a port given must be the endpoint’s, its scheme’s default when it names none', () => {
    assert.equal(
      verdict('https://store.internal:443', 'https://store.internal', ['127.0.0.5']),
      'allow-listed',
    );
    assert.equal(verdict('http://store.internal:80', 'http://store.internal', ['10.1.2.3']), 'allow-listed');
    assert.equal(
      verdict('http://store.internal:9000', 'http://store.internal', ['10.1.2.3']),
      'EndpointInsecure',
    );
  });

  it('another host is not admitted', () => {
    assert.equal(verdict('http://minio-a:9000', 'http://minio-b:9000', ['10.1.2.3']), 'EndpointInsecure');
  });

  it('a range admits only addresses known to be in it: none known, not admitted', () => {
    assert.equal(verdict('http://127.0.0.0/8', 'http://unresolved.example:9000', []), 'EndpointInsecure');
    assert.equal(verdict('http://127.0.0.0/8', 'http://store.local:9000', ['127.0.0.9']), 'allow-listed');
    assert.equal(verdict('http://[::1]/128', 'http://store.local:9000', ['::1']), 'allow-listed');
  });
});
