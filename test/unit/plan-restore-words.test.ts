// Restore at bootstrap, word for word where plan-restore.test.ts checks less: a snapshot stored on a
// PVC, an object this operator cannot read back, a Secret lacking one key or both, a snapshot not
// Complete yet, the checksum compared whatever its case, and the Restored condition once formed or
// after a failed restore step. Written against the mutants StrykerJS left alive in
// shared/plan/restore/source.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import {
  fromSnapshot,
  resolveRestore,
  restoreCondition,
  restoreSecretName,
} from '../../shared/plan/restore/source.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const s3 = {
  endpoint: 'http://s3.local:9000',
  bucket: 'b',
  key: 'x/snap.db',
  credentialsSecretRef: { name: 'creds' },
};
const KEYS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];
const SUM = 'ab'.repeat(32);

/** Cluster new (uid u1) restoring at bootstrap from `source`. */
function restoringFrom(source: Record<string, unknown>): EtcdCluster {
  return etcdCluster({ metadata: { name: 'new', uid: 'u1' }, spec: { bootstrap: { restore: { source } } } });
}

function snapshot(
  status: Record<string, unknown> | undefined,
  destination: Record<string, unknown> = { s3: { ...s3, key: 'backups/' } },
): EtcdSnapshot {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: { name: 'nightly', namespace: 'prod' },
    spec: { clusterRef: { name: 'old' }, destination },
    ...(status && { status }),
  };
}
const byRef = (extra: Record<string, unknown> = {}) =>
  restoringFrom({ snapshotRef: { name: 'nightly' }, ...extra });

describe('a snapshotRef', () => {
  it('to a snapshot stored on a PVC: restored from the claim and path it recorded, with its checksum', () => {
    const snap = snapshot(
      {
        phase: 'Complete',
        artifact: { uri: 'pvc://backups/prod/old/nightly.db', checksum: `sha256:${SUM}` },
      },
      { pvc: { claimName: 'backups' } },
    );
    assert.equal(restoreSecretName(byRef(), snap), undefined, 'no Secret needed');
    assert.deepEqual(resolveRestore(byRef(), { snapshot: snap }), {
      kind: 'ready',
      restore: { source: { pvc: { claimName: 'backups', subPath: 'prod/old/nightly.db' }, sha256: SUM } },
      sourceName: 'pvc://backups/prod/old/nightly.db',
    });
  });

  it('to an object this operator cannot read back: blocked, naming it', () => {
    for (const [uri, destination] of [
      ['file:///tmp/nightly.db', undefined],
      ['s3://b/backups/nightly.db', { pvc: { claimName: 'backups' } }],
    ] as const) {
      const snap = snapshot({ phase: 'Complete', artifact: { uri } }, destination);
      assert.deepEqual(resolveRestore(byRef(), { snapshot: snap }), {
        kind: 'blocked',
        reason: 'SnapshotNotFound',
        message: `EtcdSnapshot nightly recorded ${uri}, which this operator cannot read back`,
      });
    }
  });

  it('to a snapshot not taken yet: the restore waits, saying its phase', () => {
    for (const [status, phase] of [
      [undefined, 'Pending'],
      [{ phase: 'Started' }, 'Started'],
      [{ phase: 'Complete' }, 'Complete'],
    ] as const) {
      assert.deepEqual(resolveRestore(byRef(), { snapshot: snapshot(status) }), {
        kind: 'blocked',
        reason: 'SnapshotNotComplete',
        message: `EtcdSnapshot nightly is ${phase}, not Complete; the restore waits for it to complete`,
      });
    }
  });

  it('with source.sha256 in capitals, or without a recorded checksum: the given one is used', () => {
    const recorded = snapshot({
      phase: 'Complete',
      artifact: { uri: 's3://b/backups/nightly.db', checksum: `sha256:${SUM}` },
    });
    const same = resolveRestore(byRef({ sha256: SUM.toUpperCase() }), {
      snapshot: recorded,
      secretKeys: KEYS,
    });
    assert.equal(same?.kind === 'ready' && same.restore.source.sha256, SUM);
    const unrecorded = snapshot({ phase: 'Complete', artifact: { uri: 's3://b/backups/nightly.db' } });
    const given = resolveRestore(byRef({ sha256: 'cd'.repeat(32) }), {
      snapshot: unrecorded,
      secretKeys: KEYS,
    });
    assert.equal(given?.kind === 'ready' && given.restore.source.sha256, 'cd'.repeat(32));
    const none = resolveRestore(byRef(), { snapshot: unrecorded, secretKeys: KEYS });
    assert.deepEqual(none?.kind === 'ready' && none.restore.source, {
      s3: { ...s3, key: 'backups/nightly.db' },
    });
  });
});

describe('the credentials Secret', () => {
  it('lacking both keys: both named, "add them"', () => {
    assert.deepEqual(resolveRestore(restoringFrom({ s3 }), { secretKeys: [] }), {
      kind: 'blocked',
      reason: 'CredentialsMissing',
      message:
        'the Secret prod/creds lacks AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; add them (the restore starts once it has both)',
    });
  });
  it('lacking one: "add it"', () => {
    const r = resolveRestore(restoringFrom({ s3 }), { secretKeys: ['AWS_SECRET_ACCESS_KEY'] });
    assert.equal(
      r?.kind === 'blocked' && r.message,
      'the Secret prod/creds lacks AWS_ACCESS_KEY_ID; add it (the restore starts once it has both)',
    );
  });
  it('not looked up yet (no facts): the source is taken as written', () => {
    assert.deepEqual(resolveRestore(restoringFrom({ s3 }), {}), {
      kind: 'ready',
      restore: { source: { s3 } },
      sourceName: 's3://b/x/snap.db',
    });
  });
});

