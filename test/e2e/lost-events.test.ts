// ApiServerSource drops events after its retries and never resyncs. With EVERY watch event lost,
// the resync tick alone must still bring a cluster to its target and keep it there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { beforeCreation, converged } from '../support/converge.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { openTickWindow } from '../support/ticks.ts';
import { waitFor } from '../support/wait.ts';

type Cluster = EtcdCluster & KubeObject;
type Member = EtcdMember & KubeObject;

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
    const probe = { kube, namespace: ref.namespace, name: ref.name };
    await converged(probe, { replicas: 1, since: beforeCreation(), timeoutMs: 240_000 });
    // The last details (each member's version in status) are recorded before the window opens.
    await waitFor('every member version recorded', async () => {
      const read = await kube.get<Cluster>(ref);
      const members = read.kind === 'found' ? read.object.status?.members : undefined;
      return members?.length === 1 && members.every(m => m.version) ? true : false;
    });
    // Steady state: across a window of two ticks answered by each function that reconciles the
    // cluster and its members, nothing is written: the resourceVersions do not move.
    const versions = async () => {
      const read = await kube.get<Cluster>(ref);
      const members = await kube.list<Member>(
        API_VERSION,
        'EtcdMember',
        ref.namespace,
        `etcdfn.io/cluster=${ref.name}`,
      );
      return [
        read.kind === 'found' ? read.object.metadata.resourceVersion : '',
        ...members.map(m => `${m.metadata.name}@${m.metadata.resourceVersion}`),
      ];
    };
    const settled = await versions();
    const window = openTickWindow(sandbox, ['reconcile-cluster', 'reconcile-member']);
    await window.close(2);
    assert.deepEqual(await versions(), settled, 'ticks on a reached target write nothing');
  });
});
