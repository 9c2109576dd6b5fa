// A function process's Prometheus metrics (shared/runtime/metrics.ts): every metric is registered
// with its help text and labels, the Kubernetes and etcd adapters count each call by its outcome's
// kind, and the cluster gauge holds only what the last tick saw.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import type { KubeObjects } from '../../shared/k8s/objects.ts';
import {
  countEtcdCalls,
  countKubeRequests,
  metrics,
  recordClusterPhases,
  registry,
} from '../../shared/runtime/metrics.ts';

/** The value of a counter or gauge for exactly these labels (0 when never counted). */
async function valueOf(
  metric: { get(): Promise<{ values: { labels: Record<string, unknown>; value: number }[] }> },
  labels: Record<string, string>,
): Promise<number> {
  const { values } = await metric.get();
  const match = values.find(
    v =>
      Object.keys(v.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, x]) => v.labels[k] === x),
  );
  return match?.value ?? 0;
}

describe('metrics', () => {
  it('every metric is registered under its name, with a help text and its labels', async () => {
    const want: Record<string, string[]> = {
      etcdfn_events_total: ['function', 'mode', 'verb', 'outcome'],
      etcdfn_event_duration_seconds: ['function', 'outcome'],
      etcdfn_kube_requests_total: ['verb', 'resource', 'result'],
      etcdfn_etcd_calls_total: ['call', 'result'],
      etcdfn_clusters: ['phase'],
      etcdfn_resyncs_total: ['function', 'outcome'],
      etcdfn_snapshots_total: ['outcome'],
      etcdfn_bridge_deliveries_dropped_total: ['reason', 'trigger'],
      etcdfn_snapshot_bytes_total: [],
    };
    const all = registry.getMetricsAsArray();
    assert.deepEqual(all.map(m => m.name).sort(), Object.keys(want).sort());
    for (const m of all) {
      const { help, labelNames } = m as unknown as { help: string; labelNames: string[] };
      assert.ok(help.length > 30, `${m.name}: ${help}`);
      assert.deepEqual(labelNames, want[m.name], m.name);
    }
    metrics.eventSeconds.observe({ function: 'metrics-test', outcome: 'done' }, 0.2);
    const text = await registry.getSingleMetricAsString('etcdfn_event_duration_seconds');
    const buckets = [...text.matchAll(/le="([^"]+)",function="metrics-test"/g)].map(m => m[1]);
    assert.deepEqual(buckets, [
      '0.005',
      '0.01',
      '0.025',
      '0.05',
      '0.1',
      '0.25',
      '0.5',
      '1',
      '2.5',
      '5',
      '10',
      '30',
      '60',
      '120',
      '300',
      '+Inf',
    ]);
  });

  it('Kubernetes calls are counted by verb, kind and outcome; other members pass through', async () => {
    const calls: unknown[][] = [];
    const fake = {
      get: async (...args: unknown[]) => (calls.push(args), { kind: 'found', object: {} }),
      list: async (...args: unknown[]) => (calls.push(args), [1, 2]),
      create: async () => null,
      delete: async () => {
        throw new Error('boom');
      },
      replace: async () => 'plain',
      other: async () => 'not counted',
      label: 'kept',
    } as unknown as KubeObjects & { other(): Promise<string>; label: string };
    const kube = countKubeRequests(fake) as typeof fake;
    const counter = metrics.kubeRequests;
    assert.deepEqual(await kube.get({ apiVersion: 'v1', kind: 'Pod', name: 'p' } as never), {
      kind: 'found',
      object: {},
    });
    assert.deepEqual(calls[0], [{ apiVersion: 'v1', kind: 'Pod', name: 'p' }]);
    assert.equal(await valueOf(counter, { verb: 'get', resource: 'Pod', result: 'found' }), 1);
    const untyped = kube as unknown as { list(apiVersion: string, kind: string): Promise<unknown> };
    assert.deepEqual(await untyped.list('etcdfn.io/v1alpha1', 'EtcdCluster'), [1, 2]);
    assert.equal(await valueOf(counter, { verb: 'list', resource: 'EtcdCluster', result: 'ok' }), 1);
    await kube.create({ kind: 7 } as never);
    assert.equal(await valueOf(counter, { verb: 'create', resource: '', result: 'ok' }), 1);
    await kube.replace(undefined as never);
    assert.equal(await valueOf(counter, { verb: 'replace', resource: '', result: 'ok' }), 1);
    await assert.rejects(kube.delete({ kind: 'Pod' } as never), /boom/);
    assert.equal(await valueOf(counter, { verb: 'delete', resource: 'Pod', result: 'error' }), 1);
    assert.equal(await kube.other(), 'not counted');
    assert.equal(kube.label, 'kept');
    const { values } = await counter.get();
    assert.equal(values.filter(v => v.labels.verb === 'other').length, 0);
    // The other verbs of KubeObjects are counted too.
    for (const verb of ['find', 'replaceStatus', 'mergePatch', 'mergePatchStatus']) {
      const one = countKubeRequests({ [verb]: async () => ({ kind: 'done' }) } as unknown as KubeObjects);
      await (one as unknown as Record<string, (x: unknown) => Promise<unknown>>)[verb]({ kind: 'Secret' });
      assert.equal(await valueOf(counter, { verb, resource: 'Secret', result: 'done' }), 1, verb);
    }
  });

  it('etcd calls are counted by outcome, once per member asked; a throw is "error"', async () => {
    const fake = {
      status: async (x: number) => [{ kind: 'ok' }, { kind: 'unreachable' }, x],
      put: async () => ({ kind: 'written' }),
      fail: async () => {
        throw new Error('down');
      },
    };
    const etcd = countEtcdCalls(fake as unknown as EtcdAdapter) as unknown as typeof fake;
    const counter = metrics.etcdCalls;
    assert.deepEqual(await etcd.status(3), [{ kind: 'ok' }, { kind: 'unreachable' }, 3]);
    assert.equal(await valueOf(counter, { call: 'status', result: 'ok' }), 2);
    assert.equal(await valueOf(counter, { call: 'status', result: 'unreachable' }), 1);
    await etcd.put();
    assert.equal(await valueOf(counter, { call: 'put', result: 'written' }), 1);
    await assert.rejects(etcd.fail(), /down/);
    assert.equal(await valueOf(counter, { call: 'fail', result: 'error' }), 1);
  });

  it('the cluster gauge holds the last tick only; a cluster with no phase yet is Pending', async () => {
    recordClusterPhases(['Running', 'Running', undefined]);
    assert.equal(await valueOf(metrics.clusters, { phase: 'Running' }), 2);
    assert.equal(await valueOf(metrics.clusters, { phase: 'Pending' }), 1);
    recordClusterPhases(['Degraded']);
    assert.deepEqual((await metrics.clusters.get()).values, [{ labels: { phase: 'Degraded' }, value: 1 }]);
  });
});
