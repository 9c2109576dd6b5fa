// Knative Eventing's own Deployments, from its Go module's config/ (nothing copied), run as Pods of
// the sandbox: kube-controller-manager makes their ReplicaSets and Pods, the kubelet maps each
// `ko://` image to the binary scripts/build-go.sh built (kubelet/knative-images.ts) and runs it in
// a network namespace of its own (kubelet/pod-network.ts), with its service account's token. Here
// the webhook and the in-memory channel's dispatcher, which both listen on :8080: both become
// Ready on their own probes (the webhook's over HTTPS on :8443) without a restart, and the webhook,
// authorised by Knative's RBAC alone, fills its certificate Secret.
//
// Not applied: config/core/webhooks. kube-apiserver would call the webhook at its Service's
// ClusterIP, which the sandbox does not route yet (test/go/knative/README.md, what is next).
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api } from '@kubernetes/client-node';
import type { Sandbox } from '../sandbox/kubelet/harness.ts';
import { startSandbox } from '../sandbox/kubelet/harness.ts';
import { knativePrograms } from '../sandbox/kubelet/knative-images.ts';
import { isReady, waitFor } from '../sandbox/kubelet/wait.ts';
import { KNATIVE_EVENTING, moduleDir } from '../support/foreign-crds.ts';
import { readObjects, SYSTEM_NAMESPACE } from '../support/knative-eventing.ts';
import { kubectl } from '../support/kubectl.ts';

const yamlIn = (dir: string): string[] =>
  readdirSync(dir)
    .filter(f => f.endsWith('.yaml'))
    .sort()
    .map(f => join(dir, f));

const built = knativePrograms().size === 9;

describe("Knative's Deployments as sandbox Pods", { skip: process.getuid?.() !== 0 || !built }, () => {
  let sandbox: Sandbox;
  let work: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'etcdfn-knative-pods-'));
    sandbox = await startSandbox({ podNetwork: true, startTimeoutMs: 120_000 });
    const config = join(moduleDir(KNATIVE_EVENTING), 'config');
    const core = join(config, 'core');
    const imc = join(config, 'channels', 'in-memory-channel');
    const files = [
      join(core, '100-namespace.yaml'),
      ...yamlIn(core).filter(f => f.includes('serviceaccount')),
      ...yamlIn(join(core, 'resources')),
      ...yamlIn(join(imc, 'resources')),
      ...yamlIn(join(core, 'roles')),
      ...yamlIn(join(core, 'configmaps')),
      ...yamlIn(imc).filter(f => f.includes('serviceaccount')),
      ...yamlIn(join(imc, 'roles')),
      ...yamlIn(join(imc, 'configmaps')),
      join(core, 'webhooks', 'secret.yaml'),
      join(core, 'deployments', 'webhook.yaml'),
      join(imc, 'deployments', 'dispatcher.yaml'),
      join(imc, 'deployments', 'dispatcher-service.yaml'),
    ];
    const objects = readObjects(files).filter(o => o.kind !== 'HorizontalPodAutoscaler');
    const file = join(work, 'knative.json');
    writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
    // --force-conflicts: Knative's PingSource CRD replaces the sandbox's stand-in one (test/sandbox/crds).
    await kubectl(sandbox.kubeconfig, 'apply', '--server-side', '--force-conflicts', '-f', file);
  });
  after(async () => {
    await sandbox?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('runs the webhook and the channel dispatcher side by side, Ready, with their own credentials', async () => {
    const apps = sandbox.kc.makeApiClient(AppsV1Api);
    for (const name of ['eventing-webhook', 'imc-dispatcher']) {
      await waitFor(
        `deployment ${name} available`,
        async () => {
          const d = await apps.readNamespacedDeployment({ name, namespace: SYSTEM_NAMESPACE });
          return (d.status?.availableReplicas ?? 0) >= 1;
        },
        180_000,
        500,
      );
    }
    const pods = (await sandbox.core.listNamespacedPod({ namespace: SYSTEM_NAMESPACE })).items;
    const running = pods.filter(p => isReady(p));
    assert.equal(running.length, 2, pods.map(p => `${p.metadata?.name} ${p.status?.phase}`).join(', '));
    for (const pod of running) {
      assert.match(pod.status!.podIP!, /^198\.1[89]\./, `${pod.metadata?.name} has a namespace of its own`);
      assert.equal(
        pod.status?.containerStatuses?.[0]?.restartCount,
        0,
        `${pod.metadata?.name} never restarted`,
      );
    }
    // The webhook's certificate controller writes the Secret's keys through its own RBAC.
    const secret = await waitFor(
      'eventing-webhook-certs filled',
      async () => {
        const s = await sandbox.core.readNamespacedSecret({
          name: 'eventing-webhook-certs',
          namespace: SYSTEM_NAMESPACE,
        });
        return s.data?.['server-cert.pem'] ? s : undefined;
      },
      60_000,
      500,
    );
    const cert = Buffer.from(secret.data!['server-cert.pem'], 'base64').toString();
    assert.match(cert, /BEGIN CERTIFICATE/);
  });
});
