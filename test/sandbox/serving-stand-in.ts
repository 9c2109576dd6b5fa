// Knative Serving's part for `npm run sandbox -- --knative`, played by the sandbox: Serving needs a
// networking layer (Kourier, Istio...) that cannot run here. For each Knative Service
// (serving.knative.dev/v1) it writes what Eventing reads of one: a cluster-local Kubernetes Service
// of the same name (selecting the Pods labelled serving.knative.dev/service=<name>, port 80 → the
// container's port) and the Knative Service's status.address.url, which Knative's addressable
// resolver turns into a Trigger's subscriber URI or a dead-letter sink, and a Deployment of one
// replica running the Knative Service's template (no Revisions, no scaling to zero; Knative's
// revision-only fields dropped). It says what it is not: the status's Ready condition stays Unknown
// (reason SandboxStandIn).
import type { KubeConfig } from '@kubernetes/client-node';
import { rawRequest } from './control-plane/apply.ts';

const KSVC = '/apis/serving.knative.dev/v1';
export const SERVICE_LABEL = 'serving.knative.dev/service';

type Probe = { periodSeconds?: number } & Record<string, unknown>;
interface Container {
  ports?: { containerPort: number }[];
  env?: { name: string; value?: string }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  [field: string]: unknown;
}
interface KnativeService {
  metadata: { name: string; namespace: string; generation?: number; uid: string };
  spec?: {
    template?: {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
      spec?: { containers?: Container[]; [field: string]: unknown };
    };
  };
  status?: { observedGeneration?: number; address?: { url?: string } };
}

/** The revision-only fields of a Knative Service's template, which a PodSpec does not have. */
const REVISION_FIELDS = [
  'containerConcurrency',
  'timeoutSeconds',
  'idleTimeoutSeconds',
  'responseStartTimeoutSeconds',
];

/** A Deployment of one replica running the Knative Service's template (no scaling to zero). */
function deploymentOf(ksvc: KnativeService, owner: object): object {
  const { name, namespace } = ksvc.metadata;
  const template = ksvc.spec?.template ?? {};
  const podSpec: Record<string, unknown> = { ...template.spec };
  for (const field of REVISION_FIELDS) delete podSpec[field];
  podSpec.containers = (template.spec?.containers ?? []).map(c => {
    const container: Container = { ...c };
    // periodSeconds 0 asks Knative's queue-proxy for aggressive probing; a Pod needs >= 1.
    for (const probe of ['readinessProbe', 'livenessProbe'] as const)
      if (container[probe]?.periodSeconds === 0) container[probe] = { ...container[probe], periodSeconds: 1 };
    // The sandbox's Pod IPs are IPv4 loopback addresses, whatever the machine's (as functions.ts sets).
    container.env = [...(c.env ?? []), { name: 'ETCDFN_POD_IP_FAMILY', value: 'IPv4' }];
    return container;
  });
  const labels = { ...template.metadata?.labels, [SERVICE_LABEL]: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { [SERVICE_LABEL]: name }, ownerReferences: [owner] },
    spec: {
      replicas: 1,
      selector: { matchLabels: { [SERVICE_LABEL]: name } },
      template: { metadata: { labels, annotations: template.metadata?.annotations }, spec: podSpec },
    },
  };
}

/** The cluster-local URL Serving gives a Knative Service. */
export function clusterLocalUrl(name: string, namespace: string): string {
  return `http://${name}.${namespace}.svc.cluster.local`;
}

async function sync(kc: KubeConfig, ksvc: KnativeService): Promise<void> {
  const { name, namespace, uid } = ksvc.metadata;
  const port = ksvc.spec?.template?.spec?.containers?.[0]?.ports?.[0]?.containerPort ?? 8080;
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      namespace,
      labels: { [SERVICE_LABEL]: name },
      ownerReferences: [
        { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name, uid, controller: true },
      ],
    },
    spec: { selector: { [SERVICE_LABEL]: name }, ports: [{ name: 'http', port: 80, targetPort: port }] },
  };
  const created = await rawRequest(kc, 'POST', `/api/v1/namespaces/${namespace}/services`, service);
  if (created.status >= 300 && created.status !== 409)
    throw new Error(`service ${namespace}/${name}: ${created.status} ${created.body}`);
  const owner = service.metadata.ownerReferences[0];
  const deployments = `/apis/apps/v1/namespaces/${namespace}/deployments`;
  const deployment = deploymentOf(ksvc, owner);
  let put = await rawRequest(kc, 'POST', deployments, deployment);
  if (put.status === 409) put = await rawRequest(kc, 'PUT', `${deployments}/${name}`, deployment);
  if (put.status >= 300) throw new Error(`deployment ${namespace}/${name}: ${put.status} ${put.body}`);
  const url = clusterLocalUrl(name, namespace);
  const status = {
    observedGeneration: ksvc.metadata.generation,
    url,
    address: { url },
    conditions: [
      {
        type: 'Ready',
        status: 'Unknown',
        reason: 'SandboxStandIn',
        message: 'the sandbox has no Knative Serving: a Deployment and a Service of this name, no Revision',
        lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      },
    ],
  };
  const path = `${KSVC}/namespaces/${namespace}/services/${name}/status`;
  const patched = await rawRequest(kc, 'PATCH', path, { status }, 'application/merge-patch+json');
  if (patched.status >= 300)
    throw new Error(`ksvc ${namespace}/${name} status: ${patched.status} ${patched.body}`);
}

/** One pass: serves every Knative Service whose status does not show its current generation. */
async function syncAll(kc: KubeConfig): Promise<void> {
  const reply = await rawRequest(kc, 'GET', `${KSVC}/services`);
  if (reply.status !== 200) return; // Serving's CRDs not there (yet)
  const list = JSON.parse(reply.body) as { items: KnativeService[] };
  for (const ksvc of list.items) {
    const done = ksvc.status?.address?.url && ksvc.status.observedGeneration === ksvc.metadata.generation;
    if (!done) await sync(kc, ksvc);
  }
}

/** Polls the Knative Services every `periodMs` and serves each; returns a stop function. */
export function startServingStandIn(
  kc: KubeConfig,
  log: (line: string) => void,
  periodMs = 1000,
): () => void {
  let stopped = false;
  const loop = async (): Promise<void> => {
    while (!stopped) {
      await syncAll(kc).catch((err: Error) => log(`serving stand-in: ${err.message}`));
      await new Promise(resolve => setTimeout(resolve, periodMs));
    }
  };
  void loop();
  return () => {
    stopped = true;
  };
}
