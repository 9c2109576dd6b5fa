// reconcile-cluster's certificate pass (shared/reconcile/certificates.ts, cert-manager.ts) over an
// in-memory API server: which Secrets are read for status.certificates and with what role, which
// certificates the operator issues itself (auto TLS) and the Events that say so, the cert-manager
// Certificates created or put back (and an Event only for what was really written), and the
// problem the plan is told when auto TLS cannot issue.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { keepCertificates } from '../../shared/reconcile/certificates.ts';
import { ensureCertManagerCertificates } from '../../shared/reconcile/cert-manager.ts';
import type { KubeObjects } from '../../shared/k8s/objects.ts';
import { etcdCluster } from '../support/etcd-objects.ts';
import { StoreKube, storeContext } from '../support/store-kube.ts';

const clusterWith = (tls: object): EtcdCluster & KubeObject =>
  etcdCluster({ metadata: { uid: 'uid-1' }, spec: { tls } });
const eventsOf = (kube: StoreKube) =>
  kube.calls
    .filter(c => c.verb === 'create' && c.kind === 'Event')
    .map(c => {
      const e = c.body as { type: string; reason: string; message: string };
      return `${e.type} ${e.reason}: ${e.message}`;
    });
const secretReads = (kube: StoreKube) =>
  kube.calls
    .filter(c => c.verb === 'get' && c.kind === 'Secret')
    .map(c => `${c.apiVersion} ${c.namespace}/${c.name}`);

