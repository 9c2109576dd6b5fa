// The auto TLS adapter (shared/reconcile/auto-tls.ts) at the edges its mutation run found unpinned:
// the validity it gives (a minute backdated for lagging clocks; a leaf never outlives its CA), the
// Secrets it asks for and writes, a leaf Secret missing half its pair, a write lost to a race
// (the pass stops: the winner's write brings the next event), and the bound on a pass that never
// settles. auto-tls-adapter.test.ts has the whole lifecycle (issue, second pass, renewal, foreign).
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import type { KubeObject, KubeObjects, ObjectRef } from '../../shared/k8s/objects.ts';
import { ensureAutoTls } from '../../shared/reconcile/auto-tls.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const DAY = 86_400_000;
const NOW = new Date('2026-11-29T05:00:00.000Z');
/** Cluster db with auto TLS on both planes by default; namespace '' = none; tls null = no TLS at all. */
const autoTlsCluster = (namespace = 'prod', tls: unknown = { client: { auto: {} }, peer: { auto: {} } }) =>
  etcdCluster({
    metadata: { name: 'db', namespace: namespace || undefined, uid: 'cluster-uid' },
    spec: { tls: tls === null ? undefined : tls },
  });

type Secret = KubeObject & { type?: string; data?: Record<string, string> };

interface StoreOptions {
  /** create answers 'already-exists' for these names (another invocation won). */
  lose?: string[];
  /** replace answers 'conflict'. */
  conflict?: boolean;
  /** create says created but keeps nothing (a store that never settles). */
  forget?: boolean;
}
function store(options: StoreOptions = {}) {
  const secrets = new Map<string, Secret>();
  const finds: ObjectRef[] = [];
  const created: Secret[] = [];
  const kube = {
    find: (ref: ObjectRef) => (finds.push(ref), Promise.resolve(secrets.get(ref.name))),
    create: (obj: Secret) => {
      const name = obj.metadata.name ?? '';
      created.push(obj);
      if (options.lose?.includes(name) || secrets.has(name))
        return Promise.resolve({ kind: 'already-exists' });
      const object = { ...obj, metadata: { ...obj.metadata, resourceVersion: '1' } };
      if (!options.forget) secrets.set(name, object);
      return Promise.resolve({ kind: 'created', object });
    },
    replace: (obj: Secret) => {
      if (options.conflict) return Promise.resolve({ kind: 'conflict', message: 'stale' });
      secrets.set(obj.metadata.name ?? '', obj);
      return Promise.resolve({ kind: 'written', object: obj });
    },
  } as unknown as KubeObjects;
  return { kube, secrets, finds, created };
}
const pem = (s: Secret | undefined, key: string) => Buffer.from(s?.data?.[key] ?? '', 'base64').toString();
const cert = (s: Secret | undefined) => new X509Certificate(pem(s, 'tls.crt'));

