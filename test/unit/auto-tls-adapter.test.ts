// The auto TLS adapter against an in-memory Secret store: what it writes from nothing, that a
// second pass writes nothing, and that a renewal re-issues leaves under the same CA.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import type { KubeObject, KubeObjects, ObjectRef } from '../../shared/k8s/objects.ts';
import { ensureAutoTls } from '../../shared/reconcile/auto-tls.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const DAY = 86_400_000;
const cluster = etcdCluster({
  metadata: { name: 'db', uid: 'cluster-uid' },
  spec: { tls: { client: { auto: {} }, peer: { auto: {} } } },
});
const timings = { leafLifetimeMs: 90 * DAY, caLifetimeMs: 3650 * DAY };

type Secret = KubeObject & { type?: string; data?: Record<string, string> };

/** find/create/replace over a Map, counting writes (the only calls the adapter makes). */
function store(): { kube: KubeObjects; secrets: Map<string, Secret>; writes: () => number } {
  const secrets = new Map<string, Secret>();
  let writes = 0;
  let version = 0;
  const kube = {
    find: (ref: ObjectRef) => Promise.resolve(secrets.get(ref.name)),
    create: (obj: Secret) => {
      const name = obj.metadata.name ?? '';
      if (secrets.has(name)) return Promise.resolve({ kind: 'already-exists' });
      writes++;
      const object = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++version) } };
      secrets.set(name, object);
      return Promise.resolve({ kind: 'created', object });
    },
    replace: (obj: Secret) => {
      const name = obj.metadata.name ?? '';
      if (secrets.get(name)?.metadata.resourceVersion !== obj.metadata.resourceVersion)
        return Promise.resolve({ kind: 'conflict', message: 'stale' });
      writes++;
      const object = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++version) } };
      secrets.set(name, object);
      return Promise.resolve({ kind: 'written', object });
    },
  } as unknown as KubeObjects;
  return { kube, secrets, writes: () => writes };
}

const pem = (s: Secret | undefined, key: string): string =>
  Buffer.from(s?.data?.[key] ?? '', 'base64').toString();

