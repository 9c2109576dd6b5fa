// The per-reconcile Secret cache: what a TLS reconcile's Secret reads cost with and without it
// (auto TLS issuing + certificate status + the etcd access seam), and that a write is seen.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withSecretCache } from '../../shared/k8s/secret-cache.ts';
import type { KubeObject, KubeObjects, ObjectRef } from '../../shared/k8s/objects.ts';
import { keepCertificates } from '../../shared/reconcile/certificates.ts';
import { resolveClusterAccess } from '../../shared/runtime/cluster-etcd.ts';
import type { Context } from '../../shared/runtime/context.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const cluster = etcdCluster({
  metadata: { name: 'db', uid: 'cluster-uid' },
  spec: { tls: { client: { auto: {} }, peer: { auto: {} } } },
});
type Secret = KubeObject & { data?: Record<string, string> };

/** An in-memory API server counting each GET by name. */
function server() {
  const objects = new Map<string, Secret>();
  const gets: string[] = [];
  let version = 0;
  const store = (obj: Secret) => {
    const object = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++version) } };
    objects.set(obj.metadata.name ?? '', object);
    return object;
  };
  const kube = {
    get: (ref: ObjectRef) => {
      gets.push(ref.name);
      const object = objects.get(ref.name);
      return Promise.resolve(object ? { kind: 'found', object } : { kind: 'not-found' });
    },
    find: (ref: ObjectRef) => {
      gets.push(ref.name);
      return Promise.resolve(objects.get(ref.name));
    },
    create: (obj: Secret) =>
      Promise.resolve(
        objects.has(obj.metadata.name ?? '')
          ? { kind: 'already-exists' }
          : { kind: 'created', object: store(obj) },
      ),
    replace: (obj: Secret) => Promise.resolve({ kind: 'written', object: store(obj) }),
  } as unknown as KubeObjects;
  return { kube, gets, objects };
}

/** What one reconcile of a TLS cluster does with Secrets, in the order reconcileCluster does it. */
async function reconcileReads(kube: KubeObjects): Promise<void> {
  const ctx = { kube, now: () => new Date() } as unknown as Context;
  const kept = await keepCertificates(ctx, cluster);
  assert.equal(kept.problem, undefined);
  assert.equal((await resolveClusterAccess(kube, cluster)).kind, 'ok');
}

describe('withSecretCache', () => {
  it('a steady-state auto TLS reconcile reads each Secret once (9 GETs without the cache)', async () => {
    const api = server();
    // The first reconcile issues the CA and leaves (writes), which later ones only read.
    await keepCertificates({ kube: api.kube, now: () => new Date() } as unknown as Context, cluster);
    api.gets.length = 0;
    await reconcileReads(api.kube);
    const uncached = api.gets.length;
    api.gets.length = 0;
    await reconcileReads(withSecretCache(api.kube));
    assert.deepEqual([...api.gets].sort(), [
      'db-ca',
      'db-operator-client-tls',
      'db-peer-tls',
      'db-server-tls',
    ]);
    assert.equal(uncached, 9);
  });

  it('forgets a Secret this reconcile writes, and keeps nothing across reconciles', async () => {
    const api = server();
    const ref = { apiVersion: 'v1', kind: 'Secret', namespace: 'prod', name: 's' };
    const body = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'prod' } };
    const kube = withSecretCache(api.kube);
    assert.equal(await kube.find(ref), undefined);
    assert.equal(await kube.find(ref), undefined);
    assert.equal(api.gets.length, 1, 'a missing Secret is remembered too');
    await kube.create({ ...body, data: { v: '1' } });
    assert.equal((await kube.find<Secret>(ref))?.data?.v, '1');
    await kube.replace({ ...body, data: { v: '2' } });
    const read = await kube.get<Secret>(ref);
    assert.equal(read.kind === 'found' && read.object.data?.v, '2');
    assert.equal(api.gets.length, 3);
    // Another kind passes through uncached; a new reconcile (new cache) reads again.
    const pod = { ...ref, kind: 'Pod' };
    await kube.find(pod);
    await kube.find(pod);
    await withSecretCache(api.kube).find(ref);
    assert.equal(api.gets.length, 6);
  });
});
