// The one way etcdfn makes an S3 client (shared/s3/client.ts), with a scripted DNS: a name is resolved
// before the verdict status shows and again by every connection the client opens, and an answer the
// endpoint policy refuses (loopback, a metadata address) is never connected to, while the endpoint as
// written was allowed. Also the client's settings a store sees (keep-alive, no checksums unless S3
// requires them) and how the SDK's exports are found in either module form.
import assert from 'node:assert/strict';
import dns, { type LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  commonJsExports,
  createS3Client,
  EndpointRefusedError,
  endpointVerdict,
  loadS3Sdk,
  loadS3Upload,
} from '../../shared/s3/client.ts';
import { parseAllowList } from '../../shared/s3/endpoint-policy.ts';
import type { S3Target } from '../../shared/s3/location.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** The scripted names; any other name is looked up as before. */
const NAMES = new Map<string, string[] | 'fail'>();
const asked: string[] = [];
const realLookup = dns.lookup;
before(() => {
  const scripted = (hostname: string, options: unknown, callback: unknown): void => {
    const answer = NAMES.get(hostname);
    if (answer === undefined) {
      (realLookup as (h: string, o: unknown, c: unknown) => void)(hostname, options, callback);
      return;
    }
    asked.push(hostname);
    const all = (options as dns.LookupOptions).all === true;
    const found: LookupAddress[] =
      answer === 'fail' ? [] : answer.map(address => ({ address, family: address.includes(':') ? 6 : 4 }));
    process.nextTick(() => {
      const cb = callback as (err: NodeJS.ErrnoException | null, a: unknown, f?: number) => void;
      if (answer === 'fail')
        cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
      else if (all) cb(null, found);
      else cb(null, found[0]?.address, found[0]?.family);
    });
  };
  dns.lookup = scripted as typeof dns.lookup;
  syncBuiltinESMExports();
});
after(() => {
  dns.lookup = realLookup;
  syncBuiltinESMExports();
});

const credentials = { accessKeyId: 'AKIDCLIENT', secretAccessKey: 'client-secret' };
const target = (endpoint: string): S3Target => ({
  endpoint,
  bucket: 'b',
  key: 'k',
  region: 'us-east-1',
  forcePathStyle: true,
  secretName: 's3',
  uri: 's3://b/k',
  ownerUid: '',
});

describe('endpointVerdict: the endpoint as written, then every address its name resolves to', () => {
  it('an endpoint refused as written is refused without a lookup', async () => {
    NAMES.set('169.254.169.254', ['203.0.113.5']);
    asked.length = 0;
    const verdict = await endpointVerdict('http://169.254.169.254', []);
    assert.ok(!verdict.allowed && verdict.reason === 'EndpointLinkLocal', JSON.stringify(verdict));
    assert.deepEqual(asked, []);
  });

  it('a name resolving to a refused address is refused; to a public one, allowed', async () => {
    NAMES.set('meta.example', ['169.254.169.254']);
    NAMES.set('loop.example', ['203.0.113.5', '127.0.0.1']);
    NAMES.set('store.example', ['203.0.113.5']);
    const meta = await endpointVerdict('https://meta.example', []);
    assert.ok(!meta.allowed && meta.reason === 'EndpointLinkLocal', JSON.stringify(meta));
    const loop = await endpointVerdict('https://loop.example', []);
    assert.ok(!loop.allowed && loop.reason === 'EndpointLoopback', JSON.stringify(loop));
    assert.equal((await endpointVerdict('https://store.example', [])).allowed, true);
  });

  it('a name that does not resolve: the endpoint as written decides (the connection fails later)', async () => {
    NAMES.set('gone.example', 'fail');
    assert.equal((await endpointVerdict('https://gone.example', [])).allowed, true);
  });

  it('an IPv6 endpoint is looked up as its address, without the brackets', async () => {
    NAMES.set('2001:db8::5', ['2001:db8::5']);
    asked.length = 0;
    assert.equal((await endpointVerdict('https://[2001:db8::5]:9000', [])).allowed, true);
    assert.deepEqual(asked, ['2001:db8::5']);
  });
});

