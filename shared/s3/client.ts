// The one way etcdfn makes an S3 client: the endpoint policy checked on the endpoint as written
// (createS3Client throws for a refused one, whoever calls it), and checked again on every DNS answer
// the client's connections use, so a name that resolves to a metadata service (or, unless
// allow-listed, to loopback) is never contacted.
//
// The S3 SDK is loaded here, on first use only (import()), never by a static import: a function
// whose event does not talk to S3 (most run-snapshot events, every reconciler) starts without
// paying for it. Everything else in etcdfn takes the SDK's values from loadS3Sdk().
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type * as ClientS3 from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import type * as LibStorage from '@aws-sdk/lib-storage';
import {
  checkEndpoint,
  DENIED_RANGES_ENV,
  parseRanges,
  type AddressRange,
  type AllowedEndpoint,
  type EndpointVerdict,
} from './endpoint-policy.ts';

/** The cluster's own ranges, from the operator's configuration (read once). */
let deniedRanges: readonly AddressRange[] | undefined;
function denied(): readonly AddressRange[] {
  deniedRanges ??= parseRanges(process.env[DENIED_RANGES_ENV]).ranges;
  return deniedRanges;
}
import type { S3Credentials, S3Target } from './location.ts';

export type RefusedEndpoint = Extract<EndpointVerdict, { allowed: false }>;

/** Thrown by createS3Client for an endpoint the policy refuses as written: nothing was contacted. */
export class EndpointRefusedError extends Error {
  readonly code: RefusedEndpoint['reason'];
  readonly verdict: RefusedEndpoint;
  constructor(verdict: RefusedEndpoint) {
    super(verdict.message);
    this.name = 'EndpointRefused';
    this.code = verdict.reason;
    this.verdict = verdict;
  }
}

/** Resolves the endpoint's host and applies the policy: the verdict status can show. */
export async function endpointVerdict(
  endpoint: string,
  allowList: readonly AllowedEndpoint[],
): Promise<EndpointVerdict> {
  const literal = checkEndpoint(endpoint, allowList, [], denied());
  if (!literal.allowed) return literal;
  // Allowed as written, so it is a URL (checkEndpoint refuses any other as EndpointInvalid).
  const host = new URL(endpoint).hostname;
  const addresses = await new Promise<string[]>(resolve => {
    dnsLookup(host.replace(/^\[|\]$/g, ''), { all: true }, (err, found) =>
      resolve(err ? [] : found.map(a => a.address)),
    );
  });
  return checkEndpoint(endpoint, allowList, addresses, denied());
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A DNS lookup for the client's sockets that refuses the addresses the policy refuses. */
function guardedLookup(endpoint: string, allowList: readonly AllowedEndpoint[]) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, found) => {
      if (err) return callback(err, '');
      const verdict = checkEndpoint(
        endpoint,
        allowList,
        found.map(a => a.address),
        denied(),
      );
      if (!verdict.allowed) {
        const refused: NodeJS.ErrnoException = new Error(verdict.message);
        refused.code = verdict.reason;
        return callback(refused, '');
      }
      if (options.all) return callback(null, found);
      const first = found[0];
      if (!first)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}

export type S3Sdk = typeof ClientS3;
let sdk: Promise<S3Sdk> | undefined;

/**
 * The exports of a CommonJS package loaded with import(): Node gives them as named exports, while
 * the bundle (esbuild, dist/) gives module.exports as the default export only. `probe` is an export
 * the package must have.
 */
export function commonJsExports<T extends object>(loaded: T, probe: keyof T & string): T {
  const fallback = (loaded as { default?: T }).default;
  return loaded[probe] === undefined && fallback?.[probe] !== undefined ? fallback : loaded;
}

/** @aws-sdk/client-s3, imported the first time etcdfn talks to S3. */
export function loadS3Sdk(): Promise<S3Sdk> {
  return (sdk ??= import('@aws-sdk/client-s3').then(m => commonJsExports(m, 'S3Client')));
}

/** @aws-sdk/lib-storage (multipart uploads), imported the first time a snapshot is uploaded. */
export function loadS3Upload(): Promise<typeof LibStorage> {
  return import('@aws-sdk/lib-storage').then(m => commonJsExports(m, 'Upload'));
}

export async function createS3Client(
  target: S3Target,
  credentials: S3Credentials,
  allowList: readonly AllowedEndpoint[],
): Promise<S3Client> {
  // The endpoint as written, for every caller: Node connects to an IP address without a lookup, so
  // guardedLookup alone would never see http://169.254.169.254/.
  const literal = checkEndpoint(target.endpoint, allowList, [], denied());
  if (!literal.allowed) throw new EndpointRefusedError(literal);
  const { S3Client } = await loadS3Sdk();
  const lookup = guardedLookup(target.endpoint, allowList);
  return new S3Client({
    endpoint: target.endpoint,
    region: target.region,
    forcePathStyle: target.forcePathStyle,
    credentials,
    requestHandler: {
      httpAgent: new HttpAgent({ lookup, keepAlive: true }),
      httpsAgent: new HttpsAgent({ lookup, keepAlive: true }),
    },
    // Checksums only where S3 requires them: several S3-compatible stores (older MinIO, Ceph RGW,
    // s3rver) refuse the aws-chunked encoding the SDK uses for its default CRC32 checksums.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // A failed attempt is retried by the caller with its state in status, not hidden in here.
    maxAttempts: 2,
  });
}
