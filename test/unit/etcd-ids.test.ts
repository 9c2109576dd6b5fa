// Member ID conversions and the mapping from etcd's errors to typed failures.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ClientClosedError,
  EtcdAuthenticationFailedError,
  EtcdPermissionDeniedError,
  GRPCDeadlineExceededError,
  GRPCFailedPreconditionError,
  GRPCGenericError,
  GRPCInvalidArgumentError,
  GRPCNotFoundError,
  GRPCUnavailableError,
} from 'etcd3';
import {
  EtcdCallTimeoutError,
  classifyEtcdError,
  isHexId,
  narrowFailure,
  normalizeHexId,
  toDecimalId,
  toHexId,
} from '../../shared/etcd/index.ts';
import type { FailureKind } from '../../shared/etcd/index.ts';

describe('etcd member IDs', () => {
  const pairs: [decimal: string, hex: string][] = [
    ['13132894526348970158', 'b64169fd9bb3c8ae'],
    ['7823589549539934362', '6c92f93e80c9409a'],
    ['1', '0000000000000001'],
    ['0', '0000000000000000'],
    ['18446744073709551615', 'ffffffffffffffff'],
    ['794066984781732858', '0b0517b72bc7dbfa'],
  ];

  it('converts decimal (etcd3) to 16-digit lowercase hex and back', () => {
    for (const [decimal, hex] of pairs) {
      assert.equal(toHexId(decimal), hex);
      assert.equal(toDecimalId(hex), decimal);
      assert.ok(isHexId(hex));
    }
  });

  it('accepts bigint and hex without padding or in upper case (as etcdctl prints it)', () => {
    assert.equal(toHexId(0xb64169fd9bb3c8aen), 'b64169fd9bb3c8ae');
    assert.equal(toDecimalId('B64169FD9BB3C8AE'), '13132894526348970158');
    assert.equal(toDecimalId('b0517b72bc7dbfa'), '794066984781732858');
    assert.equal(normalizeHexId('B0517B72BC7DBFA'), '0b0517b72bc7dbfa');
  });

  it('never loses precision the way Number would', () => {
    const id = '13132894526348970159';
    assert.notEqual(String(Number(id)), id);
    assert.equal(toDecimalId(toHexId(id)), id);
  });

  it('rejects what is not a uint64 in the expected form', () => {
    for (const bad of ['', '-1', '12a', ' 1', '18446744073709551616', '1.5', '0x10']) {
      assert.throws(() => toHexId(bad), /etcd member ID/, bad);
    }
    assert.throws(() => toHexId(-1n), /out of uint64 range/);
    for (const bad of ['', 'xyz', '0x10', '1ffffffffffffffff', '12 34']) {
      assert.throws(() => toDecimalId(bad), /not a hex etcd member ID/, bad);
    }
    assert.equal(isHexId('B64169FD9BB3C8AE'), false);
    assert.equal(isHexId('b0517b72bc7dbfa'), false);
  });
});