describe("the client's connections resolve through the policy", () => {
  let tcp: net.Server;
  let port = 0;
  let connections = 0;
  before(async () => {
    tcp = net.createServer(socket => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>(resolve => tcp.listen(0, '127.0.0.1', resolve));
    port = (tcp.address() as AddressInfo).port;
  });
  after(async () => new Promise(resolve => tcp.close(resolve)));

  // http needs the name allow-listed, which admits loopback but never the wildcard address (which
  // Linux connects to as the local host).
  const rows = [
    ['https', '127.0.0.1', 'EndpointLoopback'],
    ['http', '0.0.0.0', 'EndpointUnspecified'],
  ] as const;
  for (const [scheme, address, code] of rows) {
    it(`${scheme}: a name allowed as written that resolves to ${address} is never connected to`, async () => {
      NAMES.set('sneaky.example', [address]);
      const allow = scheme === 'http' ? parseAllowList(`http://sneaky.example:${port}`).entries : [];
      const client = await createS3Client(target(`${scheme}://sneaky.example:${port}`), credentials, allow);
      const { HeadObjectCommand } = await loadS3Sdk();
      connections = 0;
      const err = await client.send(new HeadObjectCommand({ Bucket: 'b', Key: 'k' })).then(
        () => undefined,
        (e: unknown) => e as NodeJS.ErrnoException,
      );
      client.destroy();
      assert.equal(connections, 0, 'no connection to the loopback address');
      assert.equal(err?.code, code, String(err));
    });
  }

  it("the guard's answers: the refusal, one address or all of them, none, a lookup error", async () => {
    NAMES.set('store.example', ['203.0.113.5', '203.0.113.6']);
    NAMES.set('meta.example', ['203.0.113.5', '169.254.169.254']);
    NAMES.set('empty.example', []);
    NAMES.set('gone.example', 'fail');
    const client = await createS3Client(target('https://store.example'), credentials, []);
    // The lookup the client's sockets use (the agent's own option, a public Node API).
    const handler = client.config.requestHandler as unknown as {
      configProvider: Promise<{ httpsAgent: { options: { lookup: typeof dns.lookup } } }>;
    };
    const { httpsAgent } = await handler.configProvider;
    const { lookup } = httpsAgent.options;
    client.destroy();
    // https keeps its connections alive as http does (the test below counts those on a plain store).
    assert.equal((httpsAgent as unknown as { keepAlive: boolean }).keepAlive, true);
    const ask = (host: string, all: boolean) =>
      new Promise<[NodeJS.ErrnoException | null, unknown, number | undefined]>(resolve =>
        (lookup as (h: string, o: dns.LookupOptions, c: (...a: unknown[]) => void) => void)(
          host,
          { all },
          (err, address, family) =>
            resolve([err as NodeJS.ErrnoException | null, address, family as number | undefined]),
        ),
      );
    const [refused, refusedAddress] = await ask('meta.example', true);
    assert.equal(refused?.code, 'EndpointLinkLocal');
    assert.match(refused?.message ?? '', /169\.254\.169\.254.*link-local/);
    assert.equal(refusedAddress, '');
    assert.equal((await ask('meta.example', false))[0]?.code, 'EndpointLinkLocal');
    assert.deepEqual(await ask('store.example', true), [
      null,
      [
        { address: '203.0.113.5', family: 4 },
        { address: '203.0.113.6', family: 4 },
      ],
      undefined,
    ]);
    assert.deepEqual(await ask('store.example', false), [null, '203.0.113.5', 4]);
    const [none, noneAddress] = await ask('empty.example', false);
    assert.equal(none?.code, 'ENOTFOUND');
    assert.equal(none?.message, 'empty.example has no address');
    assert.equal(noneAddress, '');
    assert.deepEqual(await ask('empty.example', true), [null, [], undefined]);
    const [failed, failedAddress] = await ask('gone.example', false);
    assert.equal(failed?.code, 'ENOTFOUND');
    assert.equal(failedAddress, '');
  });
});

describe('the client a store sees', () => {
  let server: Server;
  let endpoint = '';
  const sockets = new Set<unknown>();
  const headers: Record<string, string | string[] | undefined>[] = [];
  before(async () => {
    server = createServer((req, res) => {
      sockets.add(req.socket);
      headers.push(req.headers);
      req.resume();
      req.on('end', () => {
        if (req.method === 'GET') {
          // A checksum header that does not match the body: checked only when S3 requires it.
          res.writeHead(200, { 'content-length': 5, 'x-amz-checksum-crc32': 'AAAAAA==' }).end('hello');
        } else res.writeHead(200, { 'content-length': 0, etag: '"e"' }).end();
      });
    });
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise(resolve => server.close(resolve));
  });

  it('one kept-alive connection for several requests; no checksum computed or checked unless required', async () => {
    const client = await createS3Client(
      target(endpoint),
      credentials,
      parseAllowList('http://127.0.0.0/8').entries,
    );
    const { GetObjectCommand, HeadObjectCommand, PutObjectCommand } = await loadS3Sdk();
    await client.send(new HeadObjectCommand({ Bucket: 'b', Key: 'k' }));
    await client.send(new PutObjectCommand({ Bucket: 'b', Key: 'k', Body: 'hello' }));
    const got = await client.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' }));
    assert.equal(await got.Body?.transformToString(), 'hello');
    client.destroy();
    assert.equal(sockets.size, 1, 'one connection');
    const put = headers[1];
    assert.deepEqual(
      Object.keys(put).filter(h => /checksum|content-encoding|x-amz-trailer/.test(h)),
      [],
      JSON.stringify(put),
    );
  });
});

describe('EndpointRefusedError and the SDK exports', () => {
  it('the refusal is named EndpointRefused and carries the verdict', async () => {
    const err = await createS3Client(target('http://169.254.169.254'), credentials, []).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof EndpointRefusedError);
    assert.equal(err.name, 'EndpointRefused');
    assert.equal(err.code, 'EndpointLinkLocal');
    assert.equal(err.verdict.reason, 'EndpointLinkLocal');
    assert.equal(err.message, err.verdict.message);
  });

  it('the named exports when present, the default export when only it has them, else what was loaded', async () => {
    const plain = { other: 1 } as { other: number; S3Client?: unknown };
    assert.equal(commonJsExports(plain, 'S3Client'), plain);
    const emptyDefault = { default: {}, S3Client: undefined } as { S3Client?: unknown; default: object };
    assert.equal(commonJsExports(emptyDefault, 'S3Client'), emptyDefault);
    assert.equal(typeof (await loadS3Sdk()).S3Client, 'function');
    assert.equal(typeof (await loadS3Upload()).Upload, 'function');
  });
});
