// Every shipped manifest against the real schemas: a real API server holding etcdfn's CRDs and the
// real CRDs of Knative Eventing and Serving, cert-manager and the Prometheus operator (read from
// their Go modules, test/support/foreign-crds.ts), and each manifest applied to it as
// docs/installation.md applies it, with a server-side dry run and strict field validation: the
// release manifest, the kustomize base knative/ (and a namespaced install built from its
// component), and `helm template` of the chart with every documented value set. No object may be
// refused and no field dropped (strict validation turns an unknown field into an error instead of
// pruning it); the API server's warnings are refused too.
//
// Knative's CRDs leave some subtrees open (x-kubernetes-preserve-unknown-fields): a Trigger's and an
// ApiServerSource's whole spec, a Broker's delivery. There the schema accepts anything; Knative's
// webhook is what refuses a wrong field, so those kinds are checked for real only where the webhook
// runs. A PingSource, an EventPolicy and a Knative Service are closed (the control case shows it).
//
// Only the schemas (OpenAPI and CEL) are checked here: Knative's own webhook, which validates more,
// runs in the sandbox's Knative mode. The namespaces the objects name are created beforehand (a dry
// run creates nothing, so a Namespace in the same manifest would not exist yet for its objects).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { CRD_DIR, startApiServer, type TestApiServer } from '../support/api-server.ts';
import { FOREIGN_MODULES, foreignCrdDirs } from '../support/foreign-crds.ts';
import { helmTemplate, HELM_MAJORS, kustomize, parseYaml, ROOT, type Obj } from '../support/helm.ts';
import { VALUE_SETS } from '../support/helm-values.ts';
import { runtimeObjects } from '../support/runtime-objects.ts';
import { TestCA } from '../support/test-certs.ts';

const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'etcdfn-dry-run-'));

/** A kustomization of our own built in a throw-away folder (as a user's overlay would be). */
function overlay(name: string, kustomization: Obj): Obj[] {
  const dir = join(work, name);
  const rel = (p: string) => relative(dir, join(ROOT, p));
  const k = structuredClone(kustomization);
  if (k.resources) k.resources = (k.resources as string[]).map(rel);
  if (k.components) k.components = (k.components as string[]).map(rel);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'kustomization.yaml'), stringify(k));
  return kustomize(dir);
}

interface DryRun {
  code: number;
  out: string;
}

