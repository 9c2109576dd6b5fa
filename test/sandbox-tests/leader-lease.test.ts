// coordination.k8s.io/v1 Leases on the real API server, as the standalone leader election
// (standalone/leader.ts) uses them through KubeObjects: create, read back every field (MicroTimes
// with six fractional digits), replace with the current resourceVersion, refuse a replace with a
// stale one (409), and two writers racing on the same version: exactly one wins.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeObjects } from '../../shared/k8s/objects.ts';
import type { Lease } from '../../standalone/leader.ts';
import { microTime } from '../../standalone/leader.ts';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';

describe('Leases for the standalone leader election', () => {
  let api: TestApiServer;
  let kube: KubeObjects;
  const ref = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'default', name: 'l' };

  before(async () => {
    api = await startApiServer({ crdDirs: [] });
    kube = new KubeObjects(api.kc);
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
