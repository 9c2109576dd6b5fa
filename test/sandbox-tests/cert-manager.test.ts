// The certManager TLS provider against the real API server and the sandbox's stand-in cert-manager
// (test/sandbox/cert-manager.ts): the operator creates one Certificate per certificate with the
// issuer the cluster names, puts a drifted spec back, and reads each signed Secret's expiry; the
// stand-in signs them into Secrets with cert-manager's layout and renews at 2/3 under the same CA.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi, type V1Secret } from '@kubernetes/client-node';
import { API_VERSION } from '../../shared/api/group.ts';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { CertManagerCertificate } from '../../shared/builders/cert-manager-certificate.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { ensureCertManagerCertificates } from '../../shared/reconcile/cert-manager.ts';
import { keepCertificates } from '../../shared/reconcile/certificates.ts';
import type { Context } from '../../shared/runtime/context.ts';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';
import { parseDuration, SandboxCertManager } from '../sandbox/cert-manager.ts';
import { createCa } from '../../shared/tls/issue.ts';

const NS = 'prod';
const DAY = 24 * 3600 * 1000;
const NAMES = ['cm-server-tls', 'cm-operator-client-tls', 'cm-peer-tls'];
type Certificate = CertManagerCertificate & KubeObject;
type Secret = V1Secret & KubeObject;

