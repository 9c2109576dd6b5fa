// Sender authentication at the real function entry point: a local OIDC issuer on loopback (discovery
// document + JWKS, keys made with jose) and real HTTP CloudEvents into reconcile-cluster, with the
// sandbox API server behind it. Evidence that no work was done is the API server's request log: a
// refused event reaches no object.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { loadFunction } from '../../functions/registry.ts';
import { functionServer, listen } from '../../shared/runtime/function-server.ts';
import type { OidcConfig } from '../../shared/runtime/oidc-claims.ts';
import { senderVerifier } from '../../shared/runtime/oidc-verifier.ts';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';
import type { CountingProxy } from '../support/counting-proxy.ts';
import { writeKubeconfig } from '../sandbox/kubeconfig.ts';
import { loadEventFixture, wireBody } from '../support/fixtures.ts';

const AUDIENCE = 'etcdfn/reconcile-cluster';
const SUBJECT = 'system:serviceaccount:etcdfn:reconcile-cluster-oidc-eventing.knative.dev-trigger';

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

/** A loopback OIDC issuer: what it publishes can change, and it counts JWKS fetches. */
class Issuer {
  published: JWK[] = [];
  jwksFetches = 0;
  url = '';
  private server: Server = createServer((req, res) => {
    if (req.url === '/.well-known/openid-configuration') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ issuer: this.url, jwks_uri: `${this.url}/openid/v1/jwks` }));
    } else if (req.url === '/openid/v1/jwks') {
      this.jwksFetches += 1;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: this.published }));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  async start(): Promise<void> {
    this.url = `http://127.0.0.1:${await listen(this.server, 0)}`;
  }
  close(): Promise<void> {
    return new Promise(done => this.server.close(() => done()));
  }
}

