// coordination.k8s.io/v1 Leases on the sandbox API server, as leader election uses them: create,
// read back every field (MicroTimes with six fractional digits), replace with the current
// resourceVersion, refuse a replace with a stale one (409), and two writers racing on the same
// version: exactly one wins.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeObjects } from '../../shared/k8s/objects.ts';
import type { Lease } from '../../standalone/leader.ts';
import { microTime } from '../../standalone/leader.ts';
import { startApiServer, type ApiServer } from '../sandbox/apiserver/index.ts';
import { kubeConfigFor } from '../sandbox/kubeconfig.ts';

const ROOT = join(import.meta.dirname, '..', '..');

describe('sandbox API server: Leases', () => {
  let api: ApiServer;
  let kube: KubeObjects;
  const ref = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'default', name: 'l' };

  before(async () => {
    api = await startApiServer({ port: 0, crdDir: join(ROOT, 'crds') });
    kube = new KubeObjects(kubeConfigFor(api.url));
  });
  after(async () => {
    await api.close();
  });

  it('stores and returns every field of the spec', async () => {
    const at = microTime(new Date('2026-11-25T03:00:00.123Z'));
    assert.equal(at, '2026-11-25T03:00:00.123000Z');
    const spec = {
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: at,
      renewTime: at,
      leaseTransitions: 0,
    };
    const created = await kube.create<Lease>({
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      metadata: { name: 'l', namespace: 'default' },
      spec,
    });
    assert.equal(created.kind, 'created');
    const read = await kube.get<Lease>(ref);
    assert.equal(read.kind, 'found');
    if (read.kind !== 'found') return;
    const got = { ...read.object.spec } as Record<string, unknown>;
    for (const k of ['acquireTime', 'renewTime']) got[k] = new Date(got[k] as string).toISOString();
    assert.deepEqual(got, {
      ...spec,
      acquireTime: '2026-11-25T03:00:00.123Z',
      renewTime: '2026-11-25T03:00:00.123Z',
    });
  });

  it('replaces on the current resourceVersion and refuses a stale one with 409', async () => {
    const read = await kube.get<Lease>(ref);
    assert.equal(read.kind, 'found');
    if (read.kind !== 'found') return;
    const first = await kube.replace<Lease>({
      ...read.object,
      spec: { ...read.object.spec, holderIdentity: 'b' },
    });
    assert.equal(first.kind, 'written');
    const stale = await kube.replace<Lease>({
      ...read.object,
      spec: { ...read.object.spec, holderIdentity: 'c' },
    });
    assert.equal(stale.kind, 'conflict');
    const after = await kube.get<Lease>(ref);
    assert.equal(after.kind === 'found' && after.object.spec?.holderIdentity, 'b');
  });

  it('two writers racing from the same version: exactly one wins', async () => {
    const read = await kube.get<Lease>(ref);
    if (read.kind !== 'found') throw new Error('no lease');
    const results = await Promise.all(
      ['x', 'y'].map(holder =>
        kube.replace<Lease>({ ...read.object, spec: { ...read.object.spec, holderIdentity: holder } }),
      ),
    );
    assert.deepEqual(results.map(r => r.kind).sort(), ['conflict', 'written']);
  });
});