describe('ensureAutoTls', () => {
  it('creates the CA and three leaves, owned by the cluster, each leaf carrying the CA', async () => {
    const { kube, secrets, writes } = store();
    const now = new Date();
    assert.equal((await ensureAutoTls(kube, cluster, timings, now)).last.kind, 'none');
    assert.deepEqual([...secrets.keys()].sort(), [
      'db-ca',
      'db-operator-client-tls',
      'db-peer-tls',
      'db-server-tls',
    ]);
    assert.equal(writes(), 4);
    const ca = new X509Certificate(pem(secrets.get('db-ca'), 'tls.crt'));
    assert.equal(ca.ca, true);
    for (const name of ['db-server-tls', 'db-peer-tls', 'db-operator-client-tls']) {
      const secret = secrets.get(name);
      assert.equal(secret?.type, 'kubernetes.io/tls');
      assert.equal(secret?.metadata.ownerReferences?.[0]?.uid, 'cluster-uid');
      assert.equal(secret?.metadata.labels?.['etcdfn.io/cluster'], 'db');
      assert.equal(pem(secret, 'ca.crt').trim(), ca.toString().trim());
      const leaf = new X509Certificate(pem(secret, 'tls.crt'));
      assert.ok(leaf.checkIssued(ca) && leaf.verify(ca.publicKey), name);
      assert.ok(pem(secret, 'tls.key').startsWith('-----BEGIN PRIVATE KEY-----'));
    }
    const peer = new X509Certificate(pem(secrets.get('db-peer-tls'), 'tls.crt'));
    assert.match(peer.subjectAltName ?? '', /DNS:\*\.db\.prod\.svc/);
    assert.ok(peer.checkHost('db-2.db.prod.svc'), 'a member name is covered');
    assert.ok(peer.checkIP('127.0.0.1'));
  });

  it('writes nothing on a second pass', async () => {
    const { kube, writes } = store();
    const now = new Date();
    await ensureAutoTls(kube, cluster, timings, now);
    const before = writes();
    const pass = await ensureAutoTls(kube, cluster, timings, new Date(now.getTime() + DAY));
    assert.deepEqual(pass, { written: [], last: pass.last });
    assert.equal(pass.last.kind, 'none');
    assert.equal(writes(), before);
  });

  it('renews every leaf at 2/3 of its life and keeps the CA, so clients keep trusting', async () => {
    const { kube, secrets } = store();
    const now = new Date();
    await ensureAutoTls(kube, cluster, timings, now);
    const caBefore = pem(secrets.get('db-ca'), 'tls.crt');
    const serial = (name: string): string =>
      new X509Certificate(pem(secrets.get(name), 'tls.crt')).serialNumber;
    const before = ['db-server-tls', 'db-peer-tls', 'db-operator-client-tls'].map(serial);
    const later = new Date(now.getTime() + 61 * DAY);
    const pass = await ensureAutoTls(kube, cluster, timings, later);
    assert.equal(pass.last.kind, 'none');
    assert.deepEqual(
      pass.written.map(s => (s.kind === 'issue' ? `${s.certificate.secret} ${s.reason}` : s.kind)),
      ['db-server-tls renewal-due', 'db-operator-client-tls renewal-due', 'db-peer-tls renewal-due'],
    );
    const after = ['db-server-tls', 'db-peer-tls', 'db-operator-client-tls'].map(serial);
    for (let i = 0; i < 3; i++) assert.notEqual(after[i], before[i]);
    assert.equal(pem(secrets.get('db-ca'), 'tls.crt'), caBefore);
    assert.equal(pem(secrets.get('db-server-tls'), 'ca.crt'), caBefore);
  });

  const owned = {
    ownerReferences: [
      {
        apiVersion: 'etcdfn.io/v1alpha1',
        kind: 'EtcdCluster',
        name: 'db',
        uid: 'cluster-uid',
        controller: true,
      },
    ],
  };

  it('stops at an unreadable CA of its own instead of replacing it', async () => {
    const { kube, secrets, writes } = store();
    secrets.set('db-ca', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db-ca', ...owned },
      data: { 'tls.crt': 'eA==' },
    });
    const pass = await ensureAutoTls(kube, cluster, timings, new Date());
    assert.equal(pass.last.kind, 'ca-unusable');
    assert.equal(writes(), 0);
  });

  // Issue 29, security 5: a same-named Secret etcdfn did not create is never used or replaced.
  const foreignRows: [string, Secret][] = [
    [
      "a user's Secret that is not a certificate",
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'db-server-tls' },
        data: { password: 'aHVudGVyMg==' },
      },
    ],
    [
      "a previous cluster's Secret of the same name (another uid)",
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'db-peer-tls',
          ownerReferences: [{ ...owned.ownerReferences[0], uid: 'old-cluster-uid' }],
        },
        data: { 'tls.crt': 'eA==' },
      },
    ],
    [
      "a user's CA Secret",
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'db-ca' },
        data: { 'tls.crt': 'eA==', 'tls.key': 'eA==' },
      },
    ],
  ];
  for (const [name, foreign] of foreignRows) {
    it(`${name}: left as it is, and the step names it`, async () => {
      const { kube, secrets, writes } = store();
      secrets.set(foreign.metadata.name ?? '', foreign);
      const pass = await ensureAutoTls(kube, cluster, timings, new Date());
      assert.equal(pass.last.kind, 'secrets-not-ours');
      if (pass.last.kind === 'secrets-not-ours') {
        assert.deepEqual(pass.last.secrets, [foreign.metadata.name]);
        assert.match(
          pass.last.message,
          new RegExp(`Secret ${foreign.metadata.name} exists but was not created by etcdfn`),
        );
      }
      assert.equal(writes(), 0);
      assert.deepEqual(secrets.get(foreign.metadata.name ?? ''), foreign, 'the Secret is unchanged');
    });
  }
});
