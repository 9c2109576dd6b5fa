// A container's environment is built again at each in-place restart, as a real kubelet does (it
// creates a new container through the runtime with the env computed from the Pod it holds then): a
// variable read from a Pod annotation through the downward API takes the annotation's value at the
// time of the restart. The member Pod's empty-data guard (shared/builders/pod.ts) rests on it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';
import { startNode } from '../support/node.ts';
import type { Kubelet } from '../sandbox/kubelet/index.ts';
import { waitForPod } from '../sandbox/kubelet/wait.ts';

const NS = 'default';
const ANNOTATION = 'example.com/join';

describe('kubelet: env from an annotation follows the annotation at each in-place restart', () => {
  let dir: string;
  let api: TestApiServer;
  let kubelet: Kubelet;
  let core: CoreV1Api;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubelet-restart-env-'));
    api = await startApiServer();
    const kc = api.kc;
    kubelet = await startNode(api, {
      dataDir: join(dir, 'kubelet'),
      backoff: { initialMs: 200, maxMs: 500 },
    });
    core = kc.makeApiClient(CoreV1Api);
  });

  after(async () => {
    await kubelet?.stop();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a running container keeps what it started with; its restart in the same Pod reads the new value', async () => {
    const pod: V1Pod = {
      metadata: { name: 'reader', annotations: { [ANNOTATION]: 'first' } },
      spec: {
        containers: [
          {
            name: 'main',
            image: 'busybox:1.36',
            // The value it started with ends up in lastState.terminated.message once it is killed.
            command: ['sh', '-c', 'echo "$JOIN" > /dev/termination-log; exec sleep 300'],
            env: [
              {
                name: 'JOIN',
                valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${ANNOTATION}']` } },
              },
            ],
          },
        ],
        terminationGracePeriodSeconds: 1,
      },
    };
    const created = await core.createNamespacedPod({ namespace: NS, body: pod });
    const running = (restarts: number) => (p: V1Pod) => {
      const s = p.status?.containerStatuses?.[0];
      return s?.restartCount === restarts && s.state?.running !== undefined;
    };
    await waitForPod(core, `${NS}/reader`, 'to run', running(0));

    const patched = await core.patchNamespacedPod(
      { name: 'reader', namespace: NS, body: { metadata: { annotations: { [ANNOTATION]: 'second' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    // The restart must come after the kubelet's watch brought it the patch (a real kubelet's view
    // lags the same way): wait for the kubelet to hold that version of the Pod, however long it takes.
    await kubeletHolds(kubelet, 'reader', patched.metadata?.resourceVersion ?? '');

    await kubelet.faults.kill({ namespace: NS, pod: 'reader', container: 'main' });
    const once = await waitForPod(core, `${NS}/reader`, 'to restart once', running(1));
    assert.equal(once.status?.containerStatuses?.[0]?.lastState?.terminated?.message?.trim(), 'first');

    await kubelet.faults.kill({ namespace: NS, pod: 'reader', container: 'main' });
    const twice = await waitForPod(core, `${NS}/reader`, 'to restart twice', running(2));
    assert.equal(
      twice.status?.containerStatuses?.[0]?.lastState?.terminated?.message?.trim(),
      'second',
      'the restarted container read the annotation as it was at its restart',
    );
    assert.equal(twice.metadata?.uid, created.metadata?.uid, 'the same Pod throughout');
  });
});

/** Until the kubelet's own copy of the Pod is at `resourceVersion` or newer (integers on this API server). */
async function kubeletHolds(kubelet: Kubelet, pod: string, resourceVersion: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const held = (await kubelet.faults.state()).pods.find(p => p.namespace === NS && p.name === pod);
    if (held?.resourceVersion && BigInt(held.resourceVersion) >= BigInt(resourceVersion)) return;
    if (Date.now() > deadline) throw new Error(`the kubelet still holds ${pod} at ${held?.resourceVersion}`);
    await new Promise(resolve => setTimeout(resolve, 50));
  }
}
