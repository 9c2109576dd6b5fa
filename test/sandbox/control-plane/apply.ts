// Applies manifests to the real API server at start: the CRDs (ours, and the few foreign kinds the
// sandbox serves: Knative's PingSource, cert-manager's), waiting until each is Established.
// Objects go as the JSON read from the files: client-node's typed serializer would drop schema
// extensions it does not model (x-kubernetes-int-or-string among them).
import { readdirSync, readFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { join } from 'node:path';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';

export function readManifests(dir: string): KubernetesObject[] {
  const out: KubernetesObject[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!/\.(ya?ml|json)$/.test(file)) continue;
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      const obj = doc.toJS() as KubernetesObject | null;
      if (obj?.kind) out.push(obj);
    }
  }
  return out;
}

interface Reply {
  status: number;
  body: string;
}

/** One raw request with the kubeconfig's credentials. */
export async function rawRequest(
  kc: KubeConfig,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<Reply> {
  const server = kc.getCurrentCluster()!.server;
  const opts: RequestOptions = {
    method,
    headers: { 'content-type': contentType, accept: 'application/json' },
  };
  await kc.applyToHTTPSOptions(opts);
  return new Promise((resolve, reject) => {
    const req = request(`${server}${path}`, opts, res => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** Creates a CRD, or replaces it when one by that name exists (as `kubectl apply` ends up doing). */
async function applyCrd(kc: KubeConfig, crd: KubernetesObject): Promise<void> {
  const name = crd.metadata!.name!;
  let reply = await rawRequest(kc, 'POST', CRDS, crd);
  if (reply.status === 409) {
    const existing = JSON.parse((await rawRequest(kc, 'GET', `${CRDS}/${name}`)).body) as KubernetesObject;
    const body = {
      ...crd,
      metadata: { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion },
    };
    reply = await rawRequest(kc, 'PUT', `${CRDS}/${name}`, body);
  }
  if (reply.status >= 300) {
    const message = (JSON.parse(reply.body) as { message?: string }).message ?? reply.body;
    throw new Error(`the API server refused CRD ${name}: ${message}`);
  }
}

/**
 * Applies every CRD in the folders and waits until the API server serves each: Established, and a
 * list answers 200 (right after Established the watch cache is still filling and answers 429
 * "storage is (re)initializing").
 */
export async function applyCrds(kc: KubeConfig, dirs: string[], timeoutMs = 60_000): Promise<void> {
  const crds = dirs.flatMap(readManifests).filter(o => o.kind === 'CustomResourceDefinition');
  for (const crd of crds) await applyCrd(kc, crd);
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    for (;;) {
      const got = JSON.parse((await rawRequest(kc, 'GET', `${CRDS}/${crd.metadata!.name!}`)).body) as {
        status?: { conditions?: { type: string; status: string; message?: string }[] };
      };
      const conditions = got.status?.conditions ?? [];
      if (conditions.some(c => c.type === 'Established' && c.status === 'True')) break;
      const refused = conditions.find(c => c.type === 'NamesAccepted' && c.status === 'False');
      if (refused) throw new Error(`CRD ${crd.metadata!.name}: ${refused.message}`);
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata!.name} not Established in time`);
      await new Promise(resolve => setTimeout(resolve, 100));
    }
    const spec = (
      crd as unknown as {
        spec: { group: string; names: { plural: string }; versions: { name: string; served: boolean }[] };
      }
    ).spec;
    for (const version of spec.versions.filter(v => v.served)) {
      const path = `/apis/${spec.group}/${version.name}/${spec.names.plural}?limit=1`;
      while ((await rawRequest(kc, 'GET', path)).status !== 200) {
        if (Date.now() > deadline) throw new Error(`${path} not served in time`);
        await new Promise(resolve => setTimeout(resolve, 100));
      }
    }
  }
}
