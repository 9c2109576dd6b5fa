// The sender check of Knative's OIDC tokens (shared/runtime/oidc-verifier.ts) against loopback
// issuers, in process: the signature against the published keys, every algorithm allowed and no
// other, each refusal's short reason, 503 (not 401) while the keys cannot be had and a fresh attempt
// on the next event, discovery's checks, no link-local destination, and the fetch token sent only
// over https to an origin the configuration names (test/integration/function-oidc.test.ts does the
// same through a function's entry point against an API server).
import assert from 'node:assert/strict';
import dns from 'node:dns';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { syncBuiltinESMExports } from 'node:module';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { after, before, describe, it, mock } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { OidcConfig } from '../../shared/runtime/oidc-claims.ts';
import {
  mayCarryToken,
  OIDC_FETCH_TOKEN_FILE_ENV,
  senderVerifier,
} from '../../shared/runtime/oidc-verifier.ts';
import { TestCA } from '../support/test-certs.ts';

const AUDIENCE = 'etcdfn/reconcile-cluster';
const SUBJECT = 'system:serviceaccount:etcdfn:trigger';
const NOW = 1_800_000_000_000;

interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
}
async function signingKey(kid: string, alg: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

type Handler = (req: IncomingMessage, res: ServerResponse, url: string) => void;
const json = (res: ServerResponse, body: unknown, status = 200) => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

const issuers: Issuer[] = [];
after(async () => Promise.all(issuers.map(i => i.close())));

/** A loopback issuer: what it publishes and how its discovery answers can change; it records requests. */
class Issuer {
  published: JWK[] = [];
  seen: { path: string; authorization?: string }[] = [];
  url = '';
  discovery: Handler | undefined;
  private readonly handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '';
    this.seen.push({ path, ...(req.headers.authorization && { authorization: req.headers.authorization }) });
    if (path === '/.well-known/openid-configuration') {
      if (this.discovery) this.discovery(req, res, this.url);
      else json(res, { issuer: this.url, jwks_uri: `${this.url}/keys` });
    } else if (path === '/keys') json(res, { keys: this.published });
    else json(res, {}, 404);
  };
  readonly server: Server;
  private readonly scheme: string;
  constructor(tlsFiles?: { cert: Buffer; key: Buffer }) {
    this.server = tlsFiles ? createHttpsServer(tlsFiles, this.handle) : createServer(this.handle);
    this.scheme = tlsFiles ? 'https' : 'http';
    issuers.push(this);
  }
  async start(host = '127.0.0.1'): Promise<this> {
    await new Promise<void>(resolve => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `${this.scheme}://${host}:${(this.server.address() as AddressInfo).port}`;
    return this;
  }
  fetches(path: string): number {
    return this.seen.filter(s => s.path === path).length;
  }
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise(done => this.server.close(() => done()));
  }
}

