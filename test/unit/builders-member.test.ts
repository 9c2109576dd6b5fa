import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster, EtcdClusterSpec } from '../../shared/api/etcd-cluster.ts';
import { buildMember, controllerRef, isControlledBy, tlsSecretNames } from '../../shared/builders/index.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

/** demo (uid cluster-uid) as reconcile-cluster locked it: its token and its observed target. */
function lockedCluster(
  spec: Partial<EtcdClusterSpec> = {},
  observed: Record<string, unknown> = {},
): EtcdCluster {
  return etcdCluster({
    metadata: { uid: 'cluster-uid' },
    spec,
    status: {
      clusterToken: 'prod-demo-cluster-uid',
      observed: { replicas: 3, version: '3.5.16', storage: { size: '1Gi' }, ...observed },
    },
  });
}

describe('owner references', () => {
  it('name the owner as the one controller and block its deletion until the object is gone', () => {
    assert.deepEqual(controllerRef(lockedCluster()), {
      apiVersion: 'etcdfn.io/v1alpha1',
      kind: 'EtcdCluster',
      name: 'demo',
      uid: 'cluster-uid',
      controller: true,
      blockOwnerDeletion: true,
    });
  });

  it('cannot be made to an owner that was never created (no uid)', () => {
    const unsaved = lockedCluster();
    delete unsaved.metadata.uid;
    assert.throws(() => controllerRef(unsaved), /no uid/);
  });

  it('isControlledBy matches by uid, so a recreated owner of the same name does not own old objects', () => {
    const owned = { metadata: { ownerReferences: [controllerRef(lockedCluster())] } };
    assert.equal(isControlledBy(owned, lockedCluster()), true);
    const recreated = lockedCluster();
    recreated.metadata.uid = 'other-uid';
    assert.equal(isControlledBy(owned, recreated), false);
    const notController = {
      metadata: { ownerReferences: [{ ...controllerRef(lockedCluster()), controller: false }] },
    };
    assert.equal(isControlledBy(notController, lockedCluster()), false);
    assert.equal(isControlledBy({ metadata: {} }, lockedCluster()), false);
  });
});

describe('buildMember', () => {
  it('is created by generateName, owned by the cluster and carries the cleanup finalizer from the start', () => {
    const m = buildMember(lockedCluster(), { bootstrap: false });
    assert.equal(m.apiVersion, 'etcdfn.io/v1alpha1');
    assert.equal(m.kind, 'EtcdMember');
    assert.equal(m.metadata.generateName, 'demo-');
    assert.equal(m.metadata.name, undefined);
    assert.equal(m.metadata.namespace, 'prod');
    assert.deepEqual(m.metadata.finalizers, ['etcdfn.io/member-cleanup']);
    assert.equal(isControlledBy(m, lockedCluster()), true);
    assert.equal(m.metadata.labels?.['etcdfn.io/cluster'], 'demo');
  });

  it('takes a deterministic name when the caller has one', () => {
    const m = buildMember(lockedCluster(), { bootstrap: true, name: 'demo-0' });
    assert.equal(m.metadata.name, 'demo-0');
    assert.equal(m.metadata.generateName, undefined);
  });

  it('copies the locked target, not the spec being edited', () => {
    const c = lockedCluster(
      { version: '3.5.17', storage: { size: '5Gi' } },
      {
        storage: { size: '2Gi', medium: 'Memory', storageClassName: 'fast' },
        resources: { limits: { cpu: '1' } },
        options: { snapshotCount: 5000 },
        imagePullSecrets: [{ name: 'regcred' }],
        affinity: { nodeAffinity: {} },
        topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }],
      },
    );
    const m = buildMember(c, { bootstrap: false });
    assert.equal(m.spec.version, '3.5.16');
    assert.deepEqual(m.spec.storage, { size: '2Gi', medium: 'Memory', storageClassName: 'fast' });
    assert.deepEqual(m.spec.resources, { limits: { cpu: '1' } });
    assert.deepEqual(m.spec.options, { snapshotCount: 5000 });
    assert.deepEqual(m.spec.imagePullSecrets, [{ name: 'regcred' }]);
    assert.deepEqual(m.spec.affinity, { nodeAffinity: {} });
    assert.equal(m.spec.topologySpreadConstraints?.length, 1);
    assert.equal(m.spec.clusterName, 'demo');
    assert.equal(m.spec.clusterToken, 'prod-demo-cluster-uid');
    assert.equal(m.spec.initialCluster, '');
    assert.equal(m.spec.bootstrap, false);
  });

  it('shares no objects with the cluster it was copied from', () => {
    const c = lockedCluster({}, { resources: { limits: { cpu: '1' } } });
    const m = buildMember(c, { bootstrap: false });
    m.spec.resources!.limits!.cpu = '8';
    assert.equal(c.status?.observed?.resources?.limits?.cpu, '1');
  });

  it('additionalMetadata cannot override or add etcdfn.io/ labels', () => {
    const c = lockedCluster(
      {},
      {
        additionalMetadata: {
          labels: {
            team: 'db',
            'etcdfn.io/cluster': 'other',
            'etcdfn.io/role': 'voter',
            'app.kubernetes.io/name': 'x',
          },
          annotations: { owner: 'alice', 'etcdfn.io/anything': 'no' },
        },
      },
    );
    const m = buildMember(c, { bootstrap: false });
    assert.equal(m.metadata.labels?.team, 'db');
    assert.equal(m.metadata.labels?.['etcdfn.io/cluster'], 'demo');
    assert.equal(m.metadata.labels?.['etcdfn.io/role'], undefined);
    assert.equal(m.metadata.labels?.['app.kubernetes.io/name'], 'etcd');
    assert.deepEqual(m.metadata.annotations, { owner: 'alice' });
  });

  it('restores into the seed only', () => {
    const restore = { source: { pvc: { claimName: 'backups', subPath: 'snap.db' } } };
    const c = lockedCluster({ bootstrap: { restore } });
    assert.deepEqual(buildMember(c, { bootstrap: true }).spec.restore, restore);
    assert.equal(buildMember(c, { bootstrap: true }).spec.bootstrap, true);
    assert.equal(buildMember(c, { bootstrap: false }).spec.restore, undefined);
  });

  it('refuses to build a member before the target and token are recorded (a caller bug)', () => {
    const noObserved = lockedCluster();
    delete noObserved.status!.observed;
    assert.throws(() => buildMember(noObserved, { bootstrap: true }), /status\.observed/);
    const noToken = lockedCluster();
    delete noToken.status!.clusterToken;
    assert.throws(() => buildMember(noToken, { bootstrap: true }), /clusterToken/);
  });
});

