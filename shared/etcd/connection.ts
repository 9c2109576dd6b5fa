// How the adapter talks to etcd: one short-lived etcd3 client per endpoint and call, with no
// retries, no circuit breaker and a deadline on every call.
//
// - etcd3's default fault handling retries "recoverable" errors (UNAVAILABLE, DEADLINE_EXCEEDED,
//   ...) three times on another host and opens a per-host circuit breaker after one UNAVAILABLE.
//   Both are replaced by cockatiel's `noop`: a membership change is sent once, and every failure
//   reaches the caller as it happened.
// - etcd3 ignores `dialTimeout`, so each unary call gets a gRPC deadline, and the adapter races the
//   whole call (including authentication) against its own timer as well, then closes the client,
//   which cancels whatever is still in flight.
// - A client built with several hosts picks one at random per call; member-local calls (status,
//   snapshot, move-leader) need a known member, so every client here has exactly one host.
import { Etcd3 } from 'etcd3';
import type { IOptions } from 'etcd3';
import { noop } from 'cockatiel';
import { CALL_FAILURES, EtcdCallTimeoutError, classifyEtcdError, narrowFailure } from './errors.ts';
import type { CallFailure, EtcdFailure } from './errors.ts';

/** Client TLS: the CA that signed etcd's serving certificate, plus a client certificate for mTLS. */
export interface EtcdTlsOptions {
  ca: Buffer;
  cert?: Buffer;
  key?: Buffer;
  /** Name to verify the serving certificate against when it differs from the endpoint's host. */
  serverName?: string;
}

export interface EtcdAuthOptions {
  username: string;
  password: string;
}

export interface EtcdConnectionOptions {
  /** Endpoints must then be https:// URLs. */
  tls?: EtcdTlsOptions;
  auth?: EtcdAuthOptions;
  /** Deadline of each call, in milliseconds (default 5000). */
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 5_000;
/** Extra time the adapter's own timer gives gRPC's deadline before it gives up itself. */
const TIMER_GRACE_MS = 1_000;

/** A single-host etcd3 client with fault handling switched off and per-call deadlines. */
export function createClient(endpoint: string, options: EtcdConnectionOptions = {}): Etcd3 {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const config: IOptions = {
    hosts: endpoint,
    faultHandling: { global: noop, host: () => noop },
    defaultCallOptions: context => (context.isStream ? {} : { deadline: Date.now() + timeoutMs }),
  };
  if (options.auth) config.auth = { username: options.auth.username, password: options.auth.password };
  if (options.tls) {
    config.credentials = {
      rootCertificate: options.tls.ca,
      ...(options.tls.key ? { privateKey: options.tls.key } : {}),
      ...(options.tls.cert ? { certChain: options.tls.cert } : {}),
    };
    if (options.tls.serverName) {
      config.grpcOptions = {
        'grpc.ssl_target_name_override': options.tls.serverName,
        'grpc.default_authority': options.tls.serverName,
      };
    }
  }
  return new Etcd3(config);
}

/** Rejects with EtcdCallTimeoutError when `promise` has not settled within `ms`; clears its timer. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, endpoint: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EtcdCallTimeoutError(endpoint, ms)), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

export type Attempt<T> = { kind: 'ok'; value: T; endpoint: string } | EtcdFailure;

/**
 * etcd's ErrAuthOldRevision: the auth store changed (a user, role or password) between the login
 * and the call, or the member that took the call had not applied the change yet. etcd refused the
 * call without applying it; etcd's own Go client logs in again and retries, and so does
 * `callEndpoint` (etcd3 for Node does not).
 */
export const isAuthOldRevision = (message: string): boolean =>
  message.includes('revision of auth store is old');

/**
 * Runs one call against one endpoint with a fresh client; never throws, failures are classified.
 * A call refused for an old auth revision is made once more with a new client (a new login).
 */
export async function callEndpoint<T>(
  endpoint: string,
  options: EtcdConnectionOptions,
  call: (client: Etcd3) => Promise<T>,
): Promise<Attempt<T>> {
  const first = await callOnce(endpoint, options, call);
  if (first.kind === 'ok' || !options.auth || !isAuthOldRevision(first.message)) return first;
  return callOnce(endpoint, options, call);
}

async function callOnce<T>(
  endpoint: string,
  options: EtcdConnectionOptions,
  call: (client: Etcd3) => Promise<T>,
): Promise<Attempt<T>> {
  const client = createClient(endpoint, options);
  const ms = (options.timeoutMs ?? DEFAULT_TIMEOUT_MS) + TIMER_GRACE_MS;
  try {
    return { kind: 'ok', value: await withTimeout(call(client), ms, endpoint), endpoint };
  } catch (err) {
    return classifyEtcdError(err);
  } finally {
    client.close();
  }
}

/**
 * Runs an idempotent call against the endpoints in order until one answers. Only `unavailable`
 * moves on to the next endpoint; any other failure is the cluster's answer and is returned as is.
 */
export async function callFirstAvailable<T>(
  endpoints: readonly string[],
  options: EtcdConnectionOptions,
  call: (client: Etcd3) => Promise<T>,
): Promise<Attempt<T>> {
  if (endpoints.length === 0) return { kind: 'error', message: 'no etcd endpoints given' };
  const unavailable: string[] = [];
  for (const endpoint of endpoints) {
    const result = await callEndpoint(endpoint, options, call);
    if (result.kind !== 'unavailable') return result;
    unavailable.push(`${endpoint}: ${result.message}`);
  }
  return { kind: 'unavailable', message: unavailable.join('; ') };
}

/** A failure reduced to the kinds every call may end with. */
export function callFailure(failure: EtcdFailure): CallFailure {
  return narrowFailure(failure, CALL_FAILURES);
}

/** URLs compare without a trailing slash (etcd keeps URLs as given). */
export function sameURL(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}
