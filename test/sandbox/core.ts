// The sandbox's cluster half: the API server and the process kubelet, started together. Must run
// inside the private mount namespace (namespace.ts) for Pod and Service names to resolve.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startApiServer, type ApiServer } from './apiserver/index.ts';
import { StorageV1Api } from '@kubernetes/client-node';
import { kubeConfigFor, writeKubeconfig } from './kubeconfig.ts';
import { startKubelet, type Kubelet } from './kubelet/index.ts';
import { podLogHandler } from './kubelet/logs.ts';

export interface CoreOptions {
  dir: string;
  crdDir?: string;
  port?: number;
  ipBase?: string;
  agentCommand?: string[];
  backoffMaxMs?: number;
  persist?: boolean;
  /** how many nodes (default 1): more are named sandbox-2, sandbox-3, … (see LOCAL_PATH_CLASS) */
  nodes?: number;
}

/**
 * With more than one node: a StorageClass whose volumes are tied to the node of their first Pod,
 * as kind's and k3s's default class (rancher.io/local-path, WaitForFirstConsumer) is.
 */
export const LOCAL_PATH_CLASS = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name: 'local-path' },
  provisioner: 'rancher.io/local-path',
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'WaitForFirstConsumer',
};

export interface SandboxCore {
  dir: string;
  api: ApiServer;
  kubelet: Kubelet;
  kubeconfig: string;
  stop(): Promise<void>;
}

export async function startCore(opts: CoreOptions): Promise<SandboxCore> {
  const dir = resolve(opts.dir);
  mkdirSync(dir, { recursive: true });
  const api = await startApiServer({
    port: opts.port ?? 0,
    crdDir: opts.crdDir ? resolve(opts.crdDir) : undefined,
    // Knative's PingSource: run-snapshot makes one per EtcdSnapshotSchedule; the bridge ticks them.
    extraCrdDirs: [join(import.meta.dirname, 'crds')],
    dataDir: opts.persist ? join(dir, 'apiserver') : undefined,
    podGracefulDeletion: true,
  });
  const kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, api.url);
  const nodes = Math.max(1, opts.nodes ?? 1);
  const extraNodes = Array.from({ length: nodes - 1 }, (_, i) => `sandbox-${i + 2}`);
  if (nodes > 1) {
    const storage = kubeConfigFor(api.url).makeApiClient(StorageV1Api);
    await storage.createStorageClass({ body: LOCAL_PATH_CLASS }).catch((err: unknown) => {
      if ((err as { code?: number }).code !== 409) throw err;
    });
  }
  const kubelet = await startKubelet({
    kubeconfig,
    dataDir: join(dir, 'kubelet'),
    extraNodes,
    ipBase: opts.ipBase,
    // The operator image's agent (restore steps in member Pods) is this checkout's agent/main.ts.
    agentCommand: opts.agentCommand ?? [
      process.execPath,
      '--import',
      import.meta.resolve('tsx'),
      join(resolve(import.meta.dirname, '..', '..'), 'agent', 'main.ts'),
    ],
    backoff: opts.backoffMaxMs !== undefined ? { maxMs: opts.backoffMaxMs } : undefined,
  }).catch(async (err: unknown) => {
    await api.close();
    throw err;
  });
  api.registerSubresource('pods/log', podLogHandler(kubelet));
  return {
    dir,
    api,
    kubelet,
    kubeconfig,
    stop: async () => {
      await kubelet.stop();
      await api.close();
    },
  };
}
