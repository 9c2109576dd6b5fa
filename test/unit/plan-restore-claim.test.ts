// A restore whose source is a PVC that does not exist: blocked before any member is created (at
// bootstrap) or before the running members are stopped (in place), with the claim named, rather
// than a seed Pod that never starts or a stopped cluster with nothing to restore.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster, EtcdClusterSpec } from '../../shared/api/etcd-cluster.ts';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { resolveInPlace } from '../../shared/plan/restore/in-place.ts';
import { claimBlock, resolveRestore, restoreClaimName } from '../../shared/plan/restore/source.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const s3 = {
  endpoint: 'http://s3.local:9000',
  bucket: 'b',
  key: 'k.db',
  credentialsSecretRef: { name: 'creds' },
};
const KEYS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];
const SUM = 'cd'.repeat(32);

/** Cluster new (uid u1) with `spec` on top of the defaults. */
const clusterNew = (spec: Partial<EtcdClusterSpec>): EtcdCluster =>
  etcdCluster({ metadata: { name: 'new', uid: 'u1' }, spec });
const restoring = (source: Record<string, unknown>) => clusterNew({ bootstrap: { restore: { source } } });

const onPvc: EtcdSnapshot = {
  apiVersion: 'etcdfn.io/v1alpha1',
  kind: 'EtcdSnapshot',
  metadata: { name: 'nightly', namespace: 'prod' },
  spec: { clusterRef: { name: 'old' }, destination: { pvc: { claimName: 'backups' } } },
  status: {
    phase: 'Complete',
    artifact: { uri: 'pvc://backups/prod/old/nightly.db', checksum: `sha256:${SUM}` },
  },
};
const onS3: EtcdSnapshot = {
  ...onPvc,
  spec: { clusterRef: { name: 'old' }, destination: { s3: { ...s3, key: 'x/' } } },
  status: { phase: 'Complete', artifact: { uri: 's3://b/x/nightly.db' } },
};

describe('restoreClaimName: the claim observe must look up', () => {
  const rows: [string, Record<string, unknown>, EtcdSnapshot | null | undefined, string | undefined][] = [
    ['source.pvc', { pvc: { claimName: 'backups', subPath: 'a.db' } }, undefined, 'backups'],
    ['source.s3', { s3 }, undefined, undefined],
    ['a snapshotRef stored on a PVC', { snapshotRef: { name: 'nightly' } }, onPvc, 'backups'],
    ['a snapshotRef stored in S3', { snapshotRef: { name: 'nightly' } }, onS3, undefined],
    ['a snapshotRef not found', { snapshotRef: { name: 'nightly' } }, null, undefined],
  ];
  it('no source at all (not a restoring cluster): none', () => {
    assert.equal(restoreClaimName(undefined, undefined), undefined);
  });
  for (const [what, source, snapshot, claim] of rows) {
    it(`${what}: ${claim ?? 'none'}`, () => {
      assert.equal(restoreClaimName(restoring(source).spec.bootstrap?.restore?.source, snapshot), claim);
    });
  }
});

describe('restore at bootstrap from a PVC', () => {
  const source = { pvc: { claimName: 'backups', subPath: 'etcd/a.db' } };
  it('claim missing: blocked ClaimNotFound, naming the claim and the file, and what to do', () => {
    assert.deepEqual(resolveRestore(restoring(source), { claimFound: false }), {
      kind: 'blocked',
      reason: 'ClaimNotFound',
      message:
        'the PersistentVolumeClaim prod/backups holding pvc://backups/etcd/a.db does not exist; create it (or fix the claim name) and the restore starts at the next reconcile',
    });
  });
  it('claim present, or not asked: ready', () => {
    for (const claimFound of [true, undefined]) {
      const r = resolveRestore(restoring(source), { claimFound });
      assert.equal(r?.kind, 'ready', String(claimFound));
    }
  });
  it('a snapshotRef stored on a PVC whose claim is gone: blocked on the recorded claim', () => {
    const r = resolveRestore(restoring({ snapshotRef: { name: 'nightly' } }), {
      snapshot: onPvc,
      claimFound: false,
    });
    assert.equal(r?.kind === 'blocked' && r.reason, 'ClaimNotFound');
    assert.match(
      r?.kind === 'blocked' ? r.message : '',
      /prod\/backups holding pvc:\/\/backups\/prod\/old\/nightly\.db/,
    );
  });
  it('an S3 source is never blocked by a claim', () => {
    assert.equal(claimBlock({ source: { s3 } }, 'prod', false), undefined);
    assert.equal(resolveRestore(restoring({ s3 }), { secretKeys: KEYS, claimFound: false })?.kind, 'ready');
  });
  it('a missing Secret is reported before a missing claim (S3 first, then the claim)', () => {
    const r = resolveRestore(restoring({ s3 }), { secretKeys: null, claimFound: false });
    assert.equal(r?.kind === 'blocked' && r.reason, 'SecretNotFound');
  });
});

describe('in-place restore from a snapshot on a PVC', () => {
  const c = clusterNew({ inPlaceRestore: { requestID: 'r1', snapshotRef: { name: 'nightly' } } });
  it('claim gone: blocked before anything is stopped (ClaimNotFound)', () => {
    const r = resolveInPlace(c, { snapshot: onPvc, claimFound: false });
    assert.equal(r.kind === 'blocked' && r.reason, 'ClaimNotFound');
    assert.match(
      r.kind === 'blocked' ? r.message : '',
      /PersistentVolumeClaim prod\/backups .* does not exist; create it/,
    );
  });
  it('claim present: ready, from the recorded file', () => {
    const r = resolveInPlace(c, { snapshot: onPvc, claimFound: true });
    assert.equal(r.kind, 'ready');
    assert.deepEqual(r.kind === 'ready' && r.restore.source.pvc, {
      claimName: 'backups',
      subPath: 'prod/old/nightly.db',
    });
  });
});
