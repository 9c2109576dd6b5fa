// The restore's layout in the data volume and the words its steps fail with
// (shared/restore/layout.ts): the paths the Pod builder, the agent and the status share, and a
// step's termination message read back into a reason (what status.restore shows).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DATA_DIR } from '../../shared/names.ts';
import {
  COMMIT_CONTAINER,
  FETCH_CONTAINER,
  POD_RESTORE_PATHS,
  RESTORE_CONTAINER,
  RESTORE_CONTAINERS,
  RestoreFailure,
  failureMessage,
  parseFailure,
  restorePaths,
  type RestoreFailureReason,
} from '../../shared/restore/layout.ts';

const REASONS: RestoreFailureReason[] = [
  'SecretNotFound',
  'CredentialsMissing',
  'AccessDenied',
  'SnapshotNotFound',
  'PathOutsideVolume',
  'StoreUnreachable',
  'EndpointRefused',
  'ChecksumMismatch',
  'SnapshotTooNew',
  'InsufficientSpace',
  'SnapshotTruncated',
  'SnapshotCorrupt',
  'RestoreFailed',
];

describe('the restore layout', () => {
  it('every file under the data directory, the work in .etcdfn-restore, the marker beside it', () => {
    assert.deepEqual(restorePaths('/data'), {
      dataDir: '/data',
      workDir: '/data/.etcdfn-restore',
      snapshotFile: '/data/.etcdfn-restore/snapshot.db',
      restoredDir: '/data/.etcdfn-restore/data',
      skipFile: '/data/.etcdfn-restore/skip',
      marker: '/data/.etcdfn-restored',
    });
    assert.deepEqual(POD_RESTORE_PATHS, restorePaths(DATA_DIR));
  });

  it('the init containers run fetch, restore, commit, in that order', () => {
    assert.deepEqual(RESTORE_CONTAINERS, ['restore-fetch', 'restore', 'restore-commit']);
    assert.deepEqual([FETCH_CONTAINER, RESTORE_CONTAINER, COMMIT_CONTAINER], RESTORE_CONTAINERS);
  });
});

describe("a restore step's failure, written and read back", () => {
  it('every reason survives its termination message', () => {
    for (const reason of REASONS) {
      const failure = new RestoreFailure(reason, `the ${reason} case`);
      assert.ok(failure instanceof Error);
      assert.equal(failure.reason, reason);
      assert.equal(failure.message, `the ${reason} case`);
      const text = failureMessage(failure);
      assert.equal(text, `${reason}: the ${reason} case`);
      assert.deepEqual(parseFailure(text), { reason, message: `the ${reason} case` });
    }
  });

  it('the message may span lines; the space around it and around the text is dropped', () => {
    assert.deepEqual(parseFailure('\n  AccessDenied:   no read on\nbucket b  \n'), {
      reason: 'AccessDenied',
      message: 'no read on\nbucket b',
    });
  });

  it('a first word that is no reason, or not first, is RestoreFailed with the text', () => {
    assert.deepEqual(parseFailure('Killed: 9'), { reason: 'RestoreFailed', message: 'Killed: 9' });
    assert.deepEqual(parseFailure('etcdutl: AccessDenied: x'), {
      reason: 'RestoreFailed',
      message: 'etcdutl: AccessDenied: x',
    });
    assert.deepEqual(parseFailure('fetch said AccessDenied: x'), {
      reason: 'RestoreFailed',
      message: 'fetch said AccessDenied: x',
    });
    assert.deepEqual(parseFailure('AccessDenied:x'), { reason: 'RestoreFailed', message: 'AccessDenied:x' });
  });

  it("etcd's integrity check failing is SnapshotCorrupt, in either of its words, in any case", () => {
    const corrupt = {
      reason: 'SnapshotCorrupt',
      message:
        "the snapshot fails etcd's own integrity check (the hash stored in the file does not match its content): " +
        'it is damaged or truncated; restore from another snapshot',
    };
    assert.deepEqual(parseFailure('{"level":"fatal","msg":"expected sha256 [1 2], got [3 4]"}'), corrupt);
    assert.deepEqual(parseFailure('Error: snapshot file integrity check failed'), corrupt);
    assert.deepEqual(parseFailure('EXPECTED SHA256 mismatch'), corrupt);
  });

  it("anything else: the log's last three lines, on one line, at most 600 characters", () => {
    assert.deepEqual(parseFailure('one\ntwo\nthree\nfour\n'), {
      reason: 'RestoreFailed',
      message: 'two three four',
    });
    const long = parseFailure(`start\n${'x'.repeat(700)}`);
    assert.equal(long.reason, 'RestoreFailed');
    assert.equal(long.message, `start ${'x'.repeat(594)}`);
  });
});
