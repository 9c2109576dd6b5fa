// The functions' own service-account token (it may read Secrets) goes with OIDC key fetches only
// over https and only to an origin the user named (oidc.issuer, oidc.jwksUrl): a table of the
// decision, and loopback issuers that record what they receive. The chart's values schema refuses
// plain-http issuer and JWKS URLs.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mayCarryToken, senderVerifier } from '../../shared/runtime/oidc-verifier.ts';
import { CHART_DIR, helm } from '../support/helm.ts';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';

describe('where the fetch token may go', () => {
  const rows: [string, { issuer: string; jwksUrl?: string }, boolean][] = [
    [`${ISSUER}/.well-known/openid-configuration`, { issuer: ISSUER }, true],
    ['https://10.0.0.1:6443/openid/v1/jwks', { issuer: ISSUER }, false],
    [
      'https://10.0.0.1:6443/openid/v1/jwks',
      { issuer: ISSUER, jwksUrl: 'https://10.0.0.1:6443/openid/v1/jwks' },
      true,
    ],
    ['https://evil.example/keys', { issuer: ISSUER }, false],
    [
      'http://kubernetes.default.svc.cluster.local/.well-known/openid-configuration',
      { issuer: ISSUER },
      false,
    ],
    ['http://127.0.0.1:8080/keys', { issuer: 'http://127.0.0.1:8080' }, false],
    [`${ISSUER}:8443/keys`, { issuer: ISSUER }, false],
  ];
  for (const [url, config, allowed] of rows)
    it(`${allowed ? 'to' : 'never to'} ${url} (issuer ${config.issuer}${config.jwksUrl ? `, jwksUrl ${config.jwksUrl}` : ''})`, () => {
      assert.equal(mayCarryToken(new URL(url), config), allowed);
    });
});

describe('loopback issuers see no token over plain http, nor at a jwks_uri on another host', () => {
  const seen: { path: string; authorization?: string }[] = [];
  const servers: Server[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'etcdfn-oidc-token-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'service-account-token\n');
  after(() => {
    for (const s of servers) s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const serve = async (handler: (path: string) => unknown): Promise<string> => {
    const server = createServer((req, res) => {
      seen.push({
        path: req.url ?? '',
        ...(req.headers.authorization && { authorization: req.headers.authorization }),
      });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(handler(req.url ?? '')));
    });
    servers.push(server);
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    assert.ok(address && typeof address === 'object');
    return `http://127.0.0.1:${address.port}`;
  };

  it('asks discovery and keys, and never sends the token file', async () => {
    const keys = await serve(() => ({ keys: [] }));
    const issuer = await serve(() => ({ issuer: issuerUrl, jwks_uri: `${keys}/openid/v1/jwks` }));
    const issuerUrl = issuer;
    const verifier = senderVerifier(
      { issuer, audience: 'a', subjects: ['s'] },
      { fetchTokenFile: tokenFile },
    );
    const verdict = await verifier.verify('Bearer e30.e30.sig');
    assert.equal(verdict.ok, false);
    assert.ok(
      seen.some(s => s.path === '/.well-known/openid-configuration'),
      JSON.stringify(seen),
    );
    assert.deepEqual(
      seen.filter(s => s.authorization),
      [],
    );
  });
});

describe('the chart refuses plain-http OIDC URLs', () => {
  for (const oidc of [
    { enabled: true, issuer: 'http://kubernetes.default.svc.cluster.local' },
    {
      enabled: true,
      issuer: 'https://kubernetes.default.svc',
      jwksUrl: 'http://10.0.0.1:6443/openid/v1/jwks',
    },
  ])
    it(JSON.stringify(oidc), () => {
      const result = helm(4, ['template', 'etcdfn', CHART_DIR], { oidc });
      assert.notEqual(result.status, 0, result.stdout);
      assert.match(result.stderr, /issuer|jwksUrl/);
    });
});
