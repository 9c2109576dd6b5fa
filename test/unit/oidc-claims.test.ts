import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  bearerToken,
  checkClaims,
  oidcConfigFromEnv,
  type OidcConfig,
} from '../../shared/runtime/oidc-claims.ts';

const config: OidcConfig = {
  issuer: 'https://kubernetes.default.svc.cluster.local',
  audience: 'etcdfn/reconcile-cluster',
  subjects: ['system:serviceaccount:etcdfn:oidc-trigger-a', 'system:serviceaccount:etcdfn:oidc-trigger-b'],
};
const NOW = 1_800_000_000;
const good = {
  iss: config.issuer,
  aud: config.audience,
  sub: config.subjects[0],
  exp: NOW + 600,
  nbf: NOW - 10,
};

describe('checkClaims', () => {
  const cases: { name: string; claims: Record<string, unknown>; reason?: RegExp }[] = [
    { name: 'all good', claims: good },
    { name: 'second allowed subject', claims: { ...good, sub: config.subjects[1] } },
    { name: 'audience among several', claims: { ...good, aud: ['other', config.audience] } },
    { name: 'no nbf', claims: { ...good, nbf: undefined } },
    { name: 'expired within the clock skew', claims: { ...good, exp: NOW - 30 } },
    { name: 'expired exactly the clock skew ago', claims: { ...good, exp: NOW - 60 }, reason: /expired/ },
    { name: 'valid from exactly the clock skew ahead', claims: { ...good, nbf: NOW + 60 } },
    { name: 'other issuer', claims: { ...good, iss: 'https://evil.example' }, reason: /issuer/ },
    { name: 'no issuer', claims: { ...good, iss: undefined }, reason: /issuer/ },
    { name: 'other audience', claims: { ...good, aud: 'etcdfn/dead-letter' }, reason: /audience/ },
    { name: 'audience list without ours', claims: { ...good, aud: ['a', 'b'] }, reason: /audience/ },
    { name: 'no audience', claims: { ...good, aud: undefined }, reason: /audience/ },
    { name: 'no exp', claims: { ...good, exp: undefined }, reason: /no expiry/ },
    { name: 'expired', claims: { ...good, exp: NOW - 61 }, reason: /expired/ },
    { name: 'exp not a number', claims: { ...good, exp: String(NOW + 600) }, reason: /no expiry/ },
    { name: 'not valid yet', claims: { ...good, nbf: NOW + 61 }, reason: /not valid yet/ },
    { name: 'nbf not a number', claims: { ...good, nbf: 'soon' }, reason: /not valid yet/ },
    {
      name: 'other subject',
      claims: { ...good, sub: 'system:serviceaccount:etcdfn:default' },
      reason: /subject/,
    },
    {
      name: 'subject of another namespace',
      claims: { ...good, sub: 'system:serviceaccount:x:oidc-trigger-a' },
      reason: /subject/,
    },
    { name: 'no subject', claims: { ...good, sub: undefined }, reason: /subject/ },
  ];
  for (const c of cases) {
    it(`${c.name} → ${c.reason ? 'refused' : 'accepted'}`, () => {
      const verdict = checkClaims(c.claims, config, NOW);
      if (!c.reason) assert.deepEqual(verdict, { ok: true });
      else {
        assert.equal(verdict.ok, false);
        assert.match(verdict.ok ? '' : verdict.reason, c.reason);
      }
    });
  }
});

describe('bearerToken', () => {
  const cases: [string | undefined, string | undefined][] = [
    ['Bearer abc.def.ghi', 'abc.def.ghi'],
    ['bearer abc.def.ghi', 'abc.def.ghi'],
    ['Bearer  a-b_c.d ', 'a-b_c.d'],
    [undefined, undefined],
    ['', undefined],
    ['Basic dXNlcg==', undefined],
    ['Bearer', undefined],
    ['Bearer a b', undefined],
    ['xBearer abc', undefined],
    ['Token Bearer abc', undefined],
  ];
  for (const [header, token] of cases)
    it(`${JSON.stringify(header)} → ${JSON.stringify(token)}`, () =>
      assert.equal(bearerToken(header), token));
});

describe('oidcConfigFromEnv', () => {
  const full = {
    ETCDFN_OIDC_ISSUER: config.issuer,
    ETCDFN_OIDC_AUDIENCE: config.audience,
    ETCDFN_OIDC_SUBJECTS: config.subjects.join(', '),
  };
  it('nothing set → off', () => assert.equal(oidcConfigFromEnv({}), undefined));
  it('all set → the config', () => assert.deepEqual(oidcConfigFromEnv(full), config));
  it('a JWKS URL is passed on', () =>
    assert.equal(
      oidcConfigFromEnv({ ...full, ETCDFN_OIDC_JWKS_URL: 'https://k/jwks' })?.jwksUrl,
      'https://k/jwks',
    ));
  for (const missing of Object.keys(full))
    it(`${missing} missing → an error naming it (half configured is not off)`, () =>
      assert.throws(() => oidcConfigFromEnv({ ...full, [missing]: '' }), new RegExp(`set ${missing}`)));
  it('values are trimmed', () =>
    assert.deepEqual(
      oidcConfigFromEnv({
        ETCDFN_OIDC_ISSUER: ` ${config.issuer} `,
        ETCDFN_OIDC_AUDIENCE: ` ${config.audience}\n`,
        ETCDFN_OIDC_SUBJECTS: ` ${config.subjects.join(' ')} `,
        ETCDFN_OIDC_JWKS_URL: ' https://k/jwks ',
      }),
      { ...config, jwksUrl: 'https://k/jwks' },
    ));
  for (const [only, value] of Object.entries(full))
    it(`only ${only} set → an error naming the other two (half configured is not off)`, () => {
      const others = Object.keys(full).filter(k => k !== only);
      assert.throws(
        () => oidcConfigFromEnv({ [only]: value }),
        new RegExp(`set ${others.join(' and ')} too`),
      );
    });
  for (const subject of [
    'alice',
    'user-system:serviceaccount:etcdfn:oidc-trigger-a',
    'system:serviceaccount:etcdfn:oidc-trigger-a:extra',
    'system:serviceaccount:etcdfn',
  ])
    it(`subject ${subject} is not a service account → an error`, () =>
      assert.throws(
        () => oidcConfigFromEnv({ ...full, ETCDFN_OIDC_SUBJECTS: subject }),
        /is not system:serviceaccount:<namespace>:<name>/,
      ));
});
