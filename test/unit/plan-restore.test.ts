// Restore at bootstrap, the pure decisions: a snapshotRef resolved to the object and checksum its
// EtcdSnapshot recorded, what blocks the seed from being created, and the Restored condition.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import {
  resolveRestore,
  restoreCondition,
  restoreSecretName,
  seedResolution,
} from '../../shared/plan/restore/source.ts';
import { etcdCluster, etcdMember } from '../support/etcd-objects.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';

const s3 = {
  endpoint: 'http://s3.local:9000',
  bucket: 'b',
  key: 'x/snap.db',
  credentialsSecretRef: { name: 'creds' },
};
const KEYS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];

/** Cluster new (uid u1) restoring at bootstrap from `source`. */
function restoringFrom(source: Record<string, unknown>): EtcdCluster {
  return etcdCluster({ metadata: { name: 'new', uid: 'u1' }, spec: { bootstrap: { restore: { source } } } });
}

function snapshot(phase: string, artifact?: Record<string, unknown>): EtcdSnapshot {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: { name: 'nightly', namespace: 'prod' },
    spec: { clusterRef: { name: 'old' }, destination: { s3: { ...s3, key: 'backups/' } } },
    status: { phase, ...(artifact && { artifact }) },
  } as EtcdSnapshot;
}

const complete = snapshot('Complete', {
  uri: 's3://b/backups/nightly.db',
  checksum: `sha256:${'ab'.repeat(32)}`,
  revision: 10,
});

describe('resolveRestore', () => {
  it('an S3 source with its Secret is ready as written', () => {
    const r = resolveRestore(restoringFrom({ s3 }), { secretKeys: KEYS });
    assert.deepEqual(r, { kind: 'ready', restore: { source: { s3 } }, sourceName: 's3://b/x/snap.db' });
  });

  it('a snapshotRef becomes the recorded object, with its endpoint, Secret and checksum', () => {
    const c = restoringFrom({ snapshotRef: { name: 'nightly' } });
    assert.equal(restoreSecretName(c, complete), 'creds');
    const r = resolveRestore(c, { snapshot: complete, secretKeys: KEYS });
    assert.deepEqual(r, {
      kind: 'ready',
      restore: { source: { s3: { ...s3, key: 'backups/nightly.db' }, sha256: 'ab'.repeat(32) } },
      sourceName: 's3://b/backups/nightly.db',
    });
  });

  const blocked: [string, Record<string, unknown>, Parameters<typeof resolveRestore>[1], RegExp][] = [
    ['SnapshotNotFound', { snapshotRef: { name: 'nightly' } }, { snapshot: null }, /does not exist/],
    [
      'SnapshotNotComplete',
      { snapshotRef: { name: 'nightly' } },
      { snapshot: snapshot('Started') },
      /is Started, not Complete/,
    ],
    [
      'SnapshotNotComplete',
      { snapshotRef: { name: 'nightly' } },
      { snapshot: snapshot('Failed') },
      /it failed/,
    ],
    [
      'ChecksumMismatch',
      { snapshotRef: { name: 'nightly' }, sha256: 'cd'.repeat(32) },
      { snapshot: complete, secretKeys: KEYS },
      /differs from the checksum EtcdSnapshot nightly recorded/,
    ],
    ['SecretNotFound', { s3 }, { secretKeys: null }, /Secret prod\/creds does not exist/],
    ['CredentialsMissing', { s3 }, { secretKeys: ['AWS_ACCESS_KEY_ID'] }, /lacks AWS_SECRET_ACCESS_KEY/],
  ];
  for (const [reason, source, facts, message] of blocked) {
    it(`blocks with ${reason} (${message.source})`, () => {
      const r = resolveRestore(restoringFrom(source), facts);
      assert.equal(r?.kind, 'blocked');
      assert.equal(r.kind === 'blocked' && r.reason, reason);
      assert.match(r.kind === 'blocked' ? r.message : '', message);
    });
  }

  it('nothing to resolve for a cluster that does not restore', () => {
    const c = restoringFrom({ s3 });
    delete c.spec.bootstrap;
    assert.equal(resolveRestore(c, {}), undefined);
  });
});

describe('restoreCondition', () => {
  const c = restoringFrom({ s3 });
  const ready = resolveRestore(c, { secretKeys: KEYS });

  it('Unknown/Restoring while the seed restores, False with the step failure, True once formed', () => {
    assert.deepEqual(restoreCondition({ cluster: c, resolution: ready }), {
      type: 'Restored',
      status: 'Unknown',
      reason: 'Restoring',
      message: 'restoring s3://b/x/snap.db into the seed member',
    });
    const failed = restoreCondition({
      cluster: c,
      resolution: ready,
      seedFailure: { reason: 'AccessDenied', message: 'HTTP 403' },
    });
    assert.equal(failed?.status, 'False');
    assert.equal(failed?.reason, 'AccessDenied');
    assert.match(failed?.message ?? '', /restoring s3:\/\/b\/x\/snap\.db failed: HTTP 403; no member runs/);
    const done = restoreCondition({
      cluster: c,
      clusterID: 'abc',
      seedFailure: { reason: 'X', message: '' },
    });
    assert.equal(done?.status, 'True');
    // Once True it stays True (the seed's old failures no longer matter).
    assert.equal(restoreCondition({ cluster: c, current: { status: 'True' } })?.status, 'True');
  });

  it('a blocked resolution is the condition', () => {
    const r = resolveRestore(c, { secretKeys: null });
    assert.equal(restoreCondition({ cluster: c, ...(r && { resolution: r }) })?.reason, 'SecretNotFound');
  });
});

describe('seedResolution: a snapshotRef is resolved once, when the seed is created', () => {
  const restore = { source: { s3: { ...s3, key: 'backups/nightly.db' }, sha256: 'ab'.repeat(32) } };
  /** new-0, the seed member of cluster new, restoring `restore`. */
  const seed = (extra: Partial<EtcdMember['spec']> = {}, deleting = false): EtcdMember =>
    etcdMember('new-0', {
      metadata: { deletionTimestamp: deleting ? new Date() : undefined },
      spec: {
        clusterName: 'new',
        storage: {},
        initialCluster: 'x',
        clusterToken: 't',
        bootstrap: true,
        restore,
        ...extra,
      },
    });
  it("the seed's recorded object is the source, whatever happened to the EtcdSnapshot since", () => {
    assert.deepEqual(seedResolution([seed()]), {
      kind: 'ready',
      restore,
      sourceName: 's3://b/backups/nightly.db',
    });
    const c = restoringFrom({ snapshotRef: { name: 'nightly' } });
    const condition = restoreCondition({ cluster: c, resolution: seedResolution([seed()])! });
    assert.equal(condition?.status, 'Unknown');
    assert.equal(condition?.reason, 'Restoring');
    assert.match(condition?.message ?? '', /s3:\/\/b\/backups\/nightly.db/);
  });
  it('no seed, a seed being deleted, or a seed without a restore: looked up as before', () => {
    assert.equal(seedResolution([]), undefined);
    assert.equal(seedResolution([seed({}, true)]), undefined);
    assert.equal(seedResolution([seed({ restore: undefined })]), undefined);
    assert.equal(seedResolution([seed({ bootstrap: false })]), undefined);
  });
});
