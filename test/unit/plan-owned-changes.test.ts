// The changes the per-kind modules of shared/plan/owned/ hand the generic apply, for the kinds kept
// outside reconcile-cluster's ensure-* steps: PingSources (a wake-up's or a schedule's drift as a
// change), auto TLS Secrets, cert-manager Certificates, the root credentials Secrets.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { CertManagerCertificate } from '../../shared/builders/cert-manager-certificate.ts';
import type { PingSource } from '../../shared/builders/ping-source.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { desiredTlsSecret, tlsSecretChange } from '../../shared/plan/owned/auto-tls-secrets.ts';
import { certificateChange, type Certificate } from '../../shared/plan/owned/cert-manager-certificates.ts';
import { pingSourceChange } from '../../shared/plan/owned/ping-sources.ts';
import { appliedRootSecretChange, generatedRootSecretChange } from '../../shared/plan/owned/root-secrets.ts';

const object = (kind: string, name = 'x'): KubeObject => ({
  apiVersion: 'v1',
  kind,
  metadata: { name, namespace: 'team-a', resourceVersion: '7' },
});

const ping = (name: string): PingSource => ({
  ...object('PingSource', name),
  apiVersion: 'sources.knative.dev/v1',
  spec: { schedule: '* * * * *', contentType: 'application/json', data: '{}', sink: { uri: 'http://b' } },
});

describe('pingSourceChange', () => {
  it('create and update write the object the drift carries; delete only the incarnation read', () => {
    const p = ping('w');
    assert.deepEqual(pingSourceChange({ kind: 'create', object: p }, 'team-a'), {
      kind: 'create',
      object: p,
    });
    assert.deepEqual(pingSourceChange({ kind: 'update', object: p }, 'team-a'), {
      kind: 'replace',
      object: p,
    });
    const gone = { apiVersion: 'sources.knative.dev/v1', kind: 'PingSource', namespace: 'team-a', name: 'w' };
    assert.deepEqual(pingSourceChange({ kind: 'delete', name: 'w', uid: 'u' }, 'team-a'), {
      kind: 'delete',
      ref: gone,
      uid: 'u',
    });
    assert.deepEqual(pingSourceChange({ kind: 'delete', name: 'w' }, 'team-a'), {
      kind: 'delete',
      ref: gone,
    });
  });
});

const cluster: EtcdCluster = {
  apiVersion: 'etcdfn.io/v1alpha1',
  kind: 'EtcdCluster',
  metadata: { name: 'db', namespace: 'prod', uid: 'cluster-uid' },
  spec: {
    replicas: 3,
    version: '3.5.16',
    auth: { enabled: true, rootCredentialsSecretRef: { name: 'db-root' } },
  },
};

describe('tlsSecretChange', () => {
  const fresh = desiredTlsSecret(cluster, 'db-peer-tls', { cert: 'C', key: 'K', ca: 'A' });

  it('the desired Secret: kubernetes.io/tls, owned by the cluster, labelled, the pair and the CA', () => {
    assert.equal(fresh.apiVersion, 'v1');
    assert.equal(fresh.kind, 'Secret');
    assert.equal(fresh.type, 'kubernetes.io/tls');
    assert.equal(fresh.metadata.name, 'db-peer-tls');
    assert.equal(fresh.metadata.namespace, 'prod');
    assert.deepEqual(fresh.metadata.ownerReferences, [
      {
        apiVersion: 'etcdfn.io/v1alpha1',
        kind: 'EtcdCluster',
        name: 'db',
        uid: 'cluster-uid',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.equal(fresh.metadata.labels?.['etcdfn.io/cluster'], 'db');
    const text = (k: string) => Buffer.from(fresh.data?.[k] ?? '', 'base64').toString();
    assert.deepEqual(['tls.crt', 'tls.key', 'ca.crt'].map(text), ['C', 'K', 'A']);
  });

  it("the CA's own Secret carries no ca.crt; a cluster without a namespace writes to default", () => {
    const { metadata, ...rest } = cluster;
    const ca = desiredTlsSecret({ ...rest, metadata: { ...metadata, namespace: undefined } }, 'db-ca', {
      cert: 'C',
      key: 'K',
    });
    assert.deepEqual(Object.keys(ca.data ?? {}).sort(), ['tls.crt', 'tls.key']);
    assert.equal(ca.metadata.namespace, 'default');
  });

  it('created when missing, else the existing Secret with the new data under its resourceVersion', () => {
    assert.deepEqual(tlsSecretChange(undefined, fresh), { kind: 'create', object: fresh });
    const existing = { ...object('Secret', 'db-peer-tls'), type: 'Opaque', data: { old: 'x' } };
    assert.deepEqual(tlsSecretChange(existing, fresh), {
      kind: 'replace',
      object: { ...existing, type: 'kubernetes.io/tls', data: fresh.data },
    });
  });
});

describe('certificateChange', () => {
  const want = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'db-peer', namespace: 'prod', labels: {}, ownerReferences: [] },
    spec: { secretName: 'db-peer-tls', commonName: 'db', usages: ['server auth'] },
  } as unknown as CertManagerCertificate;

  it('created when missing, nothing when the spec is as wanted, else the spec put back', () => {
    assert.deepEqual(certificateChange(undefined, want), { kind: 'create', object: want });
    const have = { ...want, metadata: { ...want.metadata, resourceVersion: '3' } } as Certificate;
    assert.equal(certificateChange(structuredClone(have), want), undefined);
    const drifted = { ...have, spec: { ...want.spec, commonName: 'other' } } as Certificate;
    assert.deepEqual(certificateChange(drifted, want), {
      kind: 'replace',
      object: { ...drifted, spec: want.spec },
    });
  });
});

describe('root credentials Secrets', () => {
  it('the generated one is only created, under the name spec.auth names', () => {
    const change = generatedRootSecretChange(cluster, 'pw');
    assert.equal(change.kind, 'create');
    assert.equal(change.object.metadata.name, 'db-root');
    assert.equal(change.object.kind, 'Secret');
  });

  it('the applied copy: created, or written whole under the resourceVersion read', () => {
    const created = appliedRootSecretChange(cluster, 'pw', undefined);
    assert.equal(created.kind, 'create');
    const replaced = appliedRootSecretChange(cluster, 'pw', { metadata: { resourceVersion: '9' } });
    assert.equal(replaced.kind, 'replace');
    assert.deepEqual(replaced.object, {
      ...created.object,
      metadata: { ...created.object.metadata, resourceVersion: '9' },
    });
  });
});
