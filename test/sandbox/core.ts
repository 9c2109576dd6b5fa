// The sandbox's cluster half: the API server and the process kubelet, started together. Must run
// inside the private mount namespace (namespace.ts) for Pod and Service names to resolve.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startApiServer, type ApiServer } from './apiserver/index.ts';
import { writeKubeconfig } from './kubeconfig.ts';
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
}

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
  const kubelet = await startKubelet({
    kubeconfig,
    dataDir: join(dir, 'kubelet'),
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