describe('keepCertificates', () => {
  it('no TLS: nothing read, nothing observed', async () => {
    const kube = new StoreKube();
    assert.deepEqual(await keepCertificates(storeContext(kube, {}), etcdCluster()), {
      observed: [],
    });
    assert.deepEqual(kube.calls, []);
  });

  it('Secrets the user names: each read with its role; one without a certificate has no facts', async () => {
    const kube = new StoreKube([
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'srv', namespace: 'prod' },
        data: {},
      } as KubeObject,
    ]);
    const cluster = clusterWith({
      client: { serverSecretRef: { name: 'srv' }, operatorClientSecretRef: { name: 'op' } },
      peer: { secretRef: { name: 'peer' } },
    });
    const kept = await keepCertificates(storeContext(kube, {}), cluster);
    assert.deepEqual(kept, {
      observed: [
        { secret: 'srv', role: 'server', issuedByOperator: false },
        { secret: 'op', role: 'operator-client', issuedByOperator: false },
        { secret: 'peer', role: 'peer', issuedByOperator: false },
      ],
    });
    assert.deepEqual(secretReads(kube), ['v1 prod/srv', 'v1 prod/op', 'v1 prod/peer']);
    assert.deepEqual(eventsOf(kube), []);
  });

  it('auto TLS: the CA and every certificate issued, each said in an Event, and observed with its facts', async () => {
    const kube = new StoreKube();
    const cluster = clusterWith({ client: { auto: {} }, peer: { auto: {} } });
    const kept = await keepCertificates(storeContext(kube, {}), cluster);
    assert.equal(kept.problem, undefined);
    assert.deepEqual(
      kept.observed.map(o => [o.secret, o.role, o.issuedByOperator, o.facts !== undefined]),
      [
        ['demo-server-tls', 'server', true, true],
        ['demo-operator-client-tls', 'operator-client', true, true],
        ['demo-peer-tls', 'peer', true, true],
      ],
    );
    const events = eventsOf(kube);
    assert.equal(events[0], 'Normal CertificateAuthorityCreated: created the cluster CA for auto TLS');
    const first = kube.calls.find(c => c.kind === 'Event')?.body as { reportingInstance?: string };
    assert.equal(first.reportingInstance, 'reconcile-cluster');
    assert.deepEqual(events.slice(1).sort(), [
      'Normal CertificateIssued: issued the operator-client certificate into Secret demo-operator-client-tls (first issue)',
      'Normal CertificateIssued: issued the peer certificate into Secret demo-peer-tls (first issue)',
      'Normal CertificateIssued: issued the server certificate into Secret demo-server-tls (first issue)',
    ]);
    // A second pass only reads.
    kube.calls = [];
    await keepCertificates(storeContext(kube, {}), cluster);
    assert.deepEqual(eventsOf(kube), []);
    assert.equal(
      kube.calls.some(c => c.verb !== 'get'),
      false,
    );
  });

  it('a certificate re-issued says why (its Secret held no readable certificate)', async () => {
    const kube = new StoreKube();
    const cluster = clusterWith({ client: { auto: {} } });
    await keepCertificates(storeContext(kube, {}), cluster);
    const server = kube.stored<KubeObject & { data: Record<string, string> }>(
      'Secret',
      'prod',
      'demo-server-tls',
    );
    if (server) server.data['tls.crt'] = Buffer.from('not a certificate').toString('base64');
    kube.calls = [];
    await keepCertificates(storeContext(kube, {}), cluster);
    assert.deepEqual(eventsOf(kube), [
      'Normal CertificateIssued: issued the server certificate into Secret demo-server-tls (the Secret held no readable certificate)',
    ]);
  });

  it('a certificate re-issued says why: signed by another CA, or two thirds of its life gone', async () => {
    const cluster = clusterWith({ client: { auto: {} } });
    const kube = new StoreKube();
    await keepCertificates(storeContext(kube, {}), cluster);
    const other = new StoreKube();
    await keepCertificates(storeContext(other, {}), cluster);
    const otherCa = other.stored<KubeObject>('Secret', 'prod', 'demo-ca');
    if (otherCa) kube.put(otherCa);
    kube.calls = [];
    await keepCertificates(storeContext(kube, {}), cluster);
    assert.deepEqual(eventsOf(kube).sort(), [
      'Normal CertificateIssued: issued the operator-client certificate into Secret demo-operator-client-tls (it was signed by another CA)',
      'Normal CertificateIssued: issued the server certificate into Secret demo-server-tls (it was signed by another CA)',
    ]);
    kube.calls = [];
    const later = new Date(Date.now() + 61 * 24 * 3600 * 1000);
    await keepCertificates(storeContext(kube, {}, {}, later), cluster);
    assert.deepEqual(eventsOf(kube).sort(), [
      'Normal CertificateIssued: issued the operator-client certificate into Secret demo-operator-client-tls (two thirds of its validity had passed)',
      'Normal CertificateIssued: issued the server certificate into Secret demo-server-tls (two thirds of its validity had passed)',
    ]);
  });

  it('a certificate for other names (another namespace’s, same CA) is re-issued: its names changed', async () => {
    const kube = new StoreKube();
    const elsewhere = {
      ...clusterWith({ client: { auto: {} } }),
      metadata: { name: 'demo', namespace: 'other', uid: 'uid-1' },
    };
    await keepCertificates(storeContext(kube, {}), elsewhere);
    for (const name of ['demo-ca', 'demo-server-tls', 'demo-operator-client-tls']) {
      const o = kube.stored<KubeObject>('Secret', 'other', name);
      if (o) kube.put({ ...o, metadata: { ...o.metadata, namespace: 'prod' } });
    }
    kube.calls = [];
    await keepCertificates(storeContext(kube, {}), clusterWith({ client: { auto: {} } }));
    assert.deepEqual(eventsOf(kube), [
      'Normal CertificateIssued: issued the server certificate into Secret demo-server-tls (its names no longer matched the cluster)',
      'Normal CertificateIssued: issued the operator-client certificate into Secret demo-operator-client-tls (its names no longer matched the cluster)',
    ]);
  });

  it('auto TLS that cannot issue: an unusable CA, or a Secret that is not ours, is the problem the plan is told', async () => {
    const ca = new StoreKube([
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'demo-ca',
          namespace: 'prod',
          ownerReferences: [
            {
              apiVersion: 'etcdfn.io/v1alpha1',
              kind: 'EtcdCluster',
              name: 'demo',
              uid: 'uid-1',
              controller: true,
            },
          ],
        },
        data: { 'tls.crt': 'eA==', 'tls.key': 'eA==' },
      } as KubeObject,
    ]);
    const broken = await keepCertificates(storeContext(ca, {}), clusterWith({ client: { auto: {} } }));
    assert.equal(broken.problem?.reason, 'CertificateAuthorityUnusable');
    assert.match(broken.problem?.message ?? '', /^auto TLS cannot issue certificates: /);

    const foreign = new StoreKube([
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'demo-server-tls', namespace: 'prod' },
        data: {},
      } as KubeObject,
    ]);
    const notOurs = await keepCertificates(storeContext(foreign, {}), clusterWith({ client: { auto: {} } }));
    assert.equal(notOurs.problem?.reason, 'SecretNotOwned');
    assert.match(notOurs.problem?.message ?? '', /^auto TLS cannot issue certificates: .*demo-server-tls/);
  });

  it('cert-manager: the Certificates are asked for once, each with an Event; the Secrets are not the operator’s', async () => {
    const kube = new StoreKube();
    const cluster = clusterWith({
      client: { certManager: { serverIssuerRef: { name: 'ca' }, operatorClientIssuerRef: { name: 'ca' } } },
      peer: { certManager: { issuerRef: { name: 'peer-ca', kind: 'ClusterIssuer' } } },
    });
    const kept = await keepCertificates(storeContext(kube, {}), cluster);
    assert.deepEqual(eventsOf(kube), [
      'Normal CertificateRequested: asked cert-manager for Certificate demo-server-tls',
      'Normal CertificateRequested: asked cert-manager for Certificate demo-operator-client-tls',
      'Normal CertificateRequested: asked cert-manager for Certificate demo-peer-tls',
    ]);
    assert.deepEqual(
      kept.observed.map(o => o.issuedByOperator),
      [false, false, false],
    );
    kube.calls = [];
    await keepCertificates(storeContext(kube, {}), cluster);
    assert.deepEqual(eventsOf(kube), []);
  });
});