describe('certManager TLS with the sandbox stand-in for cert-manager', { timeout: 60_000 }, () => {
  let api: TestApiServer;
  let kube: KubeObjects;
  let cluster: EtcdCluster & KubeObject;
  let clock = new Date();
  let signer: SandboxCertManager;
  let custom: CustomObjectsApi;
  const certificate = (name: string) =>
    kube.find<Certificate>({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', namespace: NS, name });
  const secret = (name: string) =>
    kube.find<Secret>({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name });
  const pem = (s: Secret | undefined, key: string): string =>
    Buffer.from(s?.data?.[key] ?? '', 'base64').toString();

  before(async () => {
    api = await startApiServer();
    await api.createNamespace(NS);
    kube = new KubeObjects(api.kc);
    signer = new SandboxCertManager(api.kc, () => clock);
    custom = api.kc.makeApiClient(CustomObjectsApi);
    const created = await kube.create<EtcdCluster & KubeObject>({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: 'cm', namespace: NS },
      spec: { replicas: 3, version: '3.5.16', storage: { size: '1Gi' } },
    });
    assert.equal(created.kind, 'created');
    const stored = created.kind === 'created' ? created.object : undefined;
    assert.ok(stored);
    // The CRD still refuses certManager, so the TLS spec is given to the operator's code in memory.
    cluster = {
      ...stored,
      spec: {
        ...stored.spec,
        tls: {
          client: {
            certManager: {
              serverIssuerRef: { name: 'etcd-ca', kind: 'Issuer' },
              operatorClientIssuerRef: { name: 'etcd-ca', kind: 'Issuer' },
            },
          },
          peer: { certManager: { issuerRef: { name: 'peers', kind: 'ClusterIssuer' } } },
        },
      },
    };
  });
  after(async () => api?.close());

  it('creates one Certificate per certificate, with the issuer, names and usages it needs', async () => {
    assert.deepEqual(await ensureCertManagerCertificates(kube, cluster), NAMES);
    const server = await certificate('cm-server-tls');
    assert.equal(server?.spec.secretName, 'cm-server-tls');
    assert.deepEqual(server?.spec.issuerRef, { name: 'etcd-ca', kind: 'Issuer', group: 'cert-manager.io' });
    assert.ok(server?.spec.dnsNames?.includes('*.cm.prod.svc'));
    assert.ok(server?.spec.dnsNames?.includes('cm-client.prod.svc'));
    assert.equal(server?.metadata.ownerReferences?.[0]?.uid, cluster.metadata.uid);
    const peer = await certificate('cm-peer-tls');
    assert.deepEqual(peer?.spec.issuerRef.kind, 'ClusterIssuer');
    assert.ok(peer?.spec.usages.includes('server auth') && peer.spec.usages.includes('client auth'));
    const client = await certificate('cm-operator-client-tls');
    assert.deepEqual(
      client?.spec.usages.filter(u => u.endsWith('auth')),
      ['client auth'],
    );
  });

  it('writes nothing when the Certificates are as they should be, and puts a drifted spec back', async () => {
    assert.deepEqual(await ensureCertManagerCertificates(kube, cluster), []);
    const peer = await certificate('cm-peer-tls');
    assert.ok(peer);
    const edited = await kube.replace<Certificate>({
      ...peer,
      spec: { ...peer.spec, dnsNames: ['elsewhere'] },
    });
    assert.equal(edited.kind, 'written');
    assert.deepEqual(await ensureCertManagerCertificates(kube, cluster), ['cm-peer-tls']);
    assert.ok((await certificate('cm-peer-tls'))?.spec.dnsNames?.includes('*.cm.prod.svc'));
  });

  it('the stand-in signs each into its Secret with cert-manager’s layout and marks it Ready', async () => {
    assert.deepEqual((await signer.reconcileAll()).sort(), NAMES.map(n => `${NS}/${n}`).sort());
    for (const name of NAMES) {
      const s = await secret(name);
      assert.equal(s?.type, 'kubernetes.io/tls', name);
      assert.equal(s?.metadata.annotations?.['cert-manager.io/certificate-name'], name);
      const ca = new X509Certificate(pem(s, 'ca.crt'));
      const leaf = new X509Certificate(pem(s, 'tls.crt'));
      assert.ok(leaf.verify(ca.publicKey), name);
      const status = (await certificate(name))?.status;
      assert.equal(status?.conditions?.find(c => c.type === 'Ready')?.status, 'True');
      assert.equal(Date.parse(status?.notAfter ?? ''), Date.parse(leaf.validTo));
    }
    const peer = new X509Certificate(pem(await secret('cm-peer-tls'), 'tls.crt'));
    assert.ok(peer.checkHost('cm-1.cm.prod.svc'));
    assert.notEqual(
      pem(await secret('cm-peer-tls'), 'ca.crt'),
      pem(await secret('cm-server-tls'), 'ca.crt'),
      'a ClusterIssuer and an Issuer sign with different CAs',
    );
    assert.deepEqual(await signer.reconcileAll(), [], 'nothing to sign twice');
  });

  it('the operator reads each certificate’s expiry for status', async () => {
    const ctx = { kube, now: () => clock } as unknown as Context;
    const kept = await keepCertificates(ctx, cluster);
    assert.deepEqual(
      kept.observed.map(o => [o.secret, o.role, o.issuedByOperator, o.facts !== undefined]),
      [
        ['cm-server-tls', 'server', false, true],
        ['cm-operator-client-tls', 'operator-client', false, true],
        ['cm-peer-tls', 'peer', false, true],
      ],
    );
  });

  it('the stand-in renews past 2/3 of the duration under the same CA', async () => {
    const before = await secret('cm-server-tls');
    clock = new Date(clock.getTime() + 61 * 24 * 3600 * 1000);
    assert.deepEqual((await signer.reconcileAll()).length, 3);
    const renewed = await secret('cm-server-tls');
    assert.notEqual(pem(renewed, 'tls.crt'), pem(before, 'tls.crt'));
    assert.equal(pem(renewed, 'ca.crt'), pem(before, 'ca.crt'));
  });

  it('the stand-in signs with a CA Issuer’s own CA, renews at renewBefore, and on a `cmctl renew` request', async () => {
    const now = clock;
    const ca = await createCa(
      'user-ca',
      new Date(now.getTime() - 60_000),
      new Date(now.getTime() + 365 * DAY),
    );
    const b64 = (t: string): string => Buffer.from(t).toString('base64');
    const created = [
      await kube.create({
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'kubernetes.io/tls',
        metadata: { name: 'user-ca-key-pair', namespace: NS },
        data: { 'tls.crt': b64(ca.cert), 'tls.key': b64(ca.key) },
      }),
      await kube.create({
        apiVersion: 'cert-manager.io/v1',
        kind: 'Issuer',
        metadata: { name: 'user-ca', namespace: NS },
        spec: { ca: { secretName: 'user-ca-key-pair' } },
      }),
      await kube.create({
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: 'app', namespace: NS },
        spec: {
          secretName: 'app-tls',
          commonName: 'app',
          usages: ['client auth'],
          duration: '240h',
          renewBefore: '24h',
          issuerRef: { name: 'user-ca', kind: 'Issuer', group: 'cert-manager.io' },
        },
      }),
    ];
    assert.deepEqual(
      created.map(c => c.kind),
      ['created', 'created', 'created'],
    );
    assert.deepEqual(await signer.reconcileAll(), [`${NS}/app`]);
    const first = await secret('app-tls');
    assert.equal(pem(first, 'ca.crt'), ca.cert);
    assert.ok(new X509Certificate(pem(first, 'tls.crt')).verify(new X509Certificate(ca.cert).publicKey));
    const status = (await certificate('app'))?.status;
    assert.equal(Date.parse(status?.notAfter ?? '') - Date.parse(status?.renewalTime ?? ''), DAY);

    // Not before renewBefore…
    clock = new Date(now.getTime() + 8 * DAY);
    assert.deepEqual(await signer.reconcileAll(), []);
    // …but at once when asked the way `cmctl renew` asks (Issuing=True, ManuallyTriggered).
    const cert = await certificate('app');
    assert.ok(cert);
    await custom.replaceNamespacedCustomObjectStatus({
      group: 'cert-manager.io',
      version: 'v1',
      namespace: NS,
      plural: 'certificates',
      name: 'app',
      body: {
        ...cert,
        status: {
          ...cert.status,
          conditions: [{ type: 'Issuing', status: 'True', reason: 'ManuallyTriggered' }],
        },
      },
    });
    assert.deepEqual(await signer.reconcileAll(), [`${NS}/app`]);
    assert.notEqual(pem(await secret('app-tls'), 'tls.crt'), pem(first, 'tls.crt'));
    const after = (await certificate('app'))?.status?.conditions ?? [];
    assert.deepEqual(
      after.map(c => [c.type, c.status]),
      [['Ready', 'True']],
      'Issuing is cleared once signed',
    );
    // And once renewBefore is reached, by the clock alone.
    clock = new Date(clock.getTime() + 9 * DAY + 60_000);
    assert.deepEqual(await signer.reconcileAll(), [`${NS}/app`]);
  });

  it('reads Go durations as cert-manager writes them', () => {
    assert.equal(parseDuration('2160h'), 2160 * 3600_000);
    assert.equal(parseDuration('1h30m'), 90 * 60_000);
    assert.equal(parseDuration('90'), undefined);
  });
});
