// What etcdfn's ownership relies on, on the real control plane: each EtcdMember is owned by its
// EtcdCluster and each member's Pod by its EtcdMember (controller, blockOwnerDeletion), so deleting
// the EtcdCluster lets kube-controller-manager's garbage collector take the members and their Pods
// in the background, and leaves anything else alone.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, type V1OwnerReference } from '@kubernetes/client-node';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';
import { waitFor } from '../sandbox/kubelet/wait.ts';

const NS = 'default';
const GROUP = 'etcdfn.io';
const VERSION = 'v1alpha1';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;

const ownedBy = (owner: Any): V1OwnerReference[] => [
  {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  },
];

describe('ownership: EtcdCluster → EtcdMember → Pod, collected by the real garbage collector', () => {
  let api: TestApiServer;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;

  before(async () => {
    api = await startApiServer();
    core = api.kc.makeApiClient(CoreV1Api);
    custom = api.kc.makeApiClient(CustomObjectsApi);
  });
  after(async () => {
    await api?.close();
  });

  const members = async (): Promise<string[]> =>
    (
      (await custom.listNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: NS,
        plural: 'etcdmembers',
      })) as { items: Any[] }
    ).items.map(m => String(m.metadata.name));
  const pods = async (): Promise<string[]> =>
    (await core.listNamespacedPod({ namespace: NS })).items.map(p => p.metadata?.name ?? '').sort();

  it('deleting the EtcdCluster collects its members and their Pods, and nothing else', async () => {
    const cluster = (await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: NS,
      plural: 'etcdclusters',
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'EtcdCluster',
        metadata: { name: 'gc' },
        spec: { replicas: 2, version: '3.5.16' },
      },
    })) as Any;
    for (const i of [0, 1]) {
      const member = (await custom.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: NS,
        plural: 'etcdmembers',
        body: {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: 'EtcdMember',
          metadata: { name: `gc-${i}`, ownerReferences: ownedBy(cluster) },
          spec: {
            clusterName: 'gc',
            version: '3.5.16',
            storage: { size: '1Gi' },
            initialCluster: `gc-${i}=http://gc-${i}.gc:2380`,
            clusterToken: 'tok',
          },
        },
      })) as Any;
      await core.createNamespacedPod({
        namespace: NS,
        body: {
          metadata: { name: `gc-${i}`, ownerReferences: ownedBy(member) },
          spec: { containers: [{ name: 'etcd', image: 'quay.io/coreos/etcd:v3.5.16' }] },
        },
      });
    }
    await core.createNamespacedPod({
      namespace: NS,
      body: { metadata: { name: 'unrelated' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    });
    assert.deepEqual((await members()).sort(), ['gc-0', 'gc-1']);

    await custom.deleteNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: NS,
      plural: 'etcdclusters',
      name: 'gc',
    });
    // No kubelet runs these Pods: the collector's delete of a Pod bound to no node removes it at once.
    await waitFor('the members collected', async () => (await members()).length === 0, 60_000, 200);
    await waitFor('their Pods collected', async () => (await pods()).join() === 'unrelated', 60_000, 200);
  });
});