describe('senderVerifier', () => {
  let issuer: Issuer;
  let rsa: SigningKey;
  let keys: SigningKey[];
  const config = (over: Partial<OidcConfig> = {}): OidcConfig => ({
    issuer: issuer.url,
    audience: AUDIENCE,
    subjects: [SUBJECT],
    ...over,
  });
  const token = (key: SigningKey, claims: Record<string, unknown> = {}, alg = key.alg): Promise<string> => {
    const now = Math.floor(NOW / 1000);
    return new SignJWT({ iss: issuer.url, aud: AUDIENCE, sub: SUBJECT, iat: now, exp: now + 600, ...claims })
      .setProtectedHeader({ alg, kid: key.kid })
      .sign(key.privateKey);
  };
  const verifier = (over: Partial<OidcConfig> = {}, refetchCooldownMs = 0) =>
    senderVerifier(config(over), { refetchCooldownMs, now: () => NOW });

  before(async () => {
    issuer = await new Issuer().start();
    rsa = await signingKey('rsa', 'RS256');
    keys = [
      rsa,
      { ...(await signingKey('rs384', 'RS384')) },
      { ...(await signingKey('rs512', 'RS512')) },
      { ...(await signingKey('es256', 'ES256')) },
      { ...(await signingKey('es384', 'ES384')) },
      { ...(await signingKey('ps256', 'PS256')) },
    ];
    issuer.published = keys.map(k => k.jwk);
  });
  it('a token signed with each allowed algorithm, from the expected sender, is accepted', async () => {
    const check = verifier();
    for (const key of keys) {
      assert.deepEqual(await check.verify(`Bearer ${await token(key)}`), { ok: true }, key.alg);
    }
  });

  it('another algorithm (HS256, a shared secret) is refused', async () => {
    const secret = new TextEncoder().encode('a shared secret of thirty-two bytes!');
    const hs = await new SignJWT({ iss: issuer.url, aud: AUDIENCE, sub: SUBJECT, exp: NOW / 1000 + 600 })
      .setProtectedHeader({ alg: 'HS256', kid: 'rsa' })
      .sign(secret);
    assert.deepEqual(await verifier().verify(`Bearer ${hs}`), {
      ok: false,
      status: 401,
      reason: 'token algorithm not allowed',
    });
  });

  it('each refusal is 401 with a short reason', async () => {
    const now = Math.floor(NOW / 1000);
    const [header, payload] = (await token(rsa)).split('.');
    const [, , otherSignature] = (await token(rsa, { sub: 'x' })).split('.');
    const forged = await signingKey('rsa', 'RS256');
    const rows: [string, string | undefined, string][] = [
      ['no header', undefined, 'no Bearer token'],
      ['Basic', 'Basic dXNlcjpwYXNz', 'no Bearer token'],
      ['expired', `Bearer ${await token(rsa, { exp: now - 3600 })}`, 'token expired'],
      ['not valid yet', `Bearer ${await token(rsa, { nbf: now + 3600 })}`, 'token claim nbf is not valid'],
      ['bad signature', `Bearer ${header}.${payload}.${otherSignature}`, 'token signature is not valid'],
      ['a key the issuer does not publish', `Bearer ${await token(forged)}`, 'token signature is not valid'],
      [
        'unknown key id',
        `Bearer ${await token({ ...rsa, kid: 'nobody' })}`,
        'token signed by an unknown key',
      ],
      ['malformed', 'Bearer not.a.jwt', 'token is malformed'],
      ['not a JWS at all', 'Bearer abc', 'token is malformed'],
      [
        'wrong audience',
        `Bearer ${await token(rsa, { aud: 'other' })}`,
        'token audience is not this function',
      ],
      [
        'wrong issuer',
        `Bearer ${await token(rsa, { iss: 'https://elsewhere.example' })}`,
        'token issuer is not the configured issuer',
      ],
    ];
    const check = verifier();
    for (const [name, authorization, reason] of rows) {
      assert.deepEqual(await check.verify(authorization), { ok: false, status: 401, reason }, name);
    }
    const subject = await check.verify(`Bearer ${await token(rsa, { sub: 'system:serviceaccount:x:y' })}`);
    assert.ok(
      !subject.ok && subject.status === 401 && /subject/.test(subject.reason),
      JSON.stringify(subject),
    );
  });

  it("the clock is the verifier's own, with the claims' skew: expired 30 s ago passes, an hour ago does not", async () => {
    const now = Math.floor(NOW / 1000);
    const check = verifier();
    assert.deepEqual(await check.verify(`Bearer ${await token(rsa, { exp: now - 30 })}`), { ok: true });
    const later = senderVerifier(config(), { refetchCooldownMs: 0, now: () => NOW + 3_600_000 });
    const old = await later.verify(`Bearer ${await token(rsa)}`);
    assert.deepEqual(old, { ok: false, status: 401, reason: 'token expired' });
  });

  it('keys are fetched once and kept; an unknown key id refetches, bounded by the cooldown', async () => {
    issuer.seen = [];
    const check = verifier({}, 3_600_000);
    assert.equal((await check.verify(`Bearer ${await token(rsa)}`)).ok, true);
    assert.equal((await check.verify(`Bearer ${await token(rsa)}`)).ok, true);
    assert.equal(issuer.fetches('/.well-known/openid-configuration'), 1);
    assert.equal(issuer.fetches('/keys'), 1);
    await check.verify(`Bearer ${await token({ ...rsa, kid: 'unknown' })}`);
    assert.equal(issuer.fetches('/keys'), 1, 'no refetch within the cooldown');
    issuer.seen = [];
    const eager = verifier({}, 0);
    await eager.verify(`Bearer ${await token(rsa)}`);
    await eager.verify(`Bearer ${await token({ ...rsa, kid: 'unknown' })}`);
    assert.equal(issuer.fetches('/keys'), 2, 'one refetch for an unknown key id');
  });

  it('the cooldown given is the one kept: an hour, not the default 30 s', async () => {
    mock.timers.enable({ apis: ['Date'], now: Date.now() });
    try {
      issuer.seen = [];
      const check = verifier({}, 3_600_000);
      assert.equal((await check.verify(`Bearer ${await token(rsa)}`)).ok, true);
      mock.timers.tick(60_000);
      await check.verify(`Bearer ${await token({ ...rsa, kid: 'unknown' })}`);
      assert.equal(issuer.fetches('/keys'), 1, 'no refetch a minute later');
    } finally {
      mock.timers.reset();
    }
  });

  it('the default cooldown holds back a refetch for an unknown key id', async () => {
    issuer.seen = [];
    const check = senderVerifier(config(), { now: () => NOW });
    assert.equal((await check.verify(`Bearer ${await token(rsa)}`)).ok, true);
    await check.verify(`Bearer ${await token({ ...rsa, kid: 'unknown' })}`);
    assert.equal(issuer.fetches('/keys'), 1);
  });

  it("discovery: the issuer's own document, under the issuer with or without a trailing slash", async () => {
    issuer.seen = [];
    const slash = senderVerifier(config({ issuer: `${issuer.url}/` }), { now: () => NOW });
    // The issuer with a slash is not the token's `iss`, so discovery names another issuer: 503.
    assert.equal((await slash.verify(`Bearer ${await token(rsa)}`)).ok, false);
    assert.deepEqual(
      issuer.seen.map(s => s.path),
      ['/.well-known/openid-configuration'],
    );
  });

  const unavailable = { ok: false, status: 503, reason: 'signing keys unavailable' };
  it('discovery that fails, names another issuer or no jwks_uri: 503, and asked again next time', async () => {
    const answers: Handler[] = [
      (_req, res) => json(res, {}, 500),
      // A failed answer is not read, even when its body would do.
      (_req, res, url) => json(res, { issuer: url, jwks_uri: `${url}/keys` }, 500),
      // A jwks_uri that is no string, even one that would make a URL.
      (_req, res, url) => json(res, { issuer: url, jwks_uri: [`${url}/keys`] }),
      (_req, res, url) => json(res, { issuer: `${url}/other`, jwks_uri: `${url}/keys` }),
      (_req, res, url) => json(res, { issuer: url }),
      (_req, res, url) => json(res, { issuer: url, jwks_uri: 42 }),
      // A redirect is not followed.
      (_req, res, url) => res.writeHead(302, { location: `${url}/elsewhere` }).end(),
    ];
    for (const answer of answers) {
      issuer.discovery = answer;
      issuer.seen = [];
      const check = verifier();
      assert.deepEqual(await check.verify(`Bearer ${await token(rsa)}`), unavailable);
      assert.ok(!issuer.seen.some(s => s.path === '/elsewhere'));
      issuer.discovery = undefined;
      assert.deepEqual(await check.verify(`Bearer ${await token(rsa)}`), { ok: true }, 'asked again');
    }
  });

  it('a configured jwksUrl is used without discovery', async () => {
    issuer.seen = [];
    const check = verifier({ jwksUrl: `${issuer.url}/keys` });
    assert.deepEqual(await check.verify(`Bearer ${await token(rsa)}`), { ok: true });
    assert.deepEqual(
      issuer.seen.map(s => s.path),
      ['/keys'],
    );
  });

  it('a link-local issuer or key URL is never asked, written or resolved so', async () => {
    const realLookup = dns.promises.lookup;
    const asked: string[] = [];
    dns.promises.lookup = (async (host: string, options: dns.LookupAllOptions) => {
      asked.push(host);
      if (host === 'metadata.example') return [{ address: '169.254.169.254', family: 4 }];
      if (host === 'v6.example') return [{ address: 'fe80::1', family: 6 }];
      if (host === 'mixed.example')
        return [
          { address: '203.0.113.5', family: 4 },
          { address: '169.254.169.254', family: 4 },
        ];
      return realLookup(host, options);
    }) as typeof dns.promises.lookup;
    syncBuiltinESMExports();
    // Every socket connection in this process is refused and recorded: none may even be attempted.
    const attempts: unknown[] = [];
    const connect = Object.getOwnPropertyDescriptor(net.Socket.prototype, 'connect');
    Object.defineProperty(net.Socket.prototype, 'connect', {
      configurable: true,
      writable: true,
      value(...args: unknown[]) {
        attempts.push(args[0]);
        throw new Error('this test never connects anywhere');
      },
    });
    try {
      for (const over of [
        { issuer: 'http://169.254.169.254' },
        { jwksUrl: 'http://169.254.169.254/keys' },
        { issuer: 'http://[fe80::1]:8080' },
        { issuer: 'http://metadata.example' },
        { jwksUrl: 'http://v6.example/keys' },
        { issuer: 'http://mixed.example' },
      ]) {
        assert.deepEqual(
          await verifier(over).verify(`Bearer ${await token(rsa)}`),
          unavailable,
          JSON.stringify(over),
        );
      }
      assert.deepEqual(
        asked,
        ['metadata.example', 'v6.example', 'mixed.example'],
        'literals are not looked up',
      );
      assert.deepEqual(attempts, [], 'no connection attempted');
    } finally {
      if (connect) Object.defineProperty(net.Socket.prototype, 'connect', connect);
      dns.promises.lookup = realLookup;
      syncBuiltinESMExports();
    }
  });

  describe('the fetch token', () => {
    let dir: string;
    let tokenFile: string;
    let secure: Issuer;
    let realCAs: string[];
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'etcdfn-oidc-verifier-'));
      tokenFile = join(dir, 'token');
      writeFileSync(tokenFile, '  service-account-token\n');
      const ca = new TestCA(dir);
      const leaf = ca.issue('issuer', 'issuer', ['IP:127.0.0.1', 'DNS:localhost']);
      realCAs = tls.getCACertificates('default');
      tls.setDefaultCACertificates([...realCAs, ca.pem().toString()]);
      const { readFileSync } = await import('node:fs');
      secure = await new Issuer({ cert: readFileSync(leaf.cert), key: readFileSync(leaf.key) }).start();
      secure.published = [rsa.jwk];
    });
    after(() => {
      tls.setDefaultCACertificates(realCAs);
      rmSync(dir, { recursive: true, force: true });
    });

    it("goes, trimmed, to the https issuer's discovery and keys, and not to a key URL on another origin", async () => {
      const signed = await new SignJWT({
        iss: secure.url,
        aud: AUDIENCE,
        sub: SUBJECT,
        exp: NOW / 1000 + 600,
      })
        .setProtectedHeader({ alg: 'RS256', kid: 'rsa' })
        .sign(rsa.privateKey);
      const check = senderVerifier(
        { issuer: secure.url, audience: AUDIENCE, subjects: [SUBJECT] },
        { fetchTokenFile: tokenFile, now: () => NOW },
      );
      assert.deepEqual(await check.verify(`Bearer ${signed}`), { ok: true });
      assert.deepEqual(secure.seen, [
        { path: '/.well-known/openid-configuration', authorization: 'Bearer service-account-token' },
        { path: '/keys', authorization: 'Bearer service-account-token' },
      ]);
      // The same store under another origin (localhost) is not named: no token there.
      secure.seen = [];
      const other = secure.url.replace('127.0.0.1', 'localhost');
      secure.discovery = (_req, res, url) => json(res, { issuer: url, jwks_uri: `${other}/keys` });
      const elsewhere = senderVerifier(
        { issuer: secure.url, audience: AUDIENCE, subjects: [SUBJECT] },
        { fetchTokenFile: tokenFile, now: () => NOW },
      );
      assert.deepEqual(await elsewhere.verify(`Bearer ${signed}`), { ok: true });
      assert.deepEqual(secure.seen, [
        { path: '/.well-known/openid-configuration', authorization: 'Bearer service-account-token' },
        { path: '/keys' },
      ]);
      secure.discovery = undefined;
    });

    it('no token file: nothing sent', async () => {
      secure.seen = [];
      const signed = await new SignJWT({
        iss: secure.url,
        aud: AUDIENCE,
        sub: SUBJECT,
        exp: NOW / 1000 + 600,
      })
        .setProtectedHeader({ alg: 'RS256', kid: 'rsa' })
        .sign(rsa.privateKey);
      const check = senderVerifier(
        { issuer: secure.url, audience: AUDIENCE, subjects: [SUBJECT] },
        { now: () => NOW },
      );
      assert.deepEqual(await check.verify(`Bearer ${signed}`), { ok: true });
      assert.deepEqual(
        secure.seen.map(s => s.authorization),
        [undefined, undefined],
      );
    });
  });
});