describe('classifyEtcdError', () => {
  // The exact texts etcd 3.4/3.5 send (as etcd3 1.1.2 delivers them), with the outcome each maps to.
  const table: [error: unknown, kind: FailureKind][] = [
    [
      new GRPCFailedPreconditionError(
        '9 FAILED_PRECONDITION: etcdserver: can only promote a learner member which is in sync with leader',
      ),
      'learner-not-in-sync',
    ],
    [
      new GRPCFailedPreconditionError('9 FAILED_PRECONDITION: etcdserver: can only promote a learner member'),
      'not-a-learner',
    ],
    [
      new GRPCFailedPreconditionError(
        '9 FAILED_PRECONDITION: etcdserver: too many learner members in cluster',
      ),
      'too-many-learners',
    ],
    [
      new GRPCFailedPreconditionError('9 FAILED_PRECONDITION: etcdserver: Peer URLs already exists'),
      'peer-url-exists',
    ],
    [new GRPCNotFoundError('5 NOT_FOUND: etcdserver: member not found'), 'member-not-found'],
    [new GRPCUnavailableError('14 UNAVAILABLE: etcdserver: unhealthy cluster'), 'unhealthy-cluster'],
    [
      new GRPCFailedPreconditionError(
        '9 FAILED_PRECONDITION: etcdserver: re-configuration failed due to not enough started members',
      ),
      'not-enough-started-members',
    ],
    [
      new GRPCFailedPreconditionError('9 FAILED_PRECONDITION: etcdserver: bad leader transferee'),
      'bad-leader-transferee',
    ],
    [new GRPCFailedPreconditionError('9 FAILED_PRECONDITION: etcdserver: not leader'), 'not-leader'],
    [
      new EtcdAuthenticationFailedError(
        '3 INVALID_ARGUMENT: etcdserver: authentication failed, invalid user ID or password',
      ),
      'auth-failed',
    ],
    [new GRPCInvalidArgumentError('3 INVALID_ARGUMENT: etcdserver: user name is empty'), 'auth-failed'],
    [new EtcdPermissionDeniedError('7 PERMISSION_DENIED: etcdserver: permission denied'), 'auth-failed'],
    [new GRPCUnavailableError('14 UNAVAILABLE: etcdserver: rpc not supported for learner'), 'unavailable'],
    [new GRPCUnavailableError('14 UNAVAILABLE: etcdserver: no leader'), 'unavailable'],
    [new GRPCUnavailableError('14 UNAVAILABLE: etcdserver: request timed out'), 'unavailable'],
    [new GRPCUnavailableError('14 UNAVAILABLE: etcdserver: leader changed'), 'unavailable'],
    [
      new GRPCUnavailableError(
        '14 UNAVAILABLE: No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1.',
      ),
      'unavailable',
    ],
    [new GRPCDeadlineExceededError('4 DEADLINE_EXCEEDED: Deadline exceeded'), 'unavailable'],
    [new ClientClosedError('Maintenance'), 'unavailable'],
    [new EtcdCallTimeoutError('http://127.0.0.1:2379', 6000), 'unavailable'],
    [new Error('Execution prevented because the circuit breaker is open'), 'unavailable'],
    // Raw @grpc/grpc-js errors (snapshot streams are not cast by etcd3): the code decides.
    [Object.assign(new Error('14 UNAVAILABLE: Connection dropped'), { code: 14 }), 'unavailable'],
    [Object.assign(new Error('16 UNAUTHENTICATED: bad token'), { code: 16 }), 'auth-failed'],
    // A member's ID is derived from its peer URLs and the second it was added: a quick repeat collides.
    [
      new GRPCFailedPreconditionError('9 FAILED_PRECONDITION: etcdserver: member ID already exist'),
      'peer-url-exists',
    ],
    [new GRPCGenericError('etcdserver: mvcc: database space exceeded'), 'error'],
    [new TypeError('Cannot read properties of undefined'), 'error'],
    ['a thrown string', 'error'],
    [{ weird: true }, 'error'],
  ];

  for (const [error, kind] of table) {
    const message = error instanceof Error ? error.message : JSON.stringify(error);
    it(`${kind} ← ${message}`, () => {
      const failure = classifyEtcdError(error);
      assert.equal(failure.kind, kind);
      assert.ok(failure.message.length > 0);
      if (error instanceof Error) assert.equal(failure.message, error.message);
    });
  }

  it('keeps the message of an unknown error verbatim', () => {
    assert.deepEqual(classifyEtcdError(new Error('something new')), {
      kind: 'error',
      message: 'something new',
    });
    assert.deepEqual(classifyEtcdError('plain'), { kind: 'error', message: 'plain' });
  });
});

describe('narrowFailure', () => {
  it('keeps a kind the operation lists', () => {
    const failure = { kind: 'too-many-learners', message: 'm' } as const;
    assert.deepEqual(narrowFailure(failure, ['too-many-learners', 'unavailable']), failure);
  });

  it('turns a kind the operation cannot produce into a generic error with the same message', () => {
    const failure = { kind: 'not-leader', message: 'etcdserver: not leader' } as const;
    assert.deepEqual(narrowFailure(failure, ['member-not-found']), {
      kind: 'error',
      message: 'etcdserver: not leader',
    });
  });
});
