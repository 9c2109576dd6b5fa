// Knative Eventing's real webhook (knative.dev/eventing, built by scripts/build-go.sh from
// test/go/knative) admitting etcdfn's manifests: a real API server with the real CRDs and Knative's
// own config (test/support/knative-eventing.ts), the webhook as a local process reached through the
// API server's cluster egress. What the schemas leave open (a Trigger's and an ApiServerSource's
// spec, a Broker's delivery) is checked here by Knative's own validation, and Knative's defaults
// are what the objects get.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CRD_DIR, startApiServer, type TestApiServer } from '../support/api-server.ts';
import { foreignCrdDirs, KNATIVE_EVENTING, moduleDir } from '../support/foreign-crds.ts';
import { helmTemplate, HELM_MAJORS, kustomize, ROOT, type Obj } from '../support/helm.ts';
import { VALUE_SETS } from '../support/helm-values.ts';
import { runtimeObjects } from '../support/runtime-objects.ts';
import { TestCA } from '../support/test-certs.ts';
import {
  applyObjects,
  readObjects,
  startClusterEgress,
  startKnativeProgram,
  SYSTEM_NAMESPACE,
  type ClusterEgress,
  type KnativeProcess,
} from '../support/knative-eventing.ts';
import { freePort } from '../sandbox/control-plane/processes.ts';
import { kubectlOutput } from '../support/kubectl.ts';

const work = mkdtempSync(join(tmpdir(), 'etcdfn-knative-webhook-'));
const yamlIn = (dir: string) =>
  readdirSync(dir)
    .filter(f => f.endsWith('.yaml'))
    .sort()
    .map(f => join(dir, f));

async function until<T>(what: string, f: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await f().catch(() => undefined);
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 250));
  }
}