/** `kubectl apply --dry-run=server --validate=strict` of these objects; exit code and all output. */
async function dryRun(
  api: TestApiServer,
  name: string,
  objects: Obj[],
  serverSide: boolean,
): Promise<DryRun> {
  const file = join(work, `${name.replace(/[^a-z0-9]+/gi, '-')}.yaml`);
  writeFileSync(file, objects.map(o => stringify(o)).join('---\n'));
  const args = ['--kubeconfig', api.kubeconfig, 'apply', '--dry-run=server', '--validate=strict', '-f', file];
  if (serverSide) args.push('--server-side', '--field-manager=etcdfn-dry-run');
  try {
    const { stdout, stderr } = await run('kubectl', args, {
      env: { ...process.env, HOME: work },
      maxBuffer: 16 << 20,
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/**
 * kubectl's warning when apply meets an object it did not create: the namespaces this test makes
 * beforehand, not a fault of the manifest.
 */
const PRE_CREATED =
  /^Warning: resource namespaces\/\S+ is missing the kubectl\.kubernetes\.io\/last-applied-configuration annotation/;

/** The lines of kubectl's output that say an object was refused, or warn. */
export function problemLines(out: string): string[] {
  return out
    .split('\n')
    .filter(
      line =>
        /^(error|Error|Warning|warning)\b/i.test(line) ||
        / (is invalid|unknown field|denied|not declared in schema)/.test(line),
    )
    .filter(line => !PRE_CREATED.test(line));
}

/** Asserts that every object was accepted with no warning, and one line of output per object. */
function assertAccepted(result: DryRun, objects: Obj[]): void {
  assert.deepEqual(problemLines(result.out), [], result.out);
  assert.equal(result.code, 0, result.out);
  const applied = result.out.split('\n').filter(line => /\(server dry run\)$/.test(line));
  assert.equal(applied.length, objects.length, result.out);
}

function namespacesOf(objects: Obj[]): string[] {
  return [
    ...new Set(objects.map(o => o.metadata?.namespace as string | undefined).filter(n => !!n)),
  ] as string[];
}

describe('shipped manifests against the real schemas (server-side dry run, strict validation)', () => {
  let api: TestApiServer;
  const made = new Set<string>();

  before(async () => {
    api = await startApiServer({ crdDirs: [CRD_DIR, ...foreignCrdDirs()] });
  });
  after(async () => {
    await api?.close();
    rmSync(work, { recursive: true, force: true });
  });

  async function check(name: string, objects: Obj[], serverSide: boolean): Promise<void> {
    for (const ns of namespacesOf(objects)) {
      if (made.has(ns)) continue;
      await api.createNamespace(ns);
      made.add(ns);
    }
    assertAccepted(await dryRun(api, name, objects, serverSide), objects);
  }

  it(`the foreign CRDs come from ${FOREIGN_MODULES.map(m => `${m.path}@${m.version}`).join(', ')}`, async () => {
    const reply = await api.request('GET', '/apis/sources.knative.dev/v1/apiserversources');
    assert.equal(reply.status, 200, reply.body);
  });

  it('the check bites: an unknown field in a PingSource or in a function Service is refused, not pruned', async () => {
    const base = kustomize(join(ROOT, 'knative'));
    const ping = structuredClone(base.find(o => o.kind === 'PingSource')!);
    const service = structuredClone(base.find(o => o.apiVersion === 'serving.knative.dev/v1')!);
    for (const ns of namespacesOf([ping, service])) await api.createNamespace(ns);
    ping.spec.sinks = ping.spec.sink; // the field is sink
    service.spec.template.spec.containers[0].envs = []; // the field is env
    const result = await dryRun(api, 'unknown-fields', [ping, service], true);
    assert.notEqual(result.code, 0, result.out);
    assert.match(result.out, /\.spec\.sinks: field not declared in schema/);
    assert.match(result.out, /\.spec\.template\.spec\.containers\[0\]\.envs: field not declared in schema/);
  });

  it('release/etcdfn-knative.yaml (kubectl apply --server-side)', async () => {
    const release = parseYaml(readFileSync(join(ROOT, 'release', 'etcdfn-knative.yaml'), 'utf8'), 'release');
    await check('release', release, true);
  });

  it('kubectl kustomize knative/ (kubectl apply -k)', async () => {
    await check('knative', kustomize(join(ROOT, 'knative')), false);
  });

  it('a namespaced install: knative/ with the knative/namespaced component, knative/watch-namespace for team-a', async () => {
    await check(
      'namespaced',
      overlay('namespaced', {
        namespace: 'etcdfn-system',
        resources: ['knative'],
        components: ['knative/namespaced'],
      }),
      false,
    );
    await check(
      'watch-team-a',
      overlay('watch-team-a', { namespace: 'team-a', resources: ['knative/watch-namespace'] }),
      false,
    );
  });

  it('the objects the functions create at run time: schedule and wake-up PingSources, cert-manager Certificates', async () => {
    const objects = runtimeObjects(readFileSync(new TestCA(work).cert, 'utf8'));
    assert.equal(objects.filter(o => o.kind === 'Certificate').length, 3);
    await check('runtime', objects, true);
  });

  for (const major of HELM_MAJORS) {
    for (const [name, values] of Object.entries(VALUE_SETS)) {
      it(`helm ${major} template --include-crds, values: ${name}`, async () => {
        await check(`helm-${major}-${name}`, helmTemplate(major, values, { includeCrds: true }), true);
      });
    }
  }
});
