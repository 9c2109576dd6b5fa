// The auto TLS adapter against the sandbox API server: from nothing it writes the CA and the three
// certificate Secrets (kubernetes.io/tls, owned by the cluster, with Events saying so), a second pass
// writes nothing, a pass past 2/3 of the leaves' life re-issues them under the same CA, and the
// status schema takes each certificate's expiry. The CRD still refuses auto TLS, so the cluster is
// stored plaintext and the TLS spec is given to the adapter in memory.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { CoreV1Event, V1Secret } from '@kubernetes/client-node';
import { API_VERSION } from '../../shared/api/group.ts';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { LEAF_LIFETIME_ENV } from '../../shared/plan/tls/auto-tls.ts';
import { withCertificates } from '../../shared/plan/tls/certificate-status.ts';
import { keepCertificates } from '../../shared/reconcile/certificates.ts';
import { NS, ReconcileWorld } from '../support/reconcile-world.ts';

type Secret = V1Secret & KubeObject;
const LEAVES = ['certs-server-tls', 'certs-operator-client-tls', 'certs-peer-tls'];

describe('auto TLS Secrets through the sandbox API server', { timeout: 60_000 }, () => {
  let world: ReconcileWorld;
  let cluster: EtcdCluster & KubeObject;
  const secret = (name: string): Promise<Secret | undefined> =>
    world.kube.find<Secret>({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name });
  const pem = (s: Secret | undefined, key: string): string =>
    Buffer.from(s?.data?.[key] ?? '', 'base64').toString();
  const versions = async (): Promise<(string | undefined)[]> =>
    Promise.all(['certs-ca', ...LEAVES].map(async n => (await secret(n))?.metadata.resourceVersion));

  before(async () => {
    // One-hour leaves, so that "later" below is past their renewal and still inside the CA's life.
    process.env[LEAF_LIFETIME_ENV] = '3600';
    world = await ReconcileWorld.start('certs', 0);
    const created = await world.kube.create<EtcdCluster & KubeObject>({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: 'certs', namespace: NS },
      spec: { replicas: 3, version: '3.5.16', storage: { size: '1Gi' } },
    });
    assert.equal(created.kind, 'created');
    const stored = created.kind === 'created' ? created.object : undefined;
    assert.ok(stored);
    cluster = { ...stored, spec: { ...stored.spec, tls: { client: { auto: {} }, peer: { auto: {} } } } };
  });
  after(async () => {
    delete process.env[LEAF_LIFETIME_ENV];
    await world?.stop();
  });

  it('writes the CA and three certificates, owned by the cluster, and says so in Events', async () => {
    const kept = await keepCertificates(world.ctx, cluster);
    assert.equal(kept.problem, undefined);
    assert.deepEqual(
      kept.observed.map(o => [o.secret, o.role, o.issuedByOperator, o.facts !== undefined]),
      [
        ['certs-server-tls', 'server', true, true],
        ['certs-operator-client-tls', 'operator-client', true, true],
        ['certs-peer-tls', 'peer', true, true],
      ],
    );
    const ca = new X509Certificate(pem(await secret('certs-ca'), 'tls.crt'));
    for (const name of LEAVES) {
      const s = await secret(name);
      assert.equal(s?.type, 'kubernetes.io/tls', name);
      assert.equal(s?.metadata.ownerReferences?.[0]?.uid, cluster.metadata.uid, name);
      const leaf = new X509Certificate(pem(s, 'tls.crt'));
      assert.ok(leaf.verify(ca.publicKey), `${name} is signed by the cluster CA`);
      assert.equal(pem(s, 'ca.crt').trim(), ca.toString().trim(), name);
    }
    const events = await world.kube.list<CoreV1Event & KubeObject>('v1', 'Event', NS);
    const reasons = events.filter(e => e.involvedObject.name === 'certs').map(e => e.reason);
    assert.deepEqual(reasons.sort(), [
      'CertificateAuthorityCreated',
      'CertificateIssued',
      'CertificateIssued',
      'CertificateIssued',
    ]);
    for (const e of events) assert.doesNotMatch(e.message ?? '', /BEGIN|PRIVATE/);
  });

  it('writes nothing on the next reconcile', async () => {
    const before = await versions();
    await keepCertificates(world.ctx, cluster);
    assert.deepEqual(await versions(), before);
  });

  it('past two thirds of their life, re-issues the three leaves and keeps the CA', async () => {
    const before = await versions();
    const caBefore = pem(await secret('certs-ca'), 'tls.crt');
    const later = new Date(Date.now() + 41 * 60_000);
    await keepCertificates({ ...world.ctx, now: () => later }, cluster);
    const now = await versions();
    assert.equal(now[0], before[0], 'the CA Secret is untouched');
    for (let i = 1; i < 4; i++) assert.notEqual(now[i], before[i], LEAVES[i - 1]);
    assert.equal(pem(await secret('certs-ca'), 'tls.crt'), caBefore);
    assert.equal(pem(await secret('certs-peer-tls'), 'ca.crt'), caBefore);
  });

  it('status takes each certificate’s expiry (the CRD schema keeps it)', async () => {
    const kept = await keepCertificates(world.ctx, cluster);
    const stored = await world.cluster();
    const status = withCertificates(stored.status ?? {}, kept.observed, kept.problem, new Date());
    const written = await world.kube.replaceStatus({ ...stored, status });
    assert.equal(written.kind, 'written');
    const back = (await world.cluster()).status?.certificates ?? [];
    assert.deepEqual(
      back.map(c => c.secret),
      LEAVES,
    );
    const peer = new X509Certificate(pem(await secret('certs-peer-tls'), 'tls.crt'));
    const entry = back.find(c => c.secret === 'certs-peer-tls');
    assert.equal(Date.parse(entry?.notAfter ?? ''), Date.parse(peer.validTo));
    assert.ok(Date.parse(entry?.renewAfter ?? '') < Date.parse(entry?.notAfter ?? ''));
  });

  it('a same-named Secret etcdfn did not create is never replaced; TLSCertificates names it (issue 29)', async () => {
    const made = await world.kube.create<EtcdCluster & KubeObject>({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: 'mine', namespace: NS },
      spec: { replicas: 3, version: '3.5.16', storage: { size: '1Gi' } },
    });
    assert.equal(made.kind, 'created');
    const stored = made.kind === 'created' ? made.object : undefined;
    assert.ok(stored);
    const other = { ...stored, spec: { ...stored.spec, tls: { client: { auto: {} }, peer: { auto: {} } } } };
    const theirs = await world.kube.create<Secret>({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'mine-server-tls', namespace: NS },
      type: 'Opaque',
      data: { password: Buffer.from('not a certificate').toString('base64') },
    });
    assert.equal(theirs.kind, 'created');
    const kept = await keepCertificates(world.ctx, other);
    assert.equal(kept.problem?.reason, 'SecretNotOwned');
    assert.match(kept.problem?.message ?? '', /Secret mine-server-tls exists but was not created by etcdfn/);
    const after = await secret('mine-server-tls');
    assert.equal(
      after?.metadata.resourceVersion,
      theirs.kind === 'created' ? theirs.object.metadata.resourceVersion : '',
    );
    assert.equal(after?.type, 'Opaque');
    assert.equal(await secret('mine-ca'), undefined, 'nothing issued beside it either');
    const status = withCertificates({}, kept.observed, kept.problem, new Date());
    const condition = status.conditions?.find(c => c.type === 'TLSCertificates');
    assert.deepEqual([condition?.status, condition?.reason], ['False', 'SecretNotOwned']);
  });
});