describe('sender authentication (Knative OIDC) at the function entry point', () => {
  let api: TestApiServer;
  let dir: string;
  let issuer: Issuer;
  let keyA: SigningKey;
  let keyB: SigningKey;
  let proxy: CountingProxy;
  const apiRequests = (): number => proxy.requests().length;
  const servers: Server[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'etcdfn-function-oidc-'));
    api = await startApiServer();
    // The function reaches the API server through a proxy that counts its requests.
    proxy = await api.countingProxy();
    writeKubeconfig(join(dir, 'kubeconfig'), proxy.url);
    process.env.KUBECONFIG = join(dir, 'kubeconfig');
    process.env.LOG_LEVEL = 'silent';
    issuer = new Issuer();
    await issuer.start();
    keyA = await signingKey('key-a');
    keyB = await signingKey('key-b');
    issuer.published = [keyA.jwk];
    await loadFunction('reconcile-cluster');
  });
  after(async () => {
    await Promise.all(servers.map(s => new Promise(done => s.close(done))));
    await issuer?.close();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const config = (): OidcConfig => ({ issuer: issuer.url, audience: AUDIENCE, subjects: [SUBJECT] });

  async function serve(refetchCooldownMs: number | undefined, withSender = true): Promise<string> {
    const server = functionServer('reconcile-cluster', {
      ...(withSender && { sender: senderVerifier(config(), { refetchCooldownMs }) }),
    });
    servers.push(server);
    return `http://127.0.0.1:${await listen(server, 0)}/`;
  }

  function token(key: SigningKey, claims: Record<string, unknown> = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: issuer.url, aud: AUDIENCE, sub: SUBJECT, iat: now, exp: now + 3600, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .sign(key.privateKey);
  }

  /** Sends a real CloudEvent; returns the answer and how many API requests the function made. */
  async function send(url: string, authorization?: string) {
    const fixture = loadEventFixture('cluster-ref-update.json');
    const before = apiRequests();
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...fixture.headers, ...(authorization && { authorization }) },
      body: wireBody(fixture),
    });
    const text = await res.text();
    const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    return { status: res.status, text, body, apiRequests: apiRequests() - before, headers: res.headers };
  }

  it('a valid token from the expected Trigger is accepted and the event is handled', async () => {
    const url = await serve(0);
    const res = await send(url, `Bearer ${await token(keyA)}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, '', 'a handled event is answered with no body');
    assert.ok(res.apiRequests > 0, 'the function read the cluster');
  });

  const now = () => Math.floor(Date.now() / 1000);
  const refusals: { name: string; authorization: () => Promise<string | undefined>; reason: RegExp }[] = [
    { name: 'missing', authorization: async () => undefined, reason: /no Bearer token/ },
    { name: 'not Bearer', authorization: async () => 'Basic dXNlcjpwYXNz', reason: /no Bearer token/ },
    {
      name: 'wrong audience',
      authorization: async () => `Bearer ${await token(keyA, { aud: 'etcdfn/dead-letter' })}`,
      reason: /audience/,
    },
    {
      name: 'expired',
      authorization: async () => `Bearer ${await token(keyA, { iat: now() - 7200, exp: now() - 3600 })}`,
      reason: /expired/,
    },
    {
      name: 'not valid yet',
      authorization: async () => `Bearer ${await token(keyA, { nbf: now() + 3600 })}`,
      reason: /nbf|not valid yet/,
    },
    {
      name: 'wrong subject',
      authorization: async () =>
        `Bearer ${await token(keyA, { sub: 'system:serviceaccount:default:someone-else' })}`,
      reason: /subject/,
    },
    {
      name: 'wrong issuer',
      authorization: async () => `Bearer ${await token(keyA, { iss: 'https://elsewhere.example' })}`,
      reason: /issuer/,
    },
    {
      name: 'bad signature',
      authorization: async () => {
        const [header, payload] = (await token(keyA)).split('.');
        const [, , otherSignature] = (await token(keyA, { sub: 'x' })).split('.');
        return `Bearer ${header}.${payload}.${otherSignature}`;
      },
      reason: /signature/,
    },
    {
      name: 'signed by a key the issuer does not publish, under its key id',
      authorization: async () => `Bearer ${await token({ ...keyB, kid: keyA.kid })}`,
      reason: /signature/,
    },
    { name: 'malformed', authorization: async () => 'Bearer not.a.jwt', reason: /malformed/ },
  ];

  for (const refusal of refusals) {
    it(`${refusal.name} token → 401 with a short reason, no data and no work done`, async () => {
      const url = await serve(0);
      const res = await send(url, await refusal.authorization());
      assert.equal(res.status, 401, JSON.stringify(res.body));
      assert.match(String(res.body.error), refusal.reason);
      assert.deepEqual(Object.keys(res.body), ['error']);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer');
      assert.equal(res.apiRequests, 0, 'a refused event reaches no object');
    });
  }

  it('a token under an unknown key id makes one refetch of the keys, then is accepted', async () => {
    issuer.published = [keyA.jwk];
    const url = await serve(0);
    const fetchesBefore = issuer.jwksFetches;
    assert.equal((await send(url, `Bearer ${await token(keyA)}`)).status, 200);
    assert.equal(issuer.jwksFetches - fetchesBefore, 1, 'keys fetched once');
    assert.equal((await send(url, `Bearer ${await token(keyA)}`)).status, 200);
    assert.equal(issuer.jwksFetches - fetchesBefore, 1, 'a known key id is served from the cache');
    issuer.published = [keyA.jwk, keyB.jwk]; // the API server rotates its keys
    const res = await send(url, `Bearer ${await token(keyB)}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(issuer.jwksFetches - fetchesBefore, 2, 'exactly one refetch for the new key id');
  });

  it('refetches are bounded: within the cooldown an unknown key id is refused without a fetch', async () => {
    issuer.published = [keyA.jwk];
    const url = await serve(3_600_000);
    const fetchesBefore = issuer.jwksFetches;
    assert.equal((await send(url, `Bearer ${await token(keyA)}`)).status, 200);
    for (let i = 0; i < 3; i += 1) {
      const res = await send(url, `Bearer ${await token({ ...keyB, kid: `unknown-${i}` })}`);
      assert.equal(res.status, 401);
      assert.match(String(res.body.error), /unknown key/);
    }
    assert.equal(issuer.jwksFetches - fetchesBefore, 1, 'no fetch per forged key id');
  });

  it('keys that cannot be fetched → 503 (try again), not 401, and no work done', async () => {
    const down = new Issuer();
    await down.start();
    const downUrl = down.url;
    await down.close();
    const server = functionServer('reconcile-cluster', {
      sender: senderVerifier({ ...config(), issuer: downUrl }),
    });
    servers.push(server);
    const res = await send(`http://127.0.0.1:${await listen(server, 0)}/`, `Bearer ${await token(keyA)}`);
    assert.equal(res.status, 503, JSON.stringify(res.body));
    assert.match(String(res.body.error), /signing keys unavailable/);
    assert.equal(res.apiRequests, 0);
  });

  it('configured through the env (ETCDFN_OIDC_*), the entry point refuses an event without a token', async () => {
    process.env.ETCDFN_OIDC_ISSUER = issuer.url;
    process.env.ETCDFN_OIDC_AUDIENCE = AUDIENCE;
    process.env.ETCDFN_OIDC_SUBJECTS = SUBJECT;
    try {
      const url = await serve(undefined, false);
      assert.equal((await send(url)).status, 401);
      assert.equal((await send(url, `Bearer ${await token(keyA)}`)).status, 200);
    } finally {
      delete process.env.ETCDFN_OIDC_ISSUER;
      delete process.env.ETCDFN_OIDC_AUDIENCE;
      delete process.env.ETCDFN_OIDC_SUBJECTS;
    }
  });

  it('with the feature off (no ETCDFN_OIDC_*), an event without a token is handled as before', async () => {
    const url = await serve(undefined, false);
    const res = await send(url);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok(res.apiRequests > 0);
  });

  it('GET /metrics stays open to the scraper (no token), while events need one', async () => {
    const url = await serve(0);
    const res = await fetch(`${url}metrics`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /# TYPE /);
    assert.equal((await fetch(url, { method: 'GET' })).status, 401);
  });

  it('a link-local issuer (cloud metadata) is never asked', async () => {
    const server = functionServer('reconcile-cluster', {
      sender: senderVerifier({ ...config(), issuer: 'http://169.254.169.254' }),
    });
    servers.push(server);
    const res = await send(`http://127.0.0.1:${await listen(server, 0)}/`, `Bearer ${await token(keyA)}`);
    assert.equal(res.status, 503);
    assert.equal(res.apiRequests, 0);
  });
});
