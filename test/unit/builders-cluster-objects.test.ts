import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PodDisruptionBudget, V1Service } from '@kubernetes/client-node';
import {
  buildClientService,
  buildHeadlessService,
  buildPdb,
  isControlledBy,
  pdbDrift,
  pdbMinAvailable,
  serviceDrift,
} from '../../shared/builders/index.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

/** What the API server hands back: the desired object plus fields it defaults or assigns. */
function asStored(svc: V1Service): V1Service {
  const copy = structuredClone(svc);
  copy.metadata = { ...copy.metadata, resourceVersion: '7', uid: 'svc-uid' };
  copy.spec = { ...copy.spec, sessionAffinity: 'None', clusterIPs: ['10.0.0.9'] };
  return copy;
}

describe('Services', () => {
  it('the headless Service publishes every member, ready or not, for peer discovery', () => {
    const svc = buildHeadlessService(etcdCluster());
    assert.equal(svc.metadata?.name, 'demo');
    assert.equal(svc.metadata?.namespace, 'prod');
    assert.equal(svc.spec?.clusterIP, 'None');
    assert.equal(svc.spec?.publishNotReadyAddresses, true);
    assert.deepEqual(svc.spec?.selector, { 'etcdfn.io/cluster': 'demo' });
    assert.deepEqual(
      svc.spec?.ports?.map(p => [p.name, p.port]),
      [
        ['client', 2379],
        ['peer', 2380],
      ],
    );
  });

  it('the client Service selects ready voters only, so clients never land on a learner', () => {
    const svc = buildClientService(etcdCluster());
    assert.equal(svc.metadata?.name, 'demo-client');
    assert.equal(svc.spec?.type, 'ClusterIP');
    assert.notEqual(svc.spec?.clusterIP, 'None');
    assert.equal(svc.spec?.publishNotReadyAddresses, false);
    assert.deepEqual(svc.spec?.selector, { 'etcdfn.io/cluster': 'demo', 'etcdfn.io/role': 'voter' });
    assert.deepEqual(
      svc.spec?.ports?.map(p => [p.name, p.port]),
      [['client', 2379]],
    );
  });

  it('both carry the cluster labels and additionalMetadata, and are owned by the cluster', () => {
    const c = etcdCluster({
      spec: {
        additionalMetadata: {
          labels: { team: 'db', 'etcdfn.io/cluster': 'evil' },
          annotations: { note: 'x' },
        },
      },
    });
    for (const svc of [buildHeadlessService(c), buildClientService(c)]) {
      assert.equal(svc.metadata?.labels?.['etcdfn.io/cluster'], 'demo');
      assert.equal(svc.metadata?.labels?.team, 'db');
      assert.deepEqual(svc.metadata?.annotations, { note: 'x' });
      assert.equal(isControlledBy(svc, c), true);
    }
  });

  it('an untouched Service has no drift', () => {
    for (const desired of [buildHeadlessService(etcdCluster()), buildClientService(etcdCluster())]) {
      assert.equal(serviceDrift(asStored(desired), desired), undefined);
    }
  });

  it('what users add to a Service is theirs: extra ports, type, labels and annotations are kept', () => {
    const desired = buildClientService(etcdCluster());
    const existing = asStored(desired);
    existing.spec!.type = 'LoadBalancer';
    existing.spec!.ports![0].nodePort = 31000;
    existing.spec!.ports!.push({ name: 'extra', port: 9000 });
    existing.metadata!.labels = { mine: 'yes' };
    existing.metadata!.annotations = { 'lb.example/x': 'y' };
    assert.equal(serviceDrift(existing, desired), undefined);
  });

  it('a selector that no longer selects voters only is put back exactly', () => {
    const desired = buildClientService(etcdCluster());
    const existing = asStored(desired);
    existing.spec!.selector = { 'etcdfn.io/cluster': 'demo', extra: 'x' };
    assert.deepEqual(serviceDrift(existing, desired), {
      spec: { selector: { extra: null, 'etcdfn.io/role': 'voter' } },
    });
  });

  it('publishNotReadyAddresses is restored on the headless Service', () => {
    const desired = buildHeadlessService(etcdCluster());
    const existing = asStored(desired);
    delete existing.spec!.publishNotReadyAddresses;
    assert.deepEqual(serviceDrift(existing, desired), { spec: { publishNotReadyAddresses: true } });
  });

  it('a changed named port is fixed in place, keeping the user ports and its nodePort', () => {
    const desired = buildHeadlessService(etcdCluster());
    const existing = asStored(desired);
    existing.spec!.ports = [
      { name: 'client', port: 12379, targetPort: 12379, protocol: 'TCP', nodePort: 30001 },
      { name: 'debug', port: 6060 },
    ];
    const patch = serviceDrift(existing, desired);
    assert.deepEqual(patch?.spec.ports, [
      { name: 'client', port: 2379, targetPort: 2379, protocol: 'TCP', nodePort: 30001 },
      { name: 'debug', port: 6060 },
      { name: 'peer', port: 2380, targetPort: 2380, protocol: 'TCP' },
    ]);
    assert.equal(patch?.spec.selector, undefined);
  });

  it('a user port squatting on one of our port numbers gives way', () => {
    const desired = buildClientService(etcdCluster());
    const existing = asStored(desired);
    existing.spec!.ports = [{ name: 'grpc', port: 2379, protocol: 'TCP' }];
    assert.deepEqual(serviceDrift(existing, desired)?.spec.ports, desired.spec?.ports);
  });
});

