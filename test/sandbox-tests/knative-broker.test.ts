// Real Knative Eventing in the sandbox (test/sandbox/knative.ts): its whole config/ applied, its
// controllers, webhook, in-memory channel and multi-tenant Broker running as Pods in network
// namespaces of their own; kube-apiserver calls the webhook through the kubelet's cluster egress,
// and the kubelet writes the Endpoints Knative's reconcilers read. A Broker and a Trigger whose
// subscriber is a plain Service reach Ready as Knative's own controllers judge them; then knative/
// (kubectl kustomize, unchanged, after crds/) reaches Ready too: its Broker and four Triggers, with
// the sandbox's stand-in for Knative Serving (test/sandbox/serving-stand-in.ts) giving each
// function's Knative Service its cluster-local address, as Serving would.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { Sandbox } from '../sandbox/kubelet/harness.ts';
import { startSandbox } from '../sandbox/kubelet/harness.ts';
import { POD_NETWORK_ANNOTATION } from '../sandbox/kubelet/index.ts';
import { knativePrograms } from '../sandbox/kubelet/knative-images.ts';
import { waitFor } from '../sandbox/kubelet/wait.ts';
import { installKnative, KNATIVE_DEPLOYMENTS, KNATIVE_NAMESPACE } from '../sandbox/knative.ts';
import { startServingStandIn } from '../sandbox/serving-stand-in.ts';
import { kubectl } from '../support/kubectl.ts';
import { ROOT } from '../support/helm.ts';

const NS = 'default';
const built = knativePrograms().size === 9;

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
type Status = { status?: { conditions?: Condition[]; address?: { url?: string } } };

const ready = (o: Status | undefined): boolean =>
  o?.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True') ?? false;
const describeConditions = (o: Status | undefined): string =>
  (o?.status?.conditions ?? [])
    .map(c => `${c.type}=${c.status} ${c.reason ?? ''} ${c.message ?? ''}`)
    .join('; ');

// A subscriber: answers 200 to every event and remembers the last one at GET /last.
const SINK = `
let last = null;
require('node:http').createServer((req, res) => {
  if (req.method === 'GET') return res.end(JSON.stringify(last));
  let body = '';
  req.on('data', d => (body += d));
  req.on('end', () => { last = { headers: req.headers, body }; res.end(); });
}).listen(8080, '0.0.0.0');
`;

