// Knative Eventing installed into the sandbox from its Go module's config/ (the version
// test/go/knative pins; read from the module cache, nothing copied), as its release would install
// it: the namespace, service accounts, CRDs, RBAC, config maps, webhook configurations and the
// Deployments of the eventing controller and webhook, the PingSource adapter (0 replicas until a
// PingSource exists), the in-memory channel's controller and dispatcher and the multi-tenant
// channel-based Broker's controller, ingress and filter. Their Pods run on the sandbox kubelet as
// the binaries scripts/build-go.sh built (kubelet/knative-images.ts), each in a network namespace
// of its own (kubelet/pod-network.ts): the sandbox must run with its pod network.
//
// Added: the config maps of image names a release generates (releaseImageMaps).
// Left out: the job sink and request-reply Deployments (their programs are not built) and the
// HorizontalPodAutoscalers (nothing serves metrics).
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppsV1Api, type KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { readFileSync } from 'node:fs';
import { FOREIGN_MODULES, KNATIVE_EVENTING, moduleDir } from '../support/foreign-crds.ts';
import { kubectl } from '../support/kubectl.ts';
import { startServingStandIn } from './serving-stand-in.ts';

export const KNATIVE_NAMESPACE = 'knative-eventing';
const SERVING = FOREIGN_MODULES.find(m => m.path === 'knative.dev/serving')!;

/** The Deployments that must be available for Knative to work (pingsource-mt-adapter starts at 0). */
export const KNATIVE_DEPLOYMENTS = [
  'eventing-webhook',
  'eventing-controller',
  'imc-controller',
  'imc-dispatcher',
  'mt-broker-controller',
  'mt-broker-ingress',
  'mt-broker-filter',
];

type Obj = { kind?: string; metadata?: { name?: string } };

const yamlIn = (dir: string): string[] =>
  readdirSync(dir)
    .filter(f => f.endsWith('.yaml'))
    .sort()
    .map(f => join(dir, f));

/** Knative's objects in the order a release lists them. */
export function knativeObjects(config = join(moduleDir(KNATIVE_EVENTING), 'config')): Obj[] {
  const core = join(config, 'core');
  const imc = join(config, 'channels', 'in-memory-channel');
  const broker = join(config, 'brokers', 'mt-channel-broker');
  const notBuilt = new Set(['job-sink.yaml', 'request-reply.yaml']);
  const files = [
    join(core, '100-namespace.yaml'),
    ...yamlIn(core).filter(f => f.includes('serviceaccount')),
    ...yamlIn(join(core, 'resources')),
    ...yamlIn(join(core, 'roles')),
    ...yamlIn(join(core, 'configmaps')),
    ...yamlIn(join(core, 'webhooks')),
    ...yamlIn(join(core, 'deployments')).filter(f => !notBuilt.has(f.split('/').pop()!)),
    ...yamlIn(imc).filter(f => f.includes('serviceaccount')),
    ...yamlIn(join(imc, 'resources')),
    ...yamlIn(join(imc, 'roles')),
    ...yamlIn(join(imc, 'configmaps')),
    ...yamlIn(join(imc, 'webhooks')),
    ...yamlIn(join(imc, 'deployments')),
    ...yamlIn(join(broker, 'roles')),
    ...yamlIn(join(broker, 'deployments')),
  ];
  const objects = files
    .flatMap(file => parseAllDocuments(readFileSync(file, 'utf8')).map(d => d.toJS() as Obj | null))
    .filter((o): o is Obj => !!o?.kind && o.kind !== 'HorizontalPodAutoscaler');
  const [namespace, ...rest] = objects; // config/core/100-namespace.yaml first
  return [namespace, ...releaseImageMaps(objects), ...rest];
}

interface EnvRef {
  valueFrom?: { configMapKeyRef?: { name: string; key: string } };
}

/**
 * The config maps a release generates (eventing-transformations-images, eventing-integrations-images:
 * the images of Knative's JSONata transform and integration sources and sinks, built elsewhere) and
 * config/ lacks, which eventing-controller's env refers to: made with the keys it refers to, naming
 * images the sandbox does not have (using those kinds fails as a missing image does).
 */
function releaseImageMaps(objects: Obj[]): Obj[] {
  const present = new Set(objects.filter(o => o.kind === 'ConfigMap').map(o => o.metadata?.name));
  const wanted = new Map<string, Record<string, string>>();
  for (const o of objects.filter(o => o.kind === 'Deployment')) {
    const spec = o as { spec?: { template?: { spec?: { containers?: { env?: EnvRef[] }[] } } } };
    for (const c of spec.spec?.template?.spec?.containers ?? []) {
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.configMapKeyRef;
        if (!ref || present.has(ref.name)) continue;
        const data = wanted.get(ref.name) ?? {};
        data[ref.key] = `not-in-the-sandbox.invalid/knative/${ref.key}`;
        wanted.set(ref.name, data);
      }
    }
  }
  return [...wanted].map(([name, data]) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: KNATIVE_NAMESPACE },
    data,
  }));
}

/** Knative Serving's CRDs (its Service kind, which knative/ uses), from the Serving module. */
export function servingCrdDir(): string {
  return join(moduleDir(SERVING), 'config', 'core', '300-resources');
}

/**
 * Applies Knative (server-side; --force-conflicts: Knative's PingSource CRD replaces the sandbox's
 * stand-in, test/sandbox/crds) and returns kubectl's output.
 */
export async function installKnative(kubeconfig: string, workDir: string): Promise<string> {
  const file = join(workDir, 'knative-eventing.json');
  writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: knativeObjects() }));
  await kubectl(kubeconfig, 'apply', '--server-side', '-f', servingCrdDir());
  return kubectl(
    kubeconfig,
    'apply',
    '--server-side',
    '--force-conflicts',
    '--field-manager=etcdfn-sandbox',
    '-f',
    file,
  );
}

/** Waits until every Deployment of KNATIVE_DEPLOYMENTS has an available replica. */
export async function waitForKnative(kc: KubeConfig, timeoutMs = 300_000): Promise<void> {
  const apps = kc.makeApiClient(AppsV1Api);
  const deadline = Date.now() + timeoutMs;
  for (const name of KNATIVE_DEPLOYMENTS) {
    for (;;) {
      const d = await apps
        .readNamespacedDeployment({ name, namespace: KNATIVE_NAMESPACE })
        .catch(() => undefined);
      if ((d?.status?.availableReplicas ?? 0) >= 1) break;
      if (Date.now() > deadline) throw new Error(`Knative's ${name} is not available after ${timeoutMs} ms`);
      await new Promise(resolve => setTimeout(resolve, 1000));
    }
  }
}

/**
 * `npm run sandbox -- --knative`: Knative installed and running, the stand-in for Serving, and
 * knative/ applied unchanged (the CRDs of crds/ are the sandbox's already). Returns a stop function.
 */
export async function startKnativeMode(
  kubeconfig: string,
  kc: KubeConfig,
  workDir: string,
  root: string,
  log: (line: string) => void,
): Promise<() => void> {
  await installKnative(kubeconfig, workDir);
  await waitForKnative(kc);
  const stop = startServingStandIn(kc, log);
  await kubectl(kubeconfig, 'apply', '-k', join(root, 'knative'));
  return stop;
}