describe('auto TLS: what is issued, and when a pass stops', () => {
  it('the CA: named after the cluster, valid from a minute ago for its whole lifetime, in a TLS Secret of its own', async () => {
    const { kube, secrets } = store();
    await ensureAutoTls(kube, autoTlsCluster(), { leafLifetimeMs: 90 * DAY, caLifetimeMs: 3650 * DAY }, NOW);
    const ca = secrets.get('db-ca');
    assert.equal(ca?.apiVersion, 'v1');
    assert.equal(ca?.kind, 'Secret');
    assert.equal(ca?.type, 'kubernetes.io/tls');
    assert.equal(ca?.metadata.namespace, 'prod');
    assert.deepEqual(Object.keys(ca?.data ?? {}).sort(), ['tls.crt', 'tls.key']);
    const x = cert(ca);
    assert.equal(x.subject, 'CN=prod/db etcd CA');
    assert.equal(new Date(x.validFrom).getTime(), NOW.getTime() - 60_000);
    assert.equal(new Date(x.validTo).getTime(), NOW.getTime() + 3650 * DAY);
  });

  it('a leaf: valid from a minute ago for its lifetime, but never past its CA’s end', async () => {
    const long = store();
    await ensureAutoTls(
      long.kube,
      autoTlsCluster(),
      { leafLifetimeMs: 90 * DAY, caLifetimeMs: 3650 * DAY },
      NOW,
    );
    const leaf = cert(long.secrets.get('db-peer-tls'));
    assert.equal(new Date(leaf.validFrom).getTime(), NOW.getTime() - 60_000);
    assert.equal(new Date(leaf.validTo).getTime(), NOW.getTime() + 90 * DAY);
    const short = store();
    await ensureAutoTls(
      short.kube,
      autoTlsCluster(),
      { leafLifetimeMs: 90 * DAY, caLifetimeMs: 30 * DAY },
      NOW,
    );
    assert.equal(
      cert(short.secrets.get('db-server-tls')).validTo,
      cert(short.secrets.get('db-ca')).validTo,
      'the leaf ends with its CA',
    );
  });

  it('asks for the cluster’s Secrets by kind and namespace; a cluster without a namespace uses default', async () => {
    const { kube, finds, secrets } = store();
    await ensureAutoTls(
      kube,
      autoTlsCluster(''),
      { leafLifetimeMs: 90 * DAY, caLifetimeMs: 3650 * DAY },
      NOW,
    );
    assert.ok(finds.length > 0);
    for (const ref of finds) {
      assert.deepEqual(
        { apiVersion: ref.apiVersion, kind: ref.kind, namespace: ref.namespace },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          namespace: 'default',
        },
      );
    }
    assert.equal(secrets.get('db-ca')?.metadata.namespace, 'default');
    assert.equal(cert(secrets.get('db-ca')).subject, 'CN=default/db etcd CA');
  });

  it('a cluster without auto TLS: nothing read, nothing written', async () => {
    const { kube, finds, created } = store();
    const pass = await ensureAutoTls(
      kube,
      autoTlsCluster('prod', null),
      { leafLifetimeMs: DAY, caLifetimeMs: DAY },
      NOW,
    );
    assert.deepEqual(pass, { written: [], last: { kind: 'none' } });
    assert.deepEqual([finds, created], [[], []]);
  });

  it('a leaf Secret holding its certificate but not its key is issued again', async () => {
    const { kube, secrets } = store();
    const timings = { leafLifetimeMs: 90 * DAY, caLifetimeMs: 3650 * DAY };
    await ensureAutoTls(kube, autoTlsCluster(), timings, NOW);
    const peer = secrets.get('db-peer-tls')!;
    secrets.set('db-peer-tls', { ...peer, data: { 'tls.crt': peer.data!['tls.crt'] } });
    const pass = await ensureAutoTls(kube, autoTlsCluster(), timings, NOW);
    assert.deepEqual(
      pass.written.map(s => (s.kind === 'issue' ? s.certificate.secret : s.kind)),
      ['db-peer-tls'],
    );
    assert.ok(pem(secrets.get('db-peer-tls'), 'tls.key').startsWith('-----BEGIN PRIVATE KEY-----'));
  });

  it('a CA lost to a race: the pass stops at once, nothing counted as written', async () => {
    const { kube, created } = store({ lose: ['db-ca'] });
    const pass = await ensureAutoTls(kube, autoTlsCluster(), { leafLifetimeMs: DAY, caLifetimeMs: DAY }, NOW);
    assert.deepEqual(pass, { written: [], last: { kind: 'create-ca' } });
    assert.equal(created.length, 1);
  });

  it('a leaf lost to a race: the pass stops after it, with the CA counted', async () => {
    const { kube, created } = store({ lose: ['db-server-tls'] });
    const pass = await ensureAutoTls(
      kube,
      autoTlsCluster(),
      { leafLifetimeMs: DAY, caLifetimeMs: 10 * DAY },
      NOW,
    );
    assert.deepEqual(
      pass.written.map(s => s.kind),
      ['create-ca'],
    );
    assert.equal(pass.last.kind, 'issue');
    assert.equal(created.length, 2);
  });

  it('a renewal that loses its replace to a race stops there', async () => {
    const timings = { leafLifetimeMs: 90 * DAY, caLifetimeMs: 3650 * DAY };
    const first = store();
    await ensureAutoTls(first.kube, autoTlsCluster(), timings, NOW);
    const racing = store({ conflict: true });
    for (const [name, secret] of first.secrets) racing.secrets.set(name, secret);
    const pass = await ensureAutoTls(
      racing.kube,
      autoTlsCluster(),
      timings,
      new Date(NOW.getTime() + 61 * DAY),
    );
    assert.deepEqual(pass.written, []);
    assert.equal(pass.last.kind, 'issue');
  });

  it('a store that never settles: eight steps, then an error naming the cluster', async () => {
    const { kube, created } = store({ forget: true });
    await assert.rejects(
      ensureAutoTls(kube, autoTlsCluster(), { leafLifetimeMs: DAY, caLifetimeMs: DAY }, NOW),
      {
        message: 'auto TLS for db: still issuing after 8 steps',
      },
    );
    assert.equal(created.length, 8);
  });
});