describe('where the fetch token may go', () => {
  it('the token file is named by $ETCDFN_OIDC_FETCH_TOKEN_FILE', () => {
    assert.equal(OIDC_FETCH_TOKEN_FILE_ENV, 'ETCDFN_OIDC_FETCH_TOKEN_FILE');
  });

  const ISSUER = 'https://kubernetes.default.svc.cluster.local';
  const rows: [string, { issuer: string; jwksUrl?: string }, boolean][] = [
    [`${ISSUER}/.well-known/openid-configuration`, { issuer: ISSUER }, true],
    ['https://10.0.0.1:6443/openid/v1/jwks', { issuer: ISSUER }, false],
    ['https://10.0.0.1:6443/openid/v1/jwks', { issuer: ISSUER, jwksUrl: 'https://10.0.0.1:6443/x' }, true],
    ['https://evil.example/keys', { issuer: ISSUER }, false],
    [
      `http://kubernetes.default.svc.cluster.local/.well-known/openid-configuration`,
      { issuer: ISSUER },
      false,
    ],
    [`${ISSUER}:8443/keys`, { issuer: ISSUER }, false],
    // An unparsable issuer names no origin; the key URL still does.
    ['https://10.0.0.1/keys', { issuer: 'not a url', jwksUrl: 'https://10.0.0.1/k' }, true],
    ['https://10.0.0.1/keys', { issuer: 'not a url' }, false],
    // Plain http never, even to the origin named.
    ['http://127.0.0.1:8080/keys', { issuer: 'http://127.0.0.1:8080' }, false],
  ];
  for (const [url, config, allowed] of rows)
    it(`${allowed ? 'to' : 'never to'} ${url} (${JSON.stringify(config)})`, () => {
      assert.equal(mayCarryToken(new URL(url), config), allowed);
    });
});
