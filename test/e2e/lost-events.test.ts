// ApiServerSource drops events after its retries and never resyncs. With EVERY watch event lost,
// the resync tick alone must still bring a cluster to its target and keep it there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';

type Cluster = EtcdCluster & KubeObject;

describe('every watch event lost: the tick alone converges', { timeout: 300_000 }, () => {
  let sandbox: FullSandbox;
  let kube: KubeObjects;
  const ref = { apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: 'default', name: 'lost' };

  before(async () => {
    sandbox = await startFullSandbox({ loseEvents: 1, tickSeconds: 1 });
    kube = new KubeObjects(sandbox.kc);
  });
  after(async () => sandbox?.stop());

  it('a new 1-member cluster reaches Ready 1/1 on ticks only, then stays put', async () => {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: ref.name, namespace: ref.namespace },
      spec: { replicas: 1, version: '3.5.16' },
    });
    assert.equal(created.kind, 'created');
    const ready = await waitFor(
      'Ready 1/1 and Running',
      async () => {
        const read = await kube.get<Cluster>(ref);
        const status = read.kind === 'found' ? read.object.status : undefined;
        return status?.ready === '1/1' && status.phase === 'Running' && !status.operation ? read : false;
      },
      { timeoutMs: 180_000, intervalMs: 500 },
      async () =>
        JSON.stringify(
          (await kube.get<Cluster>(ref)).kind === 'found'
            ? ((await kube.get<Cluster>(ref)) as { object: Cluster }).object.status
            : {},
        ),
    );
    assert.equal(ready.kind, 'found');
    // Steady state: once the last details (member versions, the PDB) are recorded, further ticks
    // read and write nothing, so the resourceVersion stops moving.
    const rv = async () => {
      const read = await kube.get<Cluster>(ref);
      return read.kind === 'found' ? read.object.metadata.resourceVersion : '';
    };
    await new Promise(r => setTimeout(r, 5000));
    const settled = await rv();
    await new Promise(r => setTimeout(r, 5000));
    assert.equal(await rv(), settled, 'ticks on a reached target write nothing');
  });
});
