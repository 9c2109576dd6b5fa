// The sandbox's cluster half: the real control plane (etcd, kube-apiserver, kube-controller-manager,
// control-plane/) and what a node provides, ours: the process kubelet (with its DNS and its storage
// provisioner and resizer). Must run inside the private mount namespace (namespace.ts) for Pod and
// Service names to resolve.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { applyCrds, rawRequest } from './control-plane/apply.ts';
import { SERVICE_CIDR, startControlPlane, type ControlPlane } from './control-plane/index.ts';
import { egressSelector } from './kubelet/cluster-egress.ts';
import { startKubelet, type Kubelet } from './kubelet/index.ts';
import { CSI_DRIVER, SANDBOX_DEFAULT_CLASS } from './kubelet/provisioner.ts';

export interface CoreOptions {
  dir: string;
  crdDir?: string;
  port?: number;
  ipBase?: string;
  agentCommand?: string[];
  backoffMaxMs?: number;
  persist?: boolean;
  /** Pods that ask for it run in network namespaces of their own (kubelet/pod-network.ts) */
  podNetwork?: boolean;
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
  /** the real control plane: url, kubeconfig, version */
  controlPlane: ControlPlane;
  /** https://127.0.0.1:PORT */
  url: string;
  kubelet: Kubelet;
  /** the admin kubeconfig file */
  kubeconfig: string;
  /** the same, loaded */
  kc: KubeConfig;
  stop(): Promise<void>;
}

/** Creates an object unless one by its name exists (what an installer leaves on a new cluster). */
async function ensure(
  kc: KubeConfig,
  path: string,
  object: Record<string, unknown> & { metadata: { name: string } },
): Promise<void> {
  const reply = await rawRequest(kc, 'POST', path, object);
  if (reply.status >= 300 && reply.status !== 409)
    throw new Error(`cannot create ${path}/${object.metadata.name}: ${reply.status} ${reply.body}`);
}

/**
 * What the cluster's installer leaves for its nodes' storage: the CSIDriver of the kubelet's
 * provisioner and the default StorageClass; with more than one node, LOCAL_PATH_CLASS too.
 */
export async function installNodeParts(kc: KubeConfig, multiNode: boolean): Promise<void> {
  await ensure(kc, '/apis/storage.k8s.io/v1/csidrivers', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIDriver',
    metadata: { name: CSI_DRIVER },
    // No attacher runs: the volume is a local directory, mounted by the kubelet.
    spec: { attachRequired: false, podInfoOnMount: false, volumeLifecycleModes: ['Persistent'] },
  });
  await ensure(kc, '/apis/storage.k8s.io/v1/storageclasses', SANDBOX_DEFAULT_CLASS);
  if (multiNode) await ensure(kc, '/apis/storage.k8s.io/v1/storageclasses', LOCAL_PATH_CLASS);
}

/** The kubelet's serving certificate, signed by the control plane's CA (kubectl logs goes through it). */
export function kubeletServing(controlPlane: ControlPlane): { cert: string; key: string; ca: string } {
  return { ...controlPlane.pki.kubeletServing, ca: controlPlane.pki.ca.cert };
}

export async function startCore(opts: CoreOptions): Promise<SandboxCore> {
  const dir = resolve(opts.dir);
  mkdirSync(dir, { recursive: true });
  const cpDir = join(dir, 'control-plane');
  // Without --persist a restart is a new cluster: the store starts empty (certificates are reused).
  if (!opts.persist) rmSync(join(cpDir, 'etcd'), { recursive: true, force: true });
  // With the pod network, kube-apiserver reaches webhooks' Services through the kubelet's egress.
  mkdirSync(cpDir, { recursive: true });
  const egress = opts.podNetwork ? egressSelector(cpDir) : undefined;
  const controlPlane = await startControlPlane({
    dir: cpDir,
    port: opts.port,
    apiserverFlags: egress ? [egress.flag] : [],
  });
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(controlPlane.kubeconfig);
    await applyCrds(kc, [
      ...(opts.crdDir ? [resolve(opts.crdDir)] : []),
      // Knative's PingSource (run-snapshot makes one per schedule; the bridge ticks them) and
      // cert-manager's kinds (the sandbox's stand-in cert-manager signs them).
      join(import.meta.dirname, 'crds'),
    ]);
    const nodes = Math.max(1, opts.nodes ?? 1);
    const extraNodes = Array.from({ length: nodes - 1 }, (_, i) => `sandbox-${i + 2}`);
    await installNodeParts(kc, nodes > 1);
    const kubelet = await startKubelet({
      kubeconfig: controlPlane.kubeconfig,
      dataDir: join(dir, 'kubelet'),
      extraNodes,
      ipBase: opts.ipBase,
      podNetwork: opts.podNetwork,
      clusterEgressSocket: egress?.socket,
      serviceCidr: SERVICE_CIDR,
      serving: kubeletServing(controlPlane),
      // The operator image's agent (restore steps in member Pods) is this checkout's agent/main.ts.
      agentCommand: opts.agentCommand ?? [
        process.execPath,
        '--import',
        import.meta.resolve('tsx'),
        join(resolve(import.meta.dirname, '..', '..'), 'agent', 'main.ts'),
      ],
      // The functions' Knative Services (the Serving stand-in's Deployments): this checkout's server.
      functionCommand: [
        process.execPath,
        '--import',
        import.meta.resolve('tsx'),
        join(resolve(import.meta.dirname, '..', '..'), 'functions', 'serve.ts'),
      ],
      backoff: opts.backoffMaxMs !== undefined ? { maxMs: opts.backoffMaxMs } : undefined,
    });
    // Where the guide and docs say it is (<dir>/kubeconfig), whatever the control plane's layout.
    const kubeconfig = join(dir, 'kubeconfig');
    copyFileSync(controlPlane.kubeconfig, kubeconfig);
    return {
      dir,
      controlPlane,
      url: controlPlane.url,
      kubelet,
      kubeconfig,
      kc,
      stop: async () => {
        await kubelet.stop();
        await controlPlane.stop();
      },
    };
  } catch (err) {
    await controlPlane.stop();
    throw err;
  }
}
