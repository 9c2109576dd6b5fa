// The kubelet's disruption controller with an in-process API server and kubelet (no DNS needed):
// PodDisruptionBudget status follows the Pods, `kubectl get pdb` shows it, and a steady state
// makes no status writes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, PatchStrategy, PolicyV1Api, setHeaderOptions } from '@kubernetes/client-node';
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { startApiServer } from '../sandbox/apiserver/index.ts';
import type { ApiServer } from '../sandbox/apiserver/index.ts';
import { kubeConfigFor } from '../sandbox/kubeconfig.ts';
import { startKubelet } from '../sandbox/kubelet/index.ts';
import type { Kubelet } from '../sandbox/kubelet/index.ts';
import { isReady, waitFor, waitForPod, waitForPodGone } from '../sandbox/kubelet/wait.ts';
import { kubectl } from '../support/kubectl.ts';

const NS = 'default';
const PODS = ['web-0', 'web-1', 'web-2'];

describe('kubelet: disruption controller (PodDisruptionBudget status)', () => {
  let dir: string;
  let api: ApiServer;
  let kubelet: Kubelet;
  let core: CoreV1Api;
  let policy: PolicyV1Api;
  let kubeconfig: string;
  /** the API server's request log ("METHOD path?query") */
  const requests: string[] = [];
  const statusWrites = (): number =>
    requests.filter(r =>
      /^(PUT|PATCH) \/apis\/policy\/v1\/namespaces\/default\/poddisruptionbudgets\/web\/status/.test(r),
    ).length;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubelet-disruption-'));
    api = await startApiServer({ port: 0, podGracefulDeletion: true, log: line => requests.push(line) });
    const kc = kubeConfigFor(api.url);
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, kc.exportConfig());
    kubelet = await startKubelet({ kc, dataDir: join(dir, 'kubelet') });
    core = kc.makeApiClient(CoreV1Api);
    policy = kc.makeApiClient(PolicyV1Api);
  });

  after(async () => {
    await kubelet?.stop();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const readPdb = (): Promise<V1PodDisruptionBudget> =>
    policy.readNamespacedPodDisruptionBudget({ name: 'web', namespace: NS });

  /**
   * Closes a "nothing was written" window with an event the controller must answer with one status
   * write (minAvailable lowered to 1): it handles its events in order, so once that write is there,
   * every change before it has been handled. Returns the status writes made in the window (the
   * sentinel's own not counted) and puts minAvailable back to 2.
   */
  async function writesBeforeSentinel(writesAtStart: number): Promise<number> {
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const setMin = async (minAvailable: number) => {
      const patched = await policy.patchNamespacedPodDisruptionBudget(
        { name: 'web', namespace: NS, body: { spec: { minAvailable } } },
        merge,
      );
      await waitFor(`the status for minAvailable ${minAvailable}`, async () => {
        const p = await readPdb();
        return p.status?.observedGeneration === patched.metadata?.generation && p;
      });
    };
    await setMin(1);
    const inWindow = statusWrites() - writesAtStart - 1;
    await setMin(2);
    return inWindow;
  }

  /** The ALLOWED DISRUPTIONS column of `kubectl get pdb` for the budget `web`. */
  async function allowedColumn(): Promise<string> {
    const out = await kubectl(kubeconfig, 'get', 'pdb', '-n', NS);
    const [header, ...rows] = out.trim().split('\n');
    const columns = header.split(/\s{2,}/);
    const row = rows.map(r => r.split(/\s{2,}/)).find(cells => cells[0] === 'web');
    assert.ok(row, `no row for web in:\n${out}`);
    return row[columns.indexOf('ALLOWED DISRUPTIONS')];
  }

  it('3 ready Pods under minAvailable 2 allow 1 disruption; kubectl get pdb shows it', async () => {
    for (const name of PODS) {
      await core.createNamespacedPod({
        namespace: NS,
        body: {
          metadata: { name, labels: { app: 'web' } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'exec sleep 3600'] }],
          },
        },
      });
    }
    for (const name of PODS) await waitForPod(core, `${NS}/${name}`, 'Ready', isReady);
    await policy.createNamespacedPodDisruptionBudget({
      namespace: NS,
      body: {
        metadata: { name: 'web' },
        spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
      },
    });
    const pdb = await waitFor('disruptionsAllowed 1', async () => {
      const p = await readPdb();
      return p.status?.disruptionsAllowed === 1 && p;
    });
    assert.equal(pdb.status?.currentHealthy, 3);
    assert.equal(pdb.status?.desiredHealthy, 2);
    assert.equal(pdb.status?.expectedPods, 3);
    assert.equal(pdb.status?.observedGeneration, pdb.metadata?.generation);
    assert.deepEqual(
      pdb.status?.conditions?.map(c => [c.type, c.status, c.reason]),
      [['DisruptionAllowed', 'True', 'SufficientPods']],
    );
    assert.equal(await allowedColumn(), '1');
    assert.ok(statusWrites() >= 1, 'the status is written through the status subresource');
  });

  it('a steady state makes no status writes', async () => {
    const writes = statusWrites();
    // A label change the selector still matches re-syncs the budget, whose figures stay the same.
    await core.patchNamespacedPod(
      { name: 'web-0', namespace: NS, body: { metadata: { labels: { tier: 'front' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    // Not even a write of the same status (which the API server would take without a new version).
    assert.equal(await writesBeforeSentinel(writes), 0);
  });

  it('deleting one Pod leaves no disruption allowed', async () => {
    await core.deleteNamespacedPod({ name: 'web-2', namespace: NS });
    const pdb = await waitFor('disruptionsAllowed 0', async () => {
      const p = await readPdb();
      return p.status?.disruptionsAllowed === 0 && p;
    });
    assert.equal(pdb.status?.currentHealthy, 2);
    assert.deepEqual(
      pdb.status?.conditions?.map(c => [c.type, c.status, c.reason]),
      [['DisruptionAllowed', 'False', 'InsufficientPods']],
    );
    assert.equal(await allowedColumn(), '0');
    await waitForPodGone(core, NS, 'web-2');
    const gone = await waitFor('expectedPods 2', async () => {
      const p = await readPdb();
      return p.status?.expectedPods === 2 && p;
    });
    assert.deepEqual(
      [gone.status?.currentHealthy, gone.status?.desiredHealthy, gone.status?.disruptionsAllowed],
      [2, 2, 0],
    );
    // Its own status write comes back as a watch event and re-syncs: that must write nothing more.
    assert.equal(await writesBeforeSentinel(statusWrites()), 0);
    assert.equal((await readPdb()).status?.disruptionsAllowed, 0);
  });
});
