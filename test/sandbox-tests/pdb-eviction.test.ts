// What etcdfn's PodDisruptionBudget over a cluster's voters (shared/builders/pdb.ts: minAvailable
// a number, selector cluster + role=voter, Pods with no scalable controller) does on a real
// cluster, with Pods our kubelet runs and reports Ready: kube-controller-manager's disruption
// controller keeps the budget's status (`kubectl get pdb` shows it), the API server's eviction
// lets one of three voters go under minAvailable 2 and refuses the next with the budget in the
// cause, leaves a Pod the budget does not select (a learner) alone, and refuses a Pod under two
// budgets.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, PolicyV1Api } from '@kubernetes/client-node';
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';
import { kubectl } from '../support/kubectl.ts';
import { startNode } from '../support/node.ts';
import type { Kubelet } from '../sandbox/kubelet/index.ts';
import { isReady, waitFor, waitForPod, waitForPodGone } from '../sandbox/kubelet/wait.ts';

const NS = 'default';
const VOTERS = ['demo-0', 'demo-1', 'demo-2'];
const labels = (role: string) => ({ 'etcdfn.io/cluster': 'demo', 'etcdfn.io/role': role });

describe('PodDisruptionBudgets and eviction on the real API server, Pods on our node', () => {
  let dir: string;
  let api: TestApiServer;
  let kubelet: Kubelet;
  let core: CoreV1Api;
  let policy: PolicyV1Api;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pdb-eviction-'));
    api = await startApiServer();
    kubelet = await startNode(api, { dataDir: join(dir, 'kubelet') });
    core = api.kc.makeApiClient(CoreV1Api);
    policy = api.kc.makeApiClient(PolicyV1Api);
  });

  after(async () => {
    await kubelet?.stop();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const createPod = (name: string, role: string) =>
    core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name, labels: labels(role) },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'exec sleep 3600'] }],
        },
      },
    });
  const budget = (name: string, minAvailable: number): Promise<V1PodDisruptionBudget> =>
    policy.createNamespacedPodDisruptionBudget({
      namespace: NS,
      body: { metadata: { name }, spec: { minAvailable, selector: { matchLabels: labels('voter') } } },
    });
  const readPdb = (name = 'demo') => policy.readNamespacedPodDisruptionBudget({ name, namespace: NS });
  const evict = (pod: string) =>
    api.request('POST', `/api/v1/namespaces/${NS}/pods/${pod}/eviction`, {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: pod, namespace: NS },
    });

  /** The ALLOWED DISRUPTIONS column of `kubectl get pdb` for a budget. */
  async function allowedColumn(name: string): Promise<string> {
    const out = await kubectl(api.kubeconfig, 'get', 'pdb', '-n', NS);
    const [header, ...rows] = out.trim().split('\n');
    const columns = header.split(/\s{2,}/);
    const row = rows.map(r => r.split(/\s{2,}/)).find(cells => cells[0] === name);
    assert.ok(row, `no row for ${name} in:\n${out}`);
    return row[columns.indexOf('ALLOWED DISRUPTIONS')];
  }

  it('3 ready voters under minAvailable 2: kube-controller-manager allows 1 disruption; kubectl get pdb shows it', async () => {
    for (const name of VOTERS) await createPod(name, 'voter');
    await createPod('demo-3', 'learner');
    for (const name of [...VOTERS, 'demo-3']) await waitForPod(core, `${NS}/${name}`, 'Ready', isReady);
    await budget('demo', 2);
    const pdb = await waitFor('disruptionsAllowed 1', async () => {
      const p = await readPdb();
      return p.status?.disruptionsAllowed === 1 && p;
    });
    assert.deepEqual(
      [pdb.status?.currentHealthy, pdb.status?.desiredHealthy, pdb.status?.expectedPods],
      [3, 2, 3],
    );
    assert.equal(pdb.status?.observedGeneration, pdb.metadata?.generation);
    assert.deepEqual(
      pdb.status?.conditions?.map(c => [c.type, c.status, c.reason]),
      [['DisruptionAllowed', 'True', 'SufficientPods']],
    );
    assert.equal(await allowedColumn('demo'), '1');
  });

  it('evicts one voter and refuses the next with 429 and the budget in the cause', async () => {
    const first = await evict('demo-0');
    assert.equal(first.status, 201, first.body);
    const refused = await evict('demo-1');
    assert.equal(refused.status, 429, refused.body);
    const status = JSON.parse(refused.body) as {
      reason: string;
      message: string;
      details?: { causes?: { reason: string; message: string }[] };
    };
    assert.equal(status.reason, 'TooManyRequests');
    assert.equal(status.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    assert.deepEqual(status.details?.causes, [
      {
        reason: 'DisruptionBudget',
        message: 'The disruption budget demo needs 2 healthy pods and has 2 currently',
      },
    ]);
    // The evicted Pod goes (our kubelet stops it) and the budget follows.
    await waitForPodGone(core, NS, 'demo-0');
    const pdb = await waitFor('expectedPods 2', async () => {
      const p = await readPdb();
      return p.status?.expectedPods === 2 && p;
    });
    assert.deepEqual(
      [pdb.status?.currentHealthy, pdb.status?.desiredHealthy, pdb.status?.disruptionsAllowed],
      [2, 2, 0],
    );
    assert.deepEqual(
      pdb.status?.conditions?.map(c => [c.type, c.status, c.reason]),
      [['DisruptionAllowed', 'False', 'InsufficientPods']],
    );
    assert.equal(await allowedColumn('demo'), '0');
  });

  it('evicts a Pod the budget does not select (a learner)', async () => {
    const reply = await evict('demo-3');
    assert.equal(reply.status, 201, reply.body);
    await waitForPodGone(core, NS, 'demo-3');
  });

  it('refuses to evict a Pod under two budgets', async () => {
    await budget('other', 1);
    await waitFor('the second budget observed', async () => {
      const p = await readPdb('other');
      return p.status?.observedGeneration === p.metadata?.generation && p;
    });
    const reply = await evict('demo-1');
    assert.equal(reply.status, 500, reply.body);
    assert.match(reply.body, /more than one PodDisruptionBudget/);
  });
});
