// Turns whatever an etcd call threw into a typed failure the caller can branch on.
//
// etcd3 keeps only the gRPC code's class (GRPCFailedPreconditionError, GRPCUnavailableError, ...)
// and the server's text; the etcd-specific reason lives in the text ("etcdserver: ..."), so the
// match is on those texts, the ones etcd's rpctypes define. Raw @grpc/grpc-js errors (streams are
// not cast by etcd3) carry a numeric `code` instead. Anything unrecognised becomes
// `{ kind: 'error', message }` with the original message: nothing is lost, nothing is guessed.
import {
  ClientClosedError,
  EtcdAuthenticationFailedError,
  EtcdInvalidAuthTokenError,
  EtcdPermissionDeniedError,
  GRPCCancelledError,
  GRPCDeadlineExceededError,
  GRPCUnauthenticatedError,
  GRPCUnavailableError,
} from 'etcd3';

export type EtcdFailure =
  /** Promote refused: the learner has not started or is still catching up with the leader's log. */
  | { kind: 'learner-not-in-sync'; message: string }
  /** Promote refused: the member is already a voter (a repeated promote lands here: it is done). */
  | { kind: 'not-a-learner'; message: string }
  /** Add refused: the cluster already has the maximum number of learners (1 in 3.4 and 3.5). */
  | { kind: 'too-many-learners'; message: string }
  /** No member with that ID (a repeated remove lands here: it is done). */
  | { kind: 'member-not-found'; message: string }
  /**
   * Add refused: a member with that peer URL exists already (a repeated add lands here: adopt it).
   * Also etcd's "member ID already exist", which is what a repeat within the same second gets.
   */
  | { kind: 'peer-url-exists'; message: string }
  /** Strict reconfiguration check: not every voter has been connected for 5 s. Retry in a few seconds. */
  | { kind: 'unhealthy-cluster'; message: string }
  /** Strict reconfiguration check: the change would leave fewer started voters than a quorum needs. */
  | { kind: 'not-enough-started-members'; message: string }
  /** Move leader refused: the target is unknown, a learner or not caught up. */
  | { kind: 'bad-leader-transferee'; message: string }
  /** A leader-only call reached a member that is not (or no longer) the leader. */
  | { kind: 'not-leader'; message: string }
  /** Wrong or missing credentials, or a user without the needed permission. Retrying will not help. */
  | { kind: 'auth-failed'; message: string }
  /**
   * No usable answer: connection refused, timeout, no leader, a leader election, an endpoint that
   * is a learner. Retry later. For a membership change the outcome is unknown (the request may have
   * been applied): read the membership again before deciding, never assume either way.
   */
  | { kind: 'unavailable'; message: string }
  /** Anything else, with etcd's (or the client's) message verbatim. */
  | { kind: 'error'; message: string };

export type FailureKind = EtcdFailure['kind'];
export type FailureOf<K extends FailureKind> = Extract<EtcdFailure, { kind: K }>;

/** Failures every call can end with. */
export type CallFailure = FailureOf<'unavailable' | 'auth-failed' | 'error'>;
export const CALL_FAILURES = ['unavailable', 'auth-failed', 'error'] as const;

/** Thrown by the adapter's own deadline when the client did not give up in time. */
export class EtcdCallTimeoutError extends Error {
  constructor(endpoint: string, ms: number) {
    super(`no answer from ${endpoint} within ${ms} ms`);
    this.name = 'EtcdCallTimeoutError';
  }
}

/** etcd's texts, most specific first (one is a prefix of another). */
const BY_TEXT: readonly (readonly [string, FailureKind])[] = [
  ['can only promote a learner member which is in sync with leader', 'learner-not-in-sync'],
  ['can only promote a learner member', 'not-a-learner'],
  ['too many learner members in cluster', 'too-many-learners'],
  ['member not found', 'member-not-found'],
  ['peer urls already exists', 'peer-url-exists'],
  // etcd derives a new member's ID from its peer URLs and the current second, and checks the ID
  // before the URLs: an add repeated within the same second (a retry) is refused with this text.
  ['member id already exist', 'peer-url-exists'],
  ['unhealthy cluster', 'unhealthy-cluster'],
  ['not enough started members', 'not-enough-started-members'],
  ['bad leader transferee', 'bad-leader-transferee'],
  ['etcdserver: not leader', 'not-leader'],
  ['authentication failed', 'auth-failed'],
  ['user name is empty', 'auth-failed'],
  ['permission denied', 'auth-failed'],
  ['invalid auth token', 'auth-failed'],
  ['etcdserver: no leader', 'unavailable'],
  ['etcdserver: leader changed', 'unavailable'],
  ['etcdserver: request timed out', 'unavailable'],
  ['etcdserver: server stopped', 'unavailable'],
  ['etcdserver: not capable', 'unavailable'],
  ['rpc not supported for learner', 'unavailable'],
];

/** gRPC status codes that mean "no usable answer": CANCELLED, DEADLINE_EXCEEDED, UNAVAILABLE. */
const UNAVAILABLE_CODES = new Set([1, 4, 14]);
const UNAUTHENTICATED_CODES = new Set([7, 16]);

/** Maps a thrown value from an etcd call to a typed failure. Never throws. */
export function classifyEtcdError(err: unknown): EtcdFailure {
  const message = messageOf(err);
  const text = message.toLowerCase();
  const known = BY_TEXT.find(([needle]) => text.includes(needle));
  if (known) return { kind: known[1], message };
  if (
    err instanceof EtcdAuthenticationFailedError ||
    err instanceof EtcdInvalidAuthTokenError ||
    err instanceof EtcdPermissionDeniedError ||
    err instanceof GRPCUnauthenticatedError ||
    UNAUTHENTICATED_CODES.has(codeOf(err))
  ) {
    return { kind: 'auth-failed', message };
  }
  if (
    err instanceof GRPCUnavailableError ||
    err instanceof GRPCDeadlineExceededError ||
    err instanceof GRPCCancelledError ||
    err instanceof ClientClosedError ||
    err instanceof EtcdCallTimeoutError ||
    UNAVAILABLE_CODES.has(codeOf(err)) ||
    isBrokenCircuit(err)
  ) {
    return { kind: 'unavailable', message };
  }
  return { kind: 'error', message };
}

/**
 * Keeps a failure whose kind the operation's result type lists; any other kind becomes a generic
 * `error` with the same message, so a result never claims a kind its operation cannot produce.
 */
export function narrowFailure<K extends FailureKind>(
  failure: EtcdFailure,
  kinds: readonly K[],
): FailureOf<K> | FailureOf<'error'> {
  if ((kinds as readonly FailureKind[]).includes(failure.kind)) return failure as FailureOf<K>;
  return { kind: 'error', message: failure.message };
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return typeof err === 'string' ? err : (JSON.stringify(err) ?? String(err));
}

function codeOf(err: unknown): number {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : -1;
}

function isBrokenCircuit(err: unknown): boolean {
  return err instanceof Error && /circuit breaker is open/i.test(err.message);
}
