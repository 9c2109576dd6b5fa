// reconcile-cluster creates each cluster's NetworkPolicy through the real Kubernetes client against
// the sandbox API server (which stores it; it has no network plugin to enforce it), writes the
// peers as `from` on the wire, puts it back when edited, and removes it when the cluster turns it
// off. The rules themselves are tested in test/unit/builders-network-policy.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeObjects } from '../../shared/k8s/objects.ts';
import { planCluster } from '../../shared/plan/cluster/plan.ts';
import { reconcileCluster } from '../../shared/reconcile/cluster.ts';
import { observeCluster } from '../../shared/reconcile/cluster-observe.ts';
import { createContext, type Context } from '../../shared/runtime/context.ts';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';

const ref = { namespace: 'default', name: 'guarded' };
const path = `/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/${ref.name}`;

describe('the cluster NetworkPolicy on the API server', () => {
  let api: TestApiServer;
  let ctx: Context;
  let kube: KubeObjects;

  before(async () => {
    api = await startApiServer();
    const kc = api.kc;
    // One step per call, so the test sees the order of the steps.
    ctx = createContext(kc, { ETCDFN_OPERATOR_NAMESPACE: 'ops', ETCDFN_CHAIN_STEPS: '1' });
    kube = new KubeObjects(kc);
  });
  after(() => api.close());

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw JSON as the API server sends it
  type Json = Record<string, any>;

  /** The policy as JSON on the wire, or undefined when there is none. */
  async function rawPolicy(): Promise<Json | undefined> {
    const res = await api.request('GET', path);
    if (res.status === 404) return undefined;
    assert.equal(res.status, 200);
    return JSON.parse(res.body) as Json;
  }

  /** Runs reconcile-cluster's step until `done` holds (a handful of steps at most). */
  async function reconcileUntil(what: string, done: () => Promise<boolean>): Promise<void> {
    for (let step = 0; step < 8; step++) {
      if (await done()) return;
      await reconcileCluster(ctx, ref);
    }
    assert.fail(`${what}: not reached in 8 steps`);
  }

  it('is created before the first member, with the peers written as `from`', async () => {
    const created = await kube.create({
      apiVersion: 'etcdfn.io/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: ref.name, namespace: ref.namespace },
      spec: { version: '3.5.16', replicas: 3 },
    });
    assert.equal(created.kind, 'created');
    await reconcileUntil('NetworkPolicy created', async () => (await rawPolicy()) !== undefined);
    const members = await kube.list('etcdfn.io/v1alpha1', 'EtcdMember', 'default');
    assert.equal(members.length, 0, 'no member before the policy');
    const policy = (await rawPolicy())!;
    const [clientRule, peerRule] = policy.spec.ingress;
    assert.deepEqual(clientRule.ports, [{ protocol: 'TCP', port: 2379 }]);
    assert.equal(clientRule.from.length, 3);
    assert.deepEqual(clientRule.from[0], { podSelector: { matchLabels: { 'etcdfn.io/client': 'guarded' } } });
    // The operator's function Pods only: namespace and Pod selectors in one peer (both must match).
    assert.deepEqual(clientRule.from[1], {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ops' } },
      podSelector: { matchLabels: { 'etcdfn.io/component': 'operator' } },
    });
    assert.deepEqual(peerRule.ports, [{ protocol: 'TCP', port: 2380 }]);
    assert.equal(peerRule.from.length, 1);
    assert.equal(policy.metadata.ownerReferences[0].kind, 'EtcdCluster');
    // Converged: read back through the client, it shows no drift, so the next step is something else.
    const observed = await observeCluster(ctx, ref);
    assert.ok(observed?.networkPolicy);
    assert.notEqual(planCluster(observed).action.kind, 'ensure-network-policy');
  });

  it('is put back when someone opens it up', async () => {
    const patched = await api.request(
      'PATCH',
      path,
      { spec: { ingress: [{}] } },
      'application/merge-patch+json',
    );
    assert.equal(patched.status, 200);
    await reconcileUntil(
      'NetworkPolicy restored',
      async () => (await rawPolicy())?.spec.ingress.length === 2,
    );
    assert.equal((await rawPolicy())!.spec.ingress[1].from.length, 1);
  });

  it('is removed when spec.networkPolicy.enabled is false', async () => {
    const off = await kube.mergePatch(
      { apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdCluster', namespace: ref.namespace, name: ref.name },
      { spec: { networkPolicy: { enabled: false } } },
    );
    assert.equal(off.kind, 'written');
    await reconcileUntil('NetworkPolicy removed', async () => (await rawPolicy()) === undefined);
  });
});
