// The Kubernetes adapter against the sandbox API server, through @kubernetes/client-node over HTTP:
// the outcomes a function branches on (found / not-found, written / conflict, created /
// already-exists, invalid) must come back as values, never as exceptions to parse.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { KubeApiError } from '../../shared/k8s/errors.ts';
import { startApiServer } from '../support/api-server.ts';
import { kubeConfigFor } from '../sandbox/kubeconfig.ts';

type Cluster = KubeObject & { spec: Record<string, unknown>; status?: Record<string, unknown> };

describe('KubeObjects against the sandbox API server', () => {
  let server: Awaited<ReturnType<typeof startApiServer>>;
  let kube: KubeObjects;
  const ref = { apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: 'default', name: 'adapter' };

  before(async () => {
    server = await startApiServer();
    kube = new KubeObjects(server.kc);
  });
  after(async () => server.close());

  it('get of a missing object is not-found', async () => {
    assert.deepEqual(await kube.get(ref), { kind: 'not-found' });
  });

  it('create, then create again is already-exists', async () => {
    const cluster = {
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: 'adapter', namespace: 'default' },
      spec: { version: '3.5.16' },
    };
    const created = await kube.create(cluster);
    assert.equal(created.kind, 'created');
    if (created.kind === 'created')
      assert.equal((created.object as Cluster).spec.replicas, 3, 'schema default applied');
    assert.deepEqual(await kube.create(cluster), { kind: 'already-exists' });
  });

  it('an invalid object is refused with the rule message', async () => {
    const bad = {
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: 'paused-in-memory', namespace: 'default' },
      spec: { version: '3.5.16', replicas: 0, storage: { medium: 'Memory', size: '1Gi' } },
    };
    const result = await kube.create(bad);
    assert.equal(result.kind, 'invalid');
    if (result.kind === 'invalid') assert.match(result.message, /Memory/);
  });

  it('status writes are compare-and-swap: the second writer with a stale version gets conflict', async () => {
    const read = await kube.get<Cluster>(ref);
    assert.equal(read.kind, 'found');
    if (read.kind !== 'found') return;
    const first = await kube.replaceStatus({ ...read.object, status: { phase: 'Pending', readyMembers: 0 } });
    assert.equal(first.kind, 'written');
    const stale = await kube.replaceStatus({ ...read.object, status: { phase: 'Running', readyMembers: 3 } });
    assert.equal(stale.kind, 'conflict');
    const now = await kube.get<Cluster>(ref);
    assert.equal(
      now.kind === 'found' && now.object.status?.phase,
      'Pending',
      'the stale write changed nothing',
    );
  });

  it('a status write cannot change the spec', async () => {
    const read = await kube.get<Cluster>(ref);
    if (read.kind !== 'found') assert.fail('cluster missing');
    const written = await kube.replaceStatus({ ...read.object, spec: { ...read.object.spec, replicas: 7 } });
    assert.equal(written.kind, 'written');
    if (written.kind === 'written') assert.equal((written.object as Cluster).spec.replicas, 3);
  });

  it('an unconditional write is refused before it is sent', async () => {
    const read = await kube.get<Cluster>(ref);
    if (read.kind !== 'found') assert.fail('cluster missing');
    const { resourceVersion: _rv, ...metadata } = read.object.metadata;
    await assert.rejects(kube.replaceStatus({ ...read.object, metadata }), /no metadata.resourceVersion/);
  });

  it('merge patch with a resourceVersion is conditional too', async () => {
    const read = await kube.get<Cluster>(ref);
    if (read.kind !== 'found') assert.fail('cluster missing');
    const rv = read.object.metadata.resourceVersion;
    const ok = await kube.mergePatch(ref, { metadata: { resourceVersion: rv, labels: { team: 'db' } } });
    assert.equal(ok.kind, 'written');
    const stale = await kube.mergePatch(ref, { metadata: { resourceVersion: rv, labels: { team: 'web' } } });
    assert.equal(stale.kind, 'conflict');
  });

  it('list by label, across namespaces, with apiVersion and kind on every item', async () => {
    const pod = (name: string, ns: string, labels: Record<string, string>) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: ns, labels },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
    await kube.create(pod('p1', 'default', { 'etcdfn.io/cluster': 'adapter' }));
    await kube.create(pod('p2', 'other', { 'etcdfn.io/cluster': 'adapter' }));
    await kube.create(pod('p3', 'default', { 'etcdfn.io/cluster': 'else' }));
    const all = await kube.list('v1', 'Pod', '', 'etcdfn.io/cluster=adapter');
    assert.deepEqual(all.map(p => p.metadata.name).sort(), ['p1', 'p2']);
    assert.ok(all.every(p => p.kind === 'Pod' && p.apiVersion === 'v1'));
    const here = await kube.list('v1', 'Pod', 'default', 'etcdfn.io/cluster=adapter');
    assert.deepEqual(
      here.map(p => p.metadata.name),
      ['p1'],
    );
  });

  it('a delete by uid leaves a newer object of the same name alone', async () => {
    const podRef = { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'p1' };
    const result = await kube.delete(podRef, { gracePeriodSeconds: 0, uid: 'an-older-incarnation' });
    assert.equal(result.kind, 'conflict');
    assert.equal((await kube.get(podRef)).kind, 'found');
  });

  it('delete, then delete again is not-found', async () => {
    const podRef = { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'p3' };
    assert.deepEqual(await kube.delete(podRef, { gracePeriodSeconds: 0 }), { kind: 'deleted' });
    assert.deepEqual(await kube.delete(podRef, { gracePeriodSeconds: 0 }), { kind: 'not-found' });
  });

  it('an unreachable API server throws a KubeApiError saying what failed', async () => {
    const dead = new KubeObjects(kubeConfigFor('http://127.0.0.1:9'));
    await assert.rejects(
      dead.get(ref),
      (err: unknown) =>
        err instanceof KubeApiError && /get EtcdCluster default\/adapter failed/.test(err.message),
    );
  });
});