describe('ensureCertManagerCertificates', () => {
  const cluster = clusterWith({ client: { certManager: { serverIssuerRef: { name: 'ca' } } } });

  it('creates what is missing, puts back a drifted spec, and names only what was written', async () => {
    const kube = new StoreKube();
    const k = kube as unknown as KubeObjects;
    assert.deepEqual(await ensureCertManagerCertificates(k, cluster), ['demo-server-tls']);
    const made = kube.calls.find(c => c.verb === 'create');
    assert.deepEqual(
      [made?.apiVersion, made?.kind, made?.namespace, made?.name],
      ['cert-manager.io/v1', 'Certificate', 'prod', 'demo-server-tls'],
    );
    const get = kube.calls.find(c => c.verb === 'get');
    assert.deepEqual(
      [get?.apiVersion, get?.kind, get?.namespace, get?.name],
      ['cert-manager.io/v1', 'Certificate', 'prod', 'demo-server-tls'],
    );
    assert.deepEqual(await ensureCertManagerCertificates(k, cluster), []);

    const stored = kube.stored<KubeObject & { spec: { commonName: string } }>(
      'Certificate',
      'prod',
      'demo-server-tls',
    );
    if (stored) stored.spec.commonName = 'changed';
    assert.deepEqual(await ensureCertManagerCertificates(k, cluster), ['demo-server-tls']);
    assert.notEqual(
      kube.stored<KubeObject & { spec: { commonName: string } }>('Certificate', 'prod', 'demo-server-tls')
        ?.spec.commonName,
      'changed',
    );

    const stale = kube.stored<KubeObject & { spec: { commonName: string } }>(
      'Certificate',
      'prod',
      'demo-server-tls',
    );
    if (stale) stale.spec.commonName = 'again';
    kube.script('replace', { kind: 'conflict', message: 'modified' });
    assert.deepEqual(await ensureCertManagerCertificates(k, cluster), []);
    const fresh = new StoreKube();
    fresh.script('create', { kind: 'already-exists' });
    assert.deepEqual(await ensureCertManagerCertificates(fresh as unknown as KubeObjects, cluster), []);
  });
});
