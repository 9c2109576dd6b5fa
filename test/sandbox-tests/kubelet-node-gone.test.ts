// The sandbox's pod garbage collector (kubelet/pod-gc.ts) with an in-process API server and kubelet:
// once a Node object is deleted (the machine is gone), the Pods bound to it are marked as
// kube-controller-manager's PodGC marks them — phase Failed, DisruptionTarget True with reason
// DeletionByPodGC — and deleted with grace 0, after a quarantine. Pods on nodes that exist, and
// Pods not bound yet, are left alone.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { startApiServer } from '../sandbox/apiserver/index.ts';
import type { ApiServer } from '../sandbox/apiserver/index.ts';
import { kubeConfigFor } from '../sandbox/kubeconfig.ts';
import { startKubelet } from '../sandbox/kubelet/index.ts';
import type { Kubelet } from '../sandbox/kubelet/index.ts';
import { readPod, sleep, waitFor } from '../sandbox/kubelet/wait.ts';

const NS = 'default';
const QUARANTINE_MS = 1_500;

describe('sandbox pod GC: Pods of a deleted node', () => {
  let dir: string;
  let api: ApiServer;
  let kubelet: Kubelet;
  let core: CoreV1Api;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubelet-node-gone-'));
    api = await startApiServer({ port: 0, podGracefulDeletion: true });
    const kc = kubeConfigFor(api.url);
    kubelet = await startKubelet({ kc, dataDir: join(dir, 'kubelet'), podGcQuarantineMs: QUARANTINE_MS });
    core = kc.makeApiClient(CoreV1Api);
  });

  after(async () => {
    await kubelet?.stop();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A Pod bound to `node`; a finalizer keeps it readable after its deletion. */
  const boundTo = (name: string, node: string | undefined): V1Pod => ({
    metadata: { name, finalizers: ['example.com/keep'] },
    spec: {
      ...(node && { nodeName: node }),
      containers: [{ name: 'main', image: 'busybox:1.36', command: ['sleep', '300'] }],
    },
  });
  const release = (name: string) =>
    core.patchNamespacedPod(
      { name, namespace: NS, body: { metadata: { finalizers: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );

  it('a deleted node’s Pods are marked Failed (DeletionByPodGC) and force-deleted after the quarantine', async () => {
    for (const node of ['far', 'near']) await core.createNode({ body: { metadata: { name: node } } });
    await core.createNamespacedPod({ namespace: NS, body: boundTo('on-far', 'far') });
    await core.createNamespacedPod({ namespace: NS, body: boundTo('on-near', 'near') });
    const started = Date.now();
    await core.deleteNode({ name: 'far' });

    const gone = await waitFor(
      'on-far collected',
      async () => {
        const p = await readPod(core, NS, 'on-far');
        return p?.metadata?.deletionTimestamp ? p : undefined;
      },
      30_000,
      100,
    );
    assert.ok(Date.now() - started >= QUARANTINE_MS, 'not before the quarantine');
    assert.equal(gone.metadata?.deletionGracePeriodSeconds, 0, 'deleted with grace 0');
    assert.equal(gone.status?.phase, 'Failed');
    const target = gone.status?.conditions?.find(c => c.type === 'DisruptionTarget');
    assert.deepEqual(
      [target?.status, target?.reason, target?.message],
      ['True', 'DeletionByPodGC', 'PodGC: node no longer exists'],
    );

    // The Pod of a node that exists is untouched, well past the quarantine.
    await sleep(QUARANTINE_MS + 1_500);
    const near = await readPod(core, NS, 'on-near');
    assert.equal(near?.metadata?.deletionTimestamp, undefined);
    assert.notEqual(near?.status?.phase, 'Failed');
    for (const name of ['on-far', 'on-near']) await release(name);
    await core.deleteNamespacedPod({ name: 'on-near', namespace: NS, gracePeriodSeconds: 0 });
  });

  it('a node deleted and back within the quarantine costs its Pods nothing', async () => {
    await core.createNode({ body: { metadata: { name: 'blink' } } });
    await core.createNamespacedPod({ namespace: NS, body: boundTo('on-blink', 'blink') });
    await core.deleteNode({ name: 'blink' });
    await sleep(QUARANTINE_MS / 3);
    await core.createNode({ body: { metadata: { name: 'blink' } } });
    await sleep(QUARANTINE_MS + 2_000);
    const pod = await readPod(core, NS, 'on-blink');
    assert.equal(pod?.metadata?.deletionTimestamp, undefined);
    await release('on-blink');
    await core.deleteNamespacedPod({ name: 'on-blink', namespace: NS, gracePeriodSeconds: 0 });
  });
});