describe('member TLS from the cluster spec', () => {
  const cases: { name: string; tls: EtcdClusterSpec['tls']; want: unknown; secrets: unknown }[] = [
    { name: 'plaintext', tls: undefined, want: undefined, secrets: {} },
    {
      name: 'server certificate from a Secret, no client certificates',
      tls: { client: { serverSecretRef: { name: 'my-server' } } },
      want: { clientServerSecretRef: { name: 'my-server' }, clientMTLS: false },
      secrets: { clientServer: 'my-server' },
    },
    {
      name: 'Secrets with an operator client certificate: mutual TLS',
      tls: {
        client: { serverSecretRef: { name: 'my-server' }, operatorClientSecretRef: { name: 'my-op' } },
        peer: { secretRef: { name: 'my-peer' } },
      },
      want: {
        clientServerSecretRef: { name: 'my-server' },
        clientMTLS: true,
        peerSecretRef: { name: 'my-peer' },
      },
      secrets: { clientServer: 'my-server', operatorClient: 'my-op', peer: 'my-peer' },
    },
    {
      name: 'cert-manager',
      tls: {
        client: { certManager: { serverIssuerRef: { name: 'ca' } } },
        peer: { certManager: { issuerRef: { name: 'ca' } } },
      },
      want: {
        clientServerSecretRef: { name: 'demo-server-tls' },
        clientMTLS: false,
        peerSecretRef: { name: 'demo-peer-tls' },
        // The issuer may be shared (a ClusterIssuer): peers must name this cluster in this namespace.
        peerAllowedHostname: 'member.demo.prod.svc',
      },
      secrets: { clientServer: 'demo-server-tls', peer: 'demo-peer-tls' },
    },
    {
      name: 'cert-manager with an operator client issuer',
      tls: {
        client: { certManager: { serverIssuerRef: { name: 'ca' }, operatorClientIssuerRef: { name: 'ca' } } },
      },
      want: {
        clientServerSecretRef: { name: 'demo-server-tls' },
        clientMTLS: true,
        clientAllowedHostname: 'demo-client.prod.svc',
      },
      secrets: { clientServer: 'demo-server-tls', operatorClient: 'demo-operator-client-tls' },
    },
    {
      name: 'auto',
      tls: { client: { auto: {} }, peer: { auto: {} } },
      want: {
        clientServerSecretRef: { name: 'demo-server-tls' },
        clientMTLS: true,
        peerSecretRef: { name: 'demo-peer-tls' },
      },
      secrets: {
        clientServer: 'demo-server-tls',
        operatorClient: 'demo-operator-client-tls',
        peer: 'demo-peer-tls',
      },
    },
    {
      name: 'peer only',
      tls: { peer: { secretRef: { name: 'my-peer' } } },
      want: { peerSecretRef: { name: 'my-peer' } },
      secrets: { peer: 'my-peer' },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const ec = lockedCluster(c.tls ? { tls: c.tls } : {});
      assert.deepEqual(buildMember(ec, { bootstrap: false }).spec.tls, c.want);
      assert.deepEqual(tlsSecretNames(ec), c.secrets);
    });
  }
});