describe('real Knative Eventing in the sandbox', { skip: process.getuid?.() !== 0 || !built }, () => {
  let sandbox: Sandbox;
  let work: string;
  let custom: CustomObjectsApi;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'etcdfn-knative-broker-'));
    sandbox = await startSandbox({ podNetwork: true, startTimeoutMs: 120_000 });
    custom = sandbox.kc.makeApiClient(CustomObjectsApi);
    await installKnative(sandbox.kubeconfig, work);
  });
  let stopStandIn: (() => void) | undefined;
  after(async () => {
    stopStandIn?.();
    await sandbox?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("runs Knative's Deployments as Pods, all available", async () => {
    const apps = sandbox.kc.makeApiClient(AppsV1Api);
    for (const name of KNATIVE_DEPLOYMENTS) {
      await waitFor(
        `deployment ${name} available`,
        async () => {
          const d = await apps.readNamespacedDeployment({ name, namespace: KNATIVE_NAMESPACE });
          return (d.status?.availableReplicas ?? 0) >= 1;
        },
        240_000,
        1000,
      );
    }
  });

  it('brings a Broker and its Trigger to Ready through Knative’s own controllers', async () => {
    await sandbox.core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: {
          name: 'sink',
          labels: { app: 'sink' },
          annotations: { [POD_NETWORK_ANNOTATION]: 'true' },
        },
        spec: {
          containers: [
            {
              name: 'main',
              image: 'busybox:1.36',
              command: [process.execPath, '-e', SINK],
              ports: [{ containerPort: 8080 }],
              readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
            },
          ],
        },
      },
    });
    await sandbox.core.createNamespacedService({
      namespace: NS,
      body: {
        metadata: { name: 'sink' },
        spec: { selector: { app: 'sink' }, ports: [{ port: 80, targetPort: 8080 }] },
      },
    });
    const file = join(work, 'broker.json');
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            apiVersion: 'eventing.knative.dev/v1',
            kind: 'Broker',
            metadata: { name: 'default', namespace: NS },
          },
          {
            apiVersion: 'eventing.knative.dev/v1',
            kind: 'Trigger',
            metadata: { name: 'to-sink', namespace: NS },
            spec: {
              broker: 'default',
              filter: { attributes: { type: 'dev.etcdfn.test' } },
              subscriber: { ref: { apiVersion: 'v1', kind: 'Service', name: 'sink' } },
            },
          },
        ],
      }),
    );
    // Knative's webhook validates and defaults them (through the cluster egress).
    await kubectl(sandbox.kubeconfig, 'apply', '-f', file);
    const get = async (plural: string, name: string): Promise<Status> =>
      (await custom.getNamespacedCustomObject({
        group: 'eventing.knative.dev',
        version: 'v1',
        namespace: NS,
        plural,
        name,
      })) as Status;
    let broker: Status | undefined;
    await waitFor(
      'Broker default Ready',
      async () => ready((broker = await get('brokers', 'default'))),
      180_000,
      1000,
    ).catch(err => {
      throw new Error(`${(err as Error).message}; conditions: ${describeConditions(broker)}`);
    });
    assert.match(
      broker!.status!.address!.url!,
      /^http:\/\/broker-ingress\.knative-eventing\.svc\.cluster\.local\/default\/default$/,
    );
    let trigger: Status | undefined;
    await waitFor(
      'Trigger to-sink Ready',
      async () => ready((trigger = await get('triggers', 'to-sink'))),
      120_000,
      1000,
    ).catch(err => {
      throw new Error(`${(err as Error).message}; conditions: ${describeConditions(trigger)}`);
    });
  });

  it("carries events through Knative's data plane: Broker ingress → channel → filter → subscriber Pod", async () => {
    const ingress = await sandbox.core.readNamespacedService({
      name: 'broker-ingress',
      namespace: KNATIVE_NAMESPACE,
    });
    const sinkPod = await sandbox.core.readNamespacedPod({ name: 'sink', namespace: NS });
    const lastEvent = async (): Promise<{ headers: Record<string, string>; body: string } | null> =>
      (await (await fetch(`http://${sinkPod.status!.podIP!}:8080/`)).json()) as {
        headers: Record<string, string>;
        body: string;
      } | null;
    // The Broker's address is its ingress Service's (port 80 → 8080), served at its ClusterIP.
    const post = await fetch(`http://${ingress.spec!.clusterIP!}/${NS}/default`, {
      method: 'POST',
      headers: {
        'ce-specversion': '1.0',
        'ce-id': 'sandbox-1',
        'ce-source': 'etcdfn/test',
        'ce-type': 'dev.etcdfn.test',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ hello: 'knative' }),
      signal: AbortSignal.timeout(10_000),
    });
    assert.equal(post.status, 202, await post.text());
    const got = await waitFor(
      'the event at the sink',
      async () => (await lastEvent()) ?? undefined,
      30_000,
      500,
    );
    assert.equal(got.headers['ce-id'], 'sandbox-1');
    assert.equal(got.headers['ce-type'], 'dev.etcdfn.test');
    assert.deepEqual(JSON.parse(got.body), { hello: 'knative' });

    // An ApiServerSource (its adapter a Pod the controller made) → the Broker → a Trigger → the sink.
    const file = join(work, 'source.json');
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'watcher', namespace: NS } },
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'Role',
            metadata: { name: 'watcher', namespace: NS },
            rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
          },
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'RoleBinding',
            metadata: { name: 'watcher', namespace: NS },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'watcher' },
            subjects: [{ kind: 'ServiceAccount', name: 'watcher', namespace: NS }],
          },
          {
            apiVersion: 'sources.knative.dev/v1',
            kind: 'ApiServerSource',
            metadata: { name: 'configmaps', namespace: NS },
            spec: {
              mode: 'Reference',
              serviceAccountName: 'watcher',
              resources: [
                { apiVersion: 'v1', kind: 'ConfigMap', selector: { matchLabels: { watched: 'yes' } } },
              ],
              sink: { ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'default' } },
            },
          },
          {
            apiVersion: 'eventing.knative.dev/v1',
            kind: 'Trigger',
            metadata: { name: 'configmap-adds', namespace: NS },
            spec: {
              broker: 'default',
              filter: { attributes: { type: 'dev.knative.apiserver.ref.add' } },
              subscriber: { ref: { apiVersion: 'v1', kind: 'Service', name: 'sink' } },
            },
          },
        ],
      }),
    );
    await kubectl(sandbox.kubeconfig, 'apply', '-f', file);
    const source = async (): Promise<Status> =>
      (await custom.getNamespacedCustomObject({
        group: 'sources.knative.dev',
        version: 'v1',
        namespace: NS,
        plural: 'apiserversources',
        name: 'configmaps',
      })) as Status;
    let last: Status | undefined;
    await waitFor(
      'ApiServerSource configmaps Ready',
      async () => ready((last = await source())),
      120_000,
      1000,
    ).catch(err => {
      throw new Error(`${(err as Error).message}; conditions: ${describeConditions(last)}`);
    });
    // The adapter lists and watches once it runs: an object created now is an 'add' it sends.
    await sandbox.core.createNamespacedConfigMap({
      namespace: NS,
      body: { metadata: { name: 'watched-1', labels: { watched: 'yes' } }, data: { k: 'v' } },
    });
    const added = await waitFor(
      'the ApiServerSource event at the sink',
      async () => {
        const e = await lastEvent();
        return e?.headers['ce-type'] === 'dev.knative.apiserver.ref.add' && e.body.includes('watched-1')
          ? e
          : undefined;
      },
      60_000,
      500,
    );
    assert.equal((JSON.parse(added.body) as { name: string }).name, 'watched-1');
  });

  it('brings knative/, applied unchanged, to Ready: its Broker, four Triggers, ApiServerSources and PingSource', async () => {
    stopStandIn = startServingStandIn(sandbox.kc, line => process.stderr.write(`${line}\n`));
    await kubectl(sandbox.kubeconfig, 'apply', '--server-side', '-f', join(ROOT, 'crds'));
    await kubectl(sandbox.kubeconfig, 'apply', '-k', join(ROOT, 'knative'));
    const ns = 'etcdfn-system';
    const get = async (plural: string, name: string, group = 'eventing.knative.dev'): Promise<Status> =>
      (await custom.getNamespacedCustomObject({
        group,
        version: 'v1',
        namespace: ns,
        plural,
        name,
      })) as Status;
    const waitReady = async (plural: string, name: string, group?: string): Promise<Status> => {
      let last: Status | undefined;
      return waitFor(
        `${plural} ${name} Ready`,
        async () => (ready((last = await get(plural, name, group))) ? last : undefined),
        180_000,
        1000,
      ).catch(err => {
        throw new Error(`${(err as Error).message}; conditions: ${describeConditions(last)}`);
      });
    };
    const broker = await waitReady('brokers', 'etcdfn');
    assert.equal(
      broker.status?.address?.url,
      'http://broker-ingress.knative-eventing.svc.cluster.local/etcdfn-system/etcdfn',
    );
    const triggers = (await custom.listNamespacedCustomObject({
      group: 'eventing.knative.dev',
      version: 'v1',
      namespace: ns,
      plural: 'triggers',
    })) as { items: { metadata: { name: string } }[] };
    const names = triggers.items.map(t => t.metadata.name).sort();
    assert.deepEqual(names, ['finalize-member', 'reconcile-cluster', 'reconcile-member', 'run-snapshot']);
    for (const name of names) {
      const trigger = (await waitReady('triggers', name)) as Status & { status?: { subscriberUri?: string } };
      assert.equal(trigger.status?.subscriberUri, `http://${name}.${ns}.svc.cluster.local`);
    }
    // The sources: their sink is the Broker; the ApiServerSources' adapters run as Pods that the
    // controller made (apiserver_receive_adapter), the PingSource on the multi-tenant adapter.
    for (const name of ['etcdfn-owned', 'etcdfn-resources'])
      await waitReady('apiserversources', name, 'sources.knative.dev');
    await waitReady('pingsources', 'etcdfn-tick', 'sources.knative.dev');
  });

  it("delivers an EtcdCluster's creation to the functions' Pods, and the cluster forms 3/3 on events alone", async () => {
    // The functions run only as the stand-in's Deployments here (no event bridge, no process of the
    // sandbox's own): members of the cluster appear only if the event went ApiServerSource adapter
    // → broker-ingress → channel → broker-filter → reconcile-cluster's Pod.
    const apps = sandbox.kc.makeApiClient(AppsV1Api);
    await waitFor(
      'deployment reconcile-cluster available',
      async () =>
        ((await apps.readNamespacedDeployment({ name: 'reconcile-cluster', namespace: 'etcdfn-system' }))
          .status?.availableReplicas ?? 0) >= 1,
      180_000,
      1000,
    );
    await kubectl(sandbox.kubeconfig, 'apply', '-f', join(ROOT, 'examples', 'etcdcluster.yaml'));
    const pods = await waitFor(
      'a member Pod of EtcdCluster demo',
      async () => {
        const list = await sandbox.core.listNamespacedPod({
          namespace: NS,
          labelSelector: 'etcdfn.io/cluster=demo',
        });
        return list.items.length ? list.items : undefined;
      },
      120_000,
      1000,
    );
    assert.ok(pods[0].metadata?.name?.startsWith('demo-'), String(pods[0].metadata?.name));
    // And the cluster forms, 3/3, on events alone: each member's Pod comes from reconcile-member's
    // answer to its EtcdMember's event.
    let last: { status?: { ready?: string; phase?: string } } | undefined;
    await waitFor(
      'EtcdCluster demo 3/3',
      async () => {
        last = (await custom.getNamespacedCustomObject({
          group: 'etcdfn.io',
          version: 'v1alpha1',
          namespace: NS,
          plural: 'etcdclusters',
          name: 'demo',
        })) as typeof last;
        return last?.status?.ready === '3/3';
      },
      180_000,
      1000,
    ).catch(err => {
      throw new Error(`${(err as Error).message}; status: ${JSON.stringify(last?.status)}`);
    });
    // The function's own log: it handled the ApiServerSource's event about demo.
    const log = await kubectl(
      sandbox.kubeconfig,
      'logs',
      '-n',
      'etcdfn-system',
      '-l',
      'serving.knative.dev/service=reconcile-cluster',
      '--tail=-1',
    );
    // Every answer counted as delivered by Knative: its broker filter saw no reply it took for a
    // failed delivery (with a JSON body on the 200s it answered the channel 502 for every handled
    // event, 'received a non-empty response not recognized as CloudEvent', and the channel retried).
    const filterLog = await kubectl(
      sandbox.kubeconfig,
      'logs',
      '-n',
      KNATIVE_NAMESPACE,
      '-l',
      'eventing.knative.dev/brokerRole=filter',
      '--tail=-1',
    );
    assert.doesNotMatch(filterLog, /non-empty response not recognized as CloudEvent/);
    assert.match(
      log,
      /"kind":"EtcdCluster","namespace":"default","name":"demo".*"type":"dev\.knative\.apiserver\.ref\.add"/,
    );
  });
});