/** `kubectl apply --dry-run=server` of objects: the objects as admitted, or kubectl's refusal. */
async function dryRun(
  api: TestApiServer,
  name: string,
  objects: Obj[],
): Promise<{ ok: boolean; out: string }> {
  try {
    const out = await applyObjects(api, work, name, objects, ['--dry-run=server', '-o', 'json']);
    return { ok: true, out };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

const admitted = (out: string): Obj[] => {
  const parsed = JSON.parse(out) as Obj;
  return parsed.kind === 'List' ? (parsed.items as Obj[]) : [parsed];
};

describe('Knative Eventing webhook admits etcdfn manifests', () => {
  let api: TestApiServer;
  let egress: ClusterEgress;
  let webhook: KnativeProcess | undefined;

  before(async () => {
    egress = await startClusterEgress(work);
    api = await startApiServer({
      crdDirs: [CRD_DIR, ...foreignCrdDirs()],
      apiserverFlags: [egress.apiserverFlag],
    });
    const config = join(moduleDir(KNATIVE_EVENTING), 'config', 'core');
    await applyObjects(api, work, 'knative-namespace', readObjects([join(config, '100-namespace.yaml')]));
    await applyObjects(api, work, 'knative-config', readObjects(yamlIn(join(config, 'configmaps'))));
    const service = readObjects([join(config, 'deployments', 'webhook.yaml')]).filter(
      o => o.kind === 'Service',
    );
    await applyObjects(api, work, 'knative-webhook-service', service);
    await applyObjects(api, work, 'knative-webhooks', readObjects(yamlIn(join(config, 'webhooks'))));
    const svc = JSON.parse(
      (await api.request('GET', `/api/v1/namespaces/${SYSTEM_NAMESPACE}/services/eventing-webhook`)).body,
    ) as Obj;
    const port = await freePort();
    for (const p of svc.spec.ports as { port: number }[])
      egress.route(svc.spec.clusterIP as string, p.port, port);
    webhook = await startKnativeProgram(api, work, 'eventing-webhook', {
      WEBHOOK_NAME: 'eventing-webhook',
      WEBHOOK_PORT: String(port),
      SINK_BINDING_SELECTION_MODE: 'exclusion',
    });
    // ready once it has written its rules and CA into the webhook configurations and a Broker's
    // dry run went through it (through the egress)
    for (const ns of ['etcdfn-system', 'etcd-operator', 'team-a', 'team-b']) await api.createNamespace(ns);
    await until(
      'the webhook to take over admission of Knative kinds',
      async () => {
        if (webhook?.child.exited()) throw new Error(`the webhook exited:\n${webhook.tail()}`);
        for (const path of [
          '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/validation.webhook.eventing.knative.dev',
          '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/webhook.eventing.knative.dev',
        ]) {
          const config = JSON.parse((await api.request('GET', path)).body) as Obj;
          const hook = (config.webhooks as Obj[] | undefined)?.[0];
          if (!hook?.rules?.length || !hook.clientConfig?.caBundle) return undefined;
        }
        const probe = {
          apiVersion: 'eventing.knative.dev/v1',
          kind: 'Broker',
          metadata: { name: 'probe', namespace: 'etcdfn-system' },
        };
        const r = await dryRun(api, 'probe', [probe]);
        return r.ok && egress.asked.length > 0 ? r : undefined;
      },
      120_000,
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${webhook?.tail()}`, { cause: err });
    });
  });

  after(async () => {
    await webhook?.stop();
    await api?.close();
    await egress?.close();
    if (!process.env.KEEP) rmSync(work, { recursive: true, force: true });
  });

  it('the API server calls the webhook through the cluster egress, and the webhook defaults (Broker class)', async () => {
    assert.ok(egress.asked.length > 0);
    const [broker] = kustomize(join(ROOT, 'knative')).filter(o => o.kind === 'Broker');
    const r = await dryRun(api, 'broker', [broker]);
    assert.ok(r.ok, r.out);
    const [got] = admitted(r.out);
    assert.equal(got.metadata.annotations['eventing.knative.dev/broker.class'], 'MTChannelBasedBroker');
  });

  it('the webhook refuses what the schema lets through: a Trigger without a subscriber', async () => {
    const [trigger] = kustomize(join(ROOT, 'knative')).filter(o => o.kind === 'Trigger');
    delete trigger.spec.subscriber;
    const r = await dryRun(api, 'no-subscriber', [trigger]);
    assert.equal(r.ok, false, r.out);
    assert.match(r.out, /denied the request.*spec\.subscriber/s);
  });

  it('kubectl kustomize knative/ is admitted', async () => {
    const objects = kustomize(join(ROOT, 'knative'));
    const r = await dryRun(api, 'knative', objects);
    assert.ok(r.ok, r.out);
  });

  const major = HELM_MAJORS[HELM_MAJORS.length - 1];
  const knativeSets = Object.entries(VALUE_SETS).filter(([, v]) => v.mode !== 'standalone');
  for (const [name, values] of knativeSets) {
    const oidc = !!values.oidc?.enabled;
    it(`helm ${major} template, values: ${name}: ${oidc ? 'refused while Knative has authentication-oidc off (docs/security.md)' : 'admitted'}`, async () => {
      const r = await dryRun(api, `helm-${name}`, helmTemplate(major, values));
      if (!oidc) assert.ok(r.ok, r.out);
      else {
        assert.equal(r.ok, false, r.out);
        assert.match(r.out, /denied the request: validation failed: oidc-authentication feature not enabled/);
      }
    });
  }

  it('the PingSources the functions create at run time (schedule, wake-up) are admitted', async () => {
    const pings = runtimeObjects(readFileSync(new TestCA(work).cert, 'utf8')).filter(
      o => o.kind === 'PingSource',
    );
    const r = await dryRun(api, 'runtime-pings', pings);
    assert.ok(r.ok, r.out);
    assert.equal(admitted(r.out).length, pings.length);
  });

  it('with sender authentication on (authentication-oidc), the OIDC renders are admitted', async () => {
    await kubectlOutput(
      api.kubeconfig,
      '-n',
      SYSTEM_NAMESPACE,
      'patch',
      'configmap',
      'config-features',
      '--type=merge',
      '-p',
      JSON.stringify({ data: { 'authentication-oidc': 'enabled' } }),
    );
    for (const [name, values] of knativeSets.filter(([, v]) => v.oidc?.enabled)) {
      const r = await dryRun(api, `oidc-${name}`, helmTemplate(major, values));
      assert.ok(r.ok, `${name}: ${r.out}`);
    }
  });
});
