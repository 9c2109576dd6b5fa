// The one generic apply of owned objects (shared/reconcile/owned-apply.ts) and the changes the
// per-kind modules of shared/plan/owned/ hand it: each change goes to the one KubeObjects call it
// names, with what was planned and nothing else; a kind or verb outside the written-out list throws
// before any call (a bug, never a write); the answer comes back as the API server gave it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { CertManagerCertificate } from '../../shared/builders/cert-manager-certificate.ts';
import type { PingSource } from '../../shared/builders/ping-source.ts';
import type { KubeObject, KubeObjects } from '../../shared/k8s/objects.ts';
import { desiredTlsSecret, tlsSecretChange } from '../../shared/plan/owned/auto-tls-secrets.ts';
import { certificateChange, type Certificate } from '../../shared/plan/owned/cert-manager-certificates.ts';
import { pingSourceChange } from '../../shared/plan/owned/ping-sources.ts';
import { appliedRootSecretChange, generatedRootSecretChange } from '../../shared/plan/owned/root-secrets.ts';
import type { ObjectChange } from '../../shared/plan/owned/types.ts';
import { applyChange } from '../../shared/reconcile/owned-apply.ts';

/** Records each KubeObjects call and answers it with `answer`. */
function recorder(answer: unknown = { kind: 'done' }): {
  kube: KubeObjects;
  calls: [string, ...unknown[]][];
} {
  const calls: [string, ...unknown[]][] = [];
  const record =
    (method: string) =>
    (...args: unknown[]) => {
      calls.push([method, ...args]);
      return Promise.resolve(answer);
    };
  const kube = {
    create: record('create'),
    replace: record('replace'),
    mergePatch: record('mergePatch'),
    delete: record('delete'),
  } as unknown as KubeObjects;
  return { kube, calls };
}

const object = (kind: string, name = 'x'): KubeObject => ({
  apiVersion: 'v1',
  kind,
  metadata: { name, namespace: 'team-a', resourceVersion: '7' },
});
const ref = (kind: string) => ({ apiVersion: 'v1', kind, namespace: 'team-a', name: 'x' });

describe('applyChange', () => {
  const allowed: [ObjectChange['kind'], string[], string][] = [
    [
      'create',
      ['Service', 'PodDisruptionBudget', 'NetworkPolicy', 'PingSource', 'Secret', 'Certificate'],
      'create',
    ],
    ['patch', ['Service', 'PodDisruptionBudget', 'NetworkPolicy'], 'mergePatch'],
    ['replace', ['PingSource', 'Secret', 'Certificate'], 'replace'],
    ['delete', ['PodDisruptionBudget', 'NetworkPolicy', 'PingSource'], 'delete'],
  ];
  const change = (verb: ObjectChange['kind'], kind: string): ObjectChange =>
    verb === 'create' || verb === 'replace'
      ? { kind: verb, object: object(kind) }
      : verb === 'patch'
        ? { kind: verb, ref: ref(kind), patch: { spec: { a: 1 } } }
        : { kind: verb, ref: ref(kind) };
  const KINDS = [
    'Service',
    'PodDisruptionBudget',
    'NetworkPolicy',
    'PingSource',
    'Secret',
    'Certificate',
    'Pod',
  ];

  for (const [verb, kinds, method] of allowed) {
    it(`${verb}: ${kinds.join(', ')} through KubeObjects.${method}; any other kind throws before a call`, async () => {
      for (const kind of KINDS) {
        const { kube, calls } = recorder({ kind: 'answered' });
        if (kinds.includes(kind)) {
          assert.deepEqual(await applyChange(kube, change(verb, kind)), { kind: 'answered' }, kind);
          assert.equal(calls.length, 1, kind);
          assert.equal(calls[0][0], method, kind);
        } else {
          await assert.rejects(applyChange(kube, change(verb, kind)), /not a kind etcdfn/, `${verb} ${kind}`);
          assert.deepEqual(calls, [], `${verb} ${kind}`);
        }
      }
    });
  }

  it('passes what was planned as it is: the object, the ref and patch, the delete precondition', async () => {
    const { kube, calls } = recorder();
    const secret = object('Secret');
    await applyChange(kube, { kind: 'create', object: secret });
    await applyChange(kube, { kind: 'replace', object: secret });
    await applyChange(kube, { kind: 'patch', ref: ref('Service'), patch: { spec: { a: 1 } } });
    await applyChange(kube, { kind: 'delete', ref: ref('PingSource'), uid: 'u-1' });
    await applyChange(kube, { kind: 'delete', ref: ref('NetworkPolicy') });
    assert.deepEqual(calls, [
      ['create', secret],
      ['replace', secret],
      ['mergePatch', ref('Service'), { spec: { a: 1 } }],
      ['delete', ref('PingSource'), { uid: 'u-1' }],
      ['delete', ref('NetworkPolicy'), {}],
    ]);
  });
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
    assert.equal(fresh.type, 'kubernetes.io/tls');
    assert.equal(fresh.metadata.ownerReferences?.[0]?.uid, 'cluster-uid');
    assert.equal(fresh.metadata.ownerReferences?.[0]?.controller, true);
    assert.equal(fresh.metadata.labels?.['etcdfn.io/cluster'], 'db');
    const text = (k: string) => Buffer.from(fresh.data?.[k] ?? '', 'base64').toString();
    assert.deepEqual(['tls.crt', 'tls.key', 'ca.crt'].map(text), ['C', 'K', 'A']);
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
