// The sandbox with three nodes (one kubelet, extraNodes), on a real control plane: the
// scheduler spreads the Pods a Service selects over the nodes; claims of a WaitForFirstConsumer
// class (local volumes) wait for their first Pod, are pinned to its node (annotation
// volume.kubernetes.io/selected-node) and then bound to a PersistentVolume with node affinity to
// it. Deleting a Node object is a machine gone: its Pods' processes die, kube-controller-manager's
// pod GC deletes the Pods after its quarantine (40 s), and a new Pod for a claim pinned to that
// node stays Pending with kube-scheduler's words (PodScheduled False Unschedulable, a
// FailedScheduling Warning Event); a Pod without such a claim goes to a node left.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';
import { startNode } from '../support/node.ts';
import type { Kubelet } from '../sandbox/kubelet/index.ts';
import { SELECTED_NODE_ANNOTATION } from '../sandbox/kubelet/placement.ts';
import { isReady, readPod, waitFor, waitForPod } from '../sandbox/kubelet/wait.ts';

const NS = 'default';
const NODES = ['node-a', 'node-b', 'node-c'];
const CONFLICT =
  '0/2 nodes are available: 2 node(s) had volume node affinity conflict. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('sandbox nodes: spreading, local volumes pinned to a node, a node gone', () => {
  let dir: string;
  let api: TestApiServer;
  let kubelet: Kubelet;
  let core: CoreV1Api;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubelet-nodes-'));
    api = await startApiServer();
    const kc = api.kc;
    kubelet = await startNode(api, {
      dataDir: join(dir, 'kubelet'),
      nodeName: NODES[0],
      extraNodes: NODES.slice(1),
    });
    core = kc.makeApiClient(CoreV1Api);
    const storage = kc.makeApiClient(StorageV1Api);
    await storage.createStorageClass({
      body: {
        metadata: { name: 'local' },
        provisioner: 'rancher.io/local-path',
        volumeBindingMode: 'WaitForFirstConsumer',
      },
    });
    await core.createNamespacedService({
      namespace: NS,
      body: { metadata: { name: 'spread' }, spec: { selector: { app: 'spread' }, ports: [{ port: 80 }] } },
    });
  });

  after(async () => {
    await kubelet?.stop();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const claim = (name: string) =>
    core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: {
        metadata: { name },
        spec: {
          storageClassName: 'local',
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
        },
      },
    });
  const podWith = (name: string, claimName?: string): V1Pod => ({
    metadata: { name, labels: { app: 'spread' } },
    spec: {
      containers: [{ name: 'main', image: 'busybox:1.36', command: ['sleep', '300'] }],
      ...(claimName && { volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }] }),
    },
  });

  it('registers every node, spreads a Service’s Pods over them and pins each local claim to its Pod’s node', async () => {
    const nodes = await core.listNode();
    assert.deepEqual(nodes.items.map(n => n.metadata?.name).sort(), NODES);
    assert.deepEqual(kubelet.nodeNames, NODES);

    for (const i of [0, 1, 2]) await claim(`data-${i}`);
    const waiting = await waitFor('a WaitForFirstConsumer Event', async () => {
      const events = await core.listNamespacedEvent({ namespace: NS });
      return events.items.find(
        e => e.reason === 'WaitForFirstConsumer' && e.involvedObject.name === 'data-0',
      );
    });
    assert.equal(waiting.message, 'waiting for first consumer to be created before binding');
    assert.equal(
      (await core.readNamespacedPersistentVolumeClaim({ name: 'data-0', namespace: NS })).status?.phase,
      'Pending',
    );

    for (const i of [0, 1, 2])
      await core.createNamespacedPod({ namespace: NS, body: podWith(`p-${i}`, `data-${i}`) });
    const placed = new Map<string, string>();
    for (const i of [0, 1, 2]) {
      const pod = await waitForPod(core, `p-${i}`, 'ready', isReady, 60_000);
      placed.set(`p-${i}`, pod.spec?.nodeName ?? '');
      const pvc = await core.readNamespacedPersistentVolumeClaim({ name: `data-${i}`, namespace: NS });
      assert.equal(pvc.metadata?.annotations?.[SELECTED_NODE_ANNOTATION], pod.spec?.nodeName);
      assert.equal(pvc.status?.phase, 'Bound');
      // Bound to a node-local volume, as local-path-provisioner makes them.
      const pv = await core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' });
      const term = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0];
      assert.deepEqual(
        [term?.key, term?.operator, term?.values, pv.spec?.claimRef?.name],
        ['kubernetes.io/hostname', 'In', [pod.spec?.nodeName], `data-${i}`],
      );
    }
    assert.deepEqual([...placed.values()].sort(), NODES, 'one Pod per node');
  });

  it('a deleted node kills its Pods, the pod GC removes them, and its pinned claim’s new Pod stays Pending with the scheduler’s words', async () => {
    const victim = await readPod(core, NS, 'p-1');
    const node = victim?.spec?.nodeName ?? '';
    const state = await kubelet.faults.state();
    const pids = state.pods.find(p => p.name === 'p-1')!.containers.map(c => c.pid ?? -1);
    assert.ok(pids.length > 0 && pids.every(p => p > 0 && alive(p)), 'p-1 runs');

    await core.deleteNode({ name: node });
    await waitFor('p-1’s processes to die with its machine', () => pids.every(p => !alive(p)), 10_000);
    // kube-controller-manager's pod GC: a 40 s quarantine, checked every 20 s.
    await waitFor('the pod GC to delete p-1', async () => !(await readPod(core, NS, 'p-1')), 120_000, 500);

    await core.createNamespacedPod({ namespace: NS, body: podWith('p-1', 'data-1') });
    const pending = await waitForPod(core, 'p-1', 'unschedulable', p =>
      (p.status?.conditions ?? []).some(c => c.type === 'PodScheduled' && c.status === 'False'),
    );
    const scheduled = pending.status?.conditions?.find(c => c.type === 'PodScheduled');
    assert.equal(pending.spec?.nodeName, undefined, 'not bound');
    assert.equal(pending.status?.phase, 'Pending');
    assert.deepEqual([scheduled?.reason, scheduled?.message], ['Unschedulable', CONFLICT]);
    const event = await waitFor('a FailedScheduling Event', async () => {
      const events = await core.listNamespacedEvent({ namespace: NS });
      return events.items.find(
        e => e.reason === 'FailedScheduling' && e.involvedObject.uid === pending.metadata?.uid,
      );
    });
    assert.deepEqual(
      [event.type, event.message, event.source?.component],
      ['Warning', CONFLICT, 'default-scheduler'],
    );

    // A Pod whose volume is not pinned goes to a node that is left.
    await core.createNamespacedPod({ namespace: NS, body: podWith('free') });
    const free = await waitForPod(core, 'free', 'ready', isReady, 60_000);
    assert.ok(
      NODES.filter(n => n !== node).includes(free.spec?.nodeName ?? ''),
      `free went to ${free.spec?.nodeName}`,
    );
    // Still Pending a few scheduler rounds later; deleting the claim deletes its volume.
    await new Promise(r => setTimeout(r, 6_000));
    assert.equal((await readPod(core, NS, 'p-1'))?.spec?.nodeName, undefined);
    const volumeName = (await core.readNamespacedPersistentVolumeClaim({ name: 'data-1', namespace: NS }))
      .spec?.volumeName;
    await core.deleteNamespacedPod({ name: 'p-1', namespace: NS, gracePeriodSeconds: 0 });
    await core.deleteNamespacedPersistentVolumeClaim({ name: 'data-1', namespace: NS });
    await waitFor('the volume deleted with its claim', async () => {
      const list = await core.listPersistentVolume();
      return !list.items.some(v => v.metadata?.name === volumeName);
    });
  });
});