describe('PodDisruptionBudget', () => {
  // voters / target replicas → minAvailable: quorum of the larger of the two.
  const table: [number, number, number][] = [
    [1, 1, 1],
    [2, 2, 2],
    [3, 3, 2],
    [4, 4, 3],
    [5, 5, 3],
    [7, 7, 4],
    [3, 5, 3],
    [5, 3, 3],
    [1, 3, 2],
  ];
  for (const [voters, target, want] of table) {
    it(`${voters} voters, target ${target} → minAvailable ${want}`, () => {
      assert.equal(pdbMinAvailable(voters, target), want);
      assert.equal(buildPdb(etcdCluster(), { voters, targetReplicas: target })?.spec?.minAvailable, want);
    });
  }

  it('no voters, no PDB (the caller deletes it)', () => {
    assert.equal(buildPdb(etcdCluster(), { voters: 0, targetReplicas: 3 }), undefined);
    assert.equal(pdbMinAvailable(0, 0), 0);
  });

  it('selects the voters of this cluster, is owned by it and named after it', () => {
    const pdb = buildPdb(etcdCluster({ spec: { additionalMetadata: { labels: { team: 'db' } } } }), {
      voters: 3,
    })!;
    assert.equal(pdb.apiVersion, 'policy/v1');
    assert.equal(pdb.metadata?.name, 'demo');
    assert.deepEqual(pdb.spec?.selector, {
      matchLabels: { 'etcdfn.io/cluster': 'demo', 'etcdfn.io/role': 'voter' },
    });
    assert.equal(pdb.spec?.maxUnavailable, undefined);
    assert.equal(pdb.metadata?.labels?.team, 'db');
    assert.equal(isControlledBy(pdb, etcdCluster()), true);
  });

  it('the target defaults to the locked target, then to the spec', () => {
    const c = etcdCluster();
    assert.equal(buildPdb(c, { voters: 1 })?.spec?.minAvailable, 2);
    c.status = { observed: { replicas: 5, version: '3.5.16', storage: {} } };
    assert.equal(buildPdb(c, { voters: 1 })?.spec?.minAvailable, 3);
  });

  const stored = (pdb: V1PodDisruptionBudget): V1PodDisruptionBudget => ({
    ...structuredClone(pdb),
    metadata: { ...pdb.metadata, resourceVersion: '3' },
    status: { currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1, expectedPods: 3 },
  });

  it('no drift when only the status and labels differ', () => {
    const desired = buildPdb(etcdCluster(), { voters: 3 })!;
    const existing = stored(desired);
    existing.metadata!.labels = { mine: 'x' };
    assert.equal(pdbDrift(existing, desired), undefined);
  });

  it('follows the voter count and drops a maxUnavailable someone set', () => {
    const desired = buildPdb(etcdCluster(), { voters: 5, targetReplicas: 5 })!;
    const existing = stored(buildPdb(etcdCluster(), { voters: 3 })!);
    existing.spec!.maxUnavailable = 1;
    assert.deepEqual(pdbDrift(existing, desired), { spec: { minAvailable: 3, maxUnavailable: null } });
  });

  it('puts back a selector that no longer selects exactly the voters', () => {
    const desired = buildPdb(etcdCluster(), { voters: 3 })!;
    const existing = stored(desired);
    existing.spec!.selector = {
      matchLabels: { 'etcdfn.io/cluster': 'demo' },
      matchExpressions: [{ key: 'x', operator: 'Exists' }],
    };
    assert.deepEqual(pdbDrift(existing, desired), {
      spec: { selector: { matchLabels: { 'etcdfn.io/role': 'voter' }, matchExpressions: null } },
    });
  });
});
