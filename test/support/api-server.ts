// For integration tests: a real Kubernetes API server with etcdfn's CRDs (and the foreign kinds the
// sandbox serves: Knative's PingSource, cert-manager's), no node. It is the sandbox's control plane
// (test/sandbox/control-plane: etcd 3.6, kube-apiserver, kube-controller-manager) in a temporary
// folder, removed by close(). About 5 s to start.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { startCountingProxy, type CountingProxy } from './counting-proxy.ts';
import { applyCrds, rawRequest } from '../sandbox/control-plane/apply.ts';
import { serviceAccountReady, startControlPlane, type ControlPlane } from '../sandbox/control-plane/index.ts';

const repoRoot = resolve(import.meta.dirname, '..', '..');
export const CRD_DIR = join(repoRoot, 'crds');

export interface TestApiServer {
  /** https://127.0.0.1:PORT */
  url: string;
  /** the admin kubeconfig, loaded */
  kc: KubeConfig;
  /** the admin kubeconfig file */
  kubeconfig: string;
  controlPlane: ControlPlane;
  /** copies the admin kubeconfig to `path` (for a function's $KUBECONFIG) */
  writeKubeconfig(path: string): void;
  /** one raw JSON request with admin credentials (what `fetch(url + path)` was on plain HTTP) */
  request(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<{ status: number; body: string }>;
  /** creates a namespace and waits for its default ServiceAccount (Pods are refused until then) */
  createNamespace(name: string): Promise<void>;
  /** a plain-HTTP proxy in front of it that counts requests (kubeconfig: kubeConfigFor(proxy.url)) */
  countingProxy(): Promise<CountingProxy>;
  close(): Promise<void>;
}

export interface TestApiServerOptions {
  /** CRD folders to apply (default: crds/ and test/sandbox/crds/) */
  crdDirs?: string[];
  /** extra kube-apiserver flags (name=value) */
  apiserverFlags?: string[];
}

export async function startApiServer(opts: TestApiServerOptions = {}): Promise<TestApiServer> {
  const dir = mkdtempSync(join(tmpdir(), 'etcdfn-apiserver-'));
  let controlPlane: ControlPlane;
  try {
    controlPlane = await startControlPlane({ dir, apiserverFlags: opts.apiserverFlags });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const proxies: CountingProxy[] = [];
  const close = async (): Promise<void> => {
    for (const proxy of proxies) await proxy.close();
    await controlPlane.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(controlPlane.kubeconfig);
    await applyCrds(kc, opts.crdDirs ?? [CRD_DIR, join(repoRoot, 'test', 'sandbox', 'crds')]);
    return {
      url: controlPlane.url,
      kc,
      kubeconfig: controlPlane.kubeconfig,
      controlPlane,
      writeKubeconfig: path => copyFileSync(controlPlane.kubeconfig, path),
      request: (method, path, body, contentType) => rawRequest(kc, method, path, body, contentType),
      createNamespace: async name => {
        const reply = await rawRequest(kc, 'POST', '/api/v1/namespaces', { metadata: { name } });
        if (reply.status !== 201 && reply.status !== 409)
          throw new Error(`namespace ${name}: ${reply.status} ${reply.body}`);
        await serviceAccountReady(controlPlane.url, controlPlane.pki, name, Date.now() + 30_000);
      },
      countingProxy: async () => {
        const proxy = await startCountingProxy(kc);
        proxies.push(proxy);
        return proxy;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
