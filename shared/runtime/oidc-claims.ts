// Who may send events to a function when Knative Eventing's OIDC is on: the configuration (from the
// function's env) and the check of a token's claims once its signature is known good. Pure,
// table-tested; oidc-verifier.ts fetches the keys and checks the signature. Knative Serving does not
// verify the Broker's Bearer token, so the function does (docs/security.md).

export const OIDC_ISSUER_ENV = 'ETCDFN_OIDC_ISSUER';
export const OIDC_AUDIENCE_ENV = 'ETCDFN_OIDC_AUDIENCE';
export const OIDC_SUBJECTS_ENV = 'ETCDFN_OIDC_SUBJECTS';
/** Optional: the JWKS URL, when the issuer's discovery document should not be asked for it. */
export const OIDC_JWKS_URL_ENV = 'ETCDFN_OIDC_JWKS_URL';

export interface OidcConfig {
  /** The API server's service-account issuer; `iss` must equal it. */
  issuer: string;
  /** The Trigger's spec.subscriber.audience; `aud` must contain it. */
  audience: string;
  /** The Triggers' OIDC service accounts, as `system:serviceaccount:<ns>:<name>`; `sub` must be one. */
  subjects: string[];
  jwksUrl?: string;
}

/** No issuer set = the feature is off (undefined); a partial setting is an error, not "off". */
export function oidcConfigFromEnv(env: NodeJS.ProcessEnv): OidcConfig | undefined {
  const issuer = env[OIDC_ISSUER_ENV]?.trim() ?? '';
  const audience = env[OIDC_AUDIENCE_ENV]?.trim() ?? '';
  const subjects = (env[OIDC_SUBJECTS_ENV] ?? '').split(/[\s,]+/).filter(Boolean);
  const jwksUrl = env[OIDC_JWKS_URL_ENV]?.trim() || undefined;
  if (!issuer && !audience && subjects.length === 0) return undefined;
  const missing = [
    [OIDC_ISSUER_ENV, issuer],
    [OIDC_AUDIENCE_ENV, audience],
    [OIDC_SUBJECTS_ENV, subjects.join()],
  ].filter(([, value]) => !value);
  if (missing.length > 0)
    throw new Error(
      `sender authentication is half configured: set ${missing.map(([name]) => name).join(' and ')} too, or none of ${OIDC_ISSUER_ENV}, ${OIDC_AUDIENCE_ENV}, ${OIDC_SUBJECTS_ENV}`,
    );
  for (const subject of subjects)
    if (!/^system:serviceaccount:[^:]+:[^:]+$/.test(subject))
      throw new Error(`${OIDC_SUBJECTS_ENV}: ${subject} is not system:serviceaccount:<namespace>:<name>`);
  return { issuer, audience, subjects, ...(jwksUrl ? { jwksUrl } : {}) };
}

export type ClaimsVerdict = { ok: true } | { ok: false; reason: string };

/** Tolerance for clocks that differ between the API server and the function. */
export const CLOCK_SKEW_SECONDS = 60;

/** The verdict on a signature-checked token's claims at `nowSeconds` (seconds since the epoch). */
export function checkClaims(
  claims: Record<string, unknown>,
  config: OidcConfig,
  nowSeconds: number,
): ClaimsVerdict {
  if (claims.iss !== config.issuer) return { ok: false, reason: 'token issuer is not the configured issuer' };
  const aud = claims.aud;
  const audiences = Array.isArray(aud) ? aud : [aud];
  if (!audiences.includes(config.audience))
    return { ok: false, reason: 'token audience is not this function' };
  if (typeof claims.exp !== 'number') return { ok: false, reason: 'token has no expiry' };
  if (claims.exp + CLOCK_SKEW_SECONDS <= nowSeconds) return { ok: false, reason: 'token expired' };
  if (
    claims.nbf !== undefined &&
    (typeof claims.nbf !== 'number' || claims.nbf - CLOCK_SKEW_SECONDS > nowSeconds)
  )
    return { ok: false, reason: 'token not valid yet' };
  if (typeof claims.sub !== 'string' || !config.subjects.includes(claims.sub))
    return { ok: false, reason: 'token subject is not an allowed sender' };
  return { ok: true };
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+([A-Za-z0-9\-_.]+)[ \t]*$/i.exec(header ?? '');
  return match?.[1];
}
