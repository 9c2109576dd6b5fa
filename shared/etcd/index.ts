/**
 * The etcd adapter: membership, status, leadership and snapshots over etcd3, with every outcome a
 * typed result and no exception for the caller to parse.
 *
 * Choices, and why:
 * - Results, not exceptions. Each operation returns a discriminated union (`kind`) listing exactly
 *   the outcomes it can have, mapped from etcd's own error texts, so the pure `plan()` can branch
 *   on them. An unrecognised failure is `{ kind: 'error', message }` with the message verbatim.
 * - IDs are 16-digit lowercase hex strings everywhere (etcd3 speaks decimal; see ids.ts).
 * - No automatic retries. etcd3 by default retries UNAVAILABLE and DEADLINE_EXCEEDED on another
 *   host; for memberAdd that is harmful: if the first reply was lost, the retry is refused with
 *   "Peer URLs already exists" (or, had it gone through, a second learner would be made). Here a
 *   change is sent once; waiting and trying again belongs to the caller, whose state is in status.
 * - Repeats are detectable, so a crash between two steps converges: "Peer URLs already exists"
 *   means adopt the existing member (returned with the outcome), and so does "member ID already
 *   exist", which a repeat within the same second gets (etcd derives the ID from the peer URLs and
 *   the time in seconds); "can only promote a learner member" after a promote means it is a voter
 *   already; "member not found" after a remove means it is gone.
 * - `unavailable` on a membership change means the outcome is unknown: read the membership again.
 * - One client per endpoint and call. etcd3 picks a random host per call from a pool, and its
 *   circuit breaker blocks a host for 5 s after an error; status, snapshot and move-leader must
 *   reach a given member, and a fresh client per call has no breaker state to trip over.
 * - A deadline on every call (etcd3 ignores dialTimeout), backed by the adapter's own timer.
 * - Leadership is moved by asking the leader itself (etcd serves MoveLeader only there).
 * - Defragmentation gets a long deadline of its own: it rewrites the whole database file.
 */
export * from './adapter.ts';
export * from './auth.ts';
export * from './connection.ts';
export * from './errors.ts';
export * from './ids.ts';
export * from './leader.ts';
export * from './members.ts';
export * from './snapshot.ts';
export * from './status.ts';
export * from './maintenance.ts';
export * from './downgrade.ts';