describe('the Restored condition', () => {
  const c = restoringFrom({ s3 });
  it('True once the cluster formed, naming the source', () => {
    assert.deepEqual(restoreCondition({ cluster: c, clusterID: 'abc' }), {
      type: 'Restored',
      status: 'True',
      reason: 'Restored',
      message: 'the cluster was restored from s3://b/x/snap.db',
    });
  });
  it('a failed etcd restore step: delete the seed Pod to start over; another step: retried', () => {
    const failed = (reason: string) =>
      restoreCondition({ cluster: c, seedFailure: { reason, message: 'boom' } })?.message;
    assert.equal(
      failed('RestoreFailed'),
      'restoring s3://b/x/snap.db failed: boom; no member runs until it succeeds (it is retried with back-off; after a failure of the etcd restore step itself, delete the seed Pod to start over)',
    );
    assert.equal(
      failed('FetchFailed'),
      'restoring s3://b/x/snap.db failed: boom; no member runs until it succeeds (it is retried with back-off)',
    );
  });
  it('a snapshotRef not resolved yet is named as the EtcdSnapshot', () => {
    assert.equal(
      restoreCondition({ cluster: byRef() })?.message,
      'restoring EtcdSnapshot nightly into the seed member',
    );
  });
  it('none for a cluster that does not restore', () => {
    const plain = restoringFrom({ s3 });
    delete plain.spec.bootstrap;
    assert.equal(restoreCondition({ cluster: plain, clusterID: 'abc' }), undefined);
  });
});

describe('which Secret the restore needs, and what it says it restores', () => {
  it('an S3 source names its own Secret; a cluster that does not restore needs none', () => {
    assert.equal(restoreSecretName(restoringFrom({ s3 })), 'creds');
    const plain = restoringFrom({ s3 });
    delete plain.spec.bootstrap;
    assert.equal(restoreSecretName(plain), undefined);
  });
  it('a snapshot still Started waits even when an artifact is already recorded', () => {
    const snap = snapshot({ phase: 'Started', artifact: { uri: 's3://b/backups/nightly.db' } });
    const r = resolveRestore(byRef(), { snapshot: snap, secretKeys: KEYS });
    assert.equal(r?.kind === 'blocked' && r.reason, 'SnapshotNotComplete');
  });
  it('a resolved snapshotRef is named by the object it restores', () => {
    const snap = snapshot({ phase: 'Complete', artifact: { uri: 's3://b/backups/nightly.db' } });
    const resolution = resolveRestore(byRef(), { snapshot: snap, secretKeys: KEYS });
    assert.equal(
      restoreCondition({ cluster: byRef(), ...(resolution && { resolution }) })?.message,
      'restoring s3://b/backups/nightly.db into the seed member',
    );
  });
});

describe('which Secret: the sources that need none', () => {
  it('bootstrap without a restore, a PVC source, or a snapshotRef whose snapshot is not found', () => {
    const empty = restoringFrom({ s3 });
    empty.spec.bootstrap = {};
    assert.equal(restoreSecretName(empty), undefined);
    assert.equal(
      restoreSecretName(restoringFrom({ pvc: { claimName: 'backups', subPath: 'x.db' } })),
      undefined,
    );
    assert.equal(restoreSecretName(byRef(), null), undefined);
    assert.equal(restoreSecretName(byRef()), undefined);
  });
});

describe('a recorded URI is read back only when it is exactly s3://bucket/key or pvc://claim/path', () => {
  for (const uri of ['mys3://b/backups/nightly.db', 's3://b/backups/nightly.db\nfile:///etc/passwd']) {
    it(`${JSON.stringify(uri)}: blocked`, () => {
      const snap = snapshot({ phase: 'Complete', artifact: { uri } });
      const r = resolveRestore(byRef(), { snapshot: snap, secretKeys: KEYS });
      assert.equal(r?.kind === 'blocked' && r.reason, 'SnapshotNotFound');
    });
  }
});

describe('fromSnapshot, shared by the bootstrap and the in-place restore', () => {
  it('answers ready with the recorded object, on S3 or on a PVC', () => {
    const onS3 = snapshot({ phase: 'Complete', artifact: { uri: 's3://b/backups/nightly.db' } });
    assert.deepEqual(fromSnapshot('nightly', 'prod', onS3, undefined), {
      kind: 'ready',
      restore: { source: { s3: { ...s3, key: 'backups/nightly.db' } } },
    });
    const onPvc = snapshot(
      { phase: 'Complete', artifact: { uri: 'pvc://backups/prod/old/nightly.db' } },
      { pvc: { claimName: 'backups' } },
    );
    assert.deepEqual(fromSnapshot('nightly', 'prod', onPvc, SUM), {
      kind: 'ready',
      restore: { source: { pvc: { claimName: 'backups', subPath: 'prod/old/nightly.db' }, sha256: SUM } },
    });
  });
});
