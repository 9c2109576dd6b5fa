// Checks the Bearer token Knative's Broker sends when Eventing's OIDC is on: the signature against
// the issuer's published keys (jose fetches and caches them, and fetches again at most once per
// cooldown when a token names an unknown key id), then the claims (oidc-claims.ts). Outbound
// requests go only to the configured issuer's discovery document and its JWKS URL, never to a
// link-local address (cloud metadata), with the same check as S3 endpoints. The functions' own
// service-account token (which may read Secrets) goes only over https and only to an origin the
// user named (the issuer's, or oidc.jwksUrl's): a jwks_uri the discovery document names on another
// host is fetched without it.
import { lookup } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { isLinkLocal } from '../s3/endpoint-policy.ts';
import { bearerToken, checkClaims, CLOCK_SKEW_SECONDS, type OidcConfig } from './oidc-claims.ts';

export const OIDC_FETCH_TOKEN_FILE_ENV = 'ETCDFN_OIDC_FETCH_TOKEN_FILE';

/** 401: the sender is not who it must be; 503: the keys could not be fetched, try again later. */
export type SenderVerdict = { ok: true } | { ok: false; status: 401 | 503; reason: string };

export interface SenderVerifierOptions {
  /** Least time between two key fetches for unknown key ids (jose's cooldown; default 30 s). */
  refetchCooldownMs?: number;
  /** A token file sent as Bearer to the issuer (the API server's discovery needs an identity). */
  fetchTokenFile?: string;
  now?: () => number;
}

export interface SenderVerifier {
  verify(authorization: string | undefined): Promise<SenderVerdict>;
}

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'PS256'];

/** Whether the fetch token may go to `url`: https, and an origin the configuration names. */
export function mayCarryToken(url: URL, config: Pick<OidcConfig, 'issuer' | 'jwksUrl'>): boolean {
  if (url.protocol !== 'https:') return false;
  const named = [config.issuer, config.jwksUrl].flatMap(u => {
    try {
      return u ? [new URL(u).origin] : [];
    } catch {
      return [];
    }
  });
  return named.includes(url.origin);
}

export function senderVerifier(config: OidcConfig, options: SenderVerifierOptions = {}): SenderVerifier {
  const fetchGuarded = guardedFetch(options.fetchTokenFile, url => mayCarryToken(url, config));
  let keys: Promise<JWTVerifyGetKey> | undefined;
  const keySet = (): Promise<JWTVerifyGetKey> => {
    keys ??= jwksUrl(config, fetchGuarded).then(url =>
      createRemoteJWKSet(new URL(url), {
        cooldownDuration: options.refetchCooldownMs ?? 30_000,
        timeoutDuration: 5_000,
        [customFetch]: fetchGuarded,
      }),
    );
    // A failed discovery is asked again on the next event, not remembered.
    keys.catch(() => (keys = undefined));
    return keys;
  };
  const now = options.now ?? Date.now;
  return {
    async verify(authorization) {
      const token = bearerToken(authorization);
      if (!token) return { ok: false, status: 401, reason: 'no Bearer token' };
      let payload: Record<string, unknown>;
      try {
        const getKey = await keySet();
        ({ payload } = await jwtVerify(token, getKey, {
          algorithms: ALGORITHMS,
          clockTolerance: CLOCK_SKEW_SECONDS,
          currentDate: new Date(now()),
        }));
      } catch (err) {
        const reason = reasonOf(err);
        return { ok: false, status: reason ? 401 : 503, reason: reason ?? 'signing keys unavailable' };
      }
      const claims = checkClaims(payload, config, Math.floor(now() / 1000));
      return claims.ok ? claims : { ...claims, status: 401 };
    },
  };
}

/** A short reason for a refused token (never the token or key material); undefined = keys unavailable. */
function reasonOf(err: unknown): string | undefined {
  if (err instanceof errors.JWTExpired) return 'token expired';
  if (err instanceof errors.JWTClaimValidationFailed) return `token claim ${err.claim} is not valid`;
  if (err instanceof errors.JWKSNoMatchingKey) return 'token signed by an unknown key';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'token signature is not valid';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'token algorithm not allowed';
  if (err instanceof errors.JWTInvalid || err instanceof errors.JWSInvalid) return 'token is malformed';
  return undefined;
}

async function jwksUrl(config: OidcConfig, fetchGuarded: typeof fetch): Promise<string> {
  if (config.jwksUrl) return config.jwksUrl;
  const discovery = `${config.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  const response = await fetchGuarded(discovery, { redirect: 'manual', signal: AbortSignal.timeout(5_000) });
  if (!response.ok) throw new Error(`OIDC discovery answered ${response.status}`);
  const document = (await response.json()) as { jwks_uri?: unknown; issuer?: unknown };
  if (document.issuer !== config.issuer) throw new Error('OIDC discovery names another issuer');
  if (typeof document.jwks_uri !== 'string') throw new Error('OIDC discovery has no jwks_uri');
  return document.jwks_uri;
}

/** fetch that refuses link-local destinations and sends the token file as Bearer where allowed. */
function guardedFetch(tokenFile: string | undefined, tokenAllowed: (url: URL) => boolean): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map(a => a.address);
    if (addresses.some(isLinkLocal)) throw new Error(`${url.host} is link-local; refused`);
    const headers = new Headers(init?.headers);
    if (tokenFile && tokenAllowed(url))
      headers.set('authorization', `Bearer ${(await readFile(tokenFile, 'utf8')).trim()}`);
    return fetch(url, { ...init, headers });
  };
}
