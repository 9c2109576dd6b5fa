// For tests: our node (the process kubelet with its provisioner and DNS) on a test's real API server
// (./api-server.ts), configured as the sandbox configures it (test/sandbox/core.ts): the admin
// kubeconfig, a serving certificate signed by the cluster's CA, the CSIDriver and StorageClasses
// its provisioner serves.
//
//   const api = await startApiServer();
//   const kubelet = await startNode(api, { dataDir: join(dir, 'kubelet') });
import { installNodeParts, kubeletServing } from '../sandbox/core.ts';
import { startKubelet, type Kubelet, type KubeletOptions } from '../sandbox/kubelet/index.ts';
import type { TestApiServer } from './api-server.ts';

export type NodeOptions = Omit<KubeletOptions, 'kc' | 'kubeconfig' | 'serving'>;

export async function startNode(api: TestApiServer, opts: NodeOptions): Promise<Kubelet> {
  await installNodeParts(api.kc, (opts.extraNodes?.length ?? 0) > 0);
  return startKubelet({
    ...opts,
    kubeconfig: api.kubeconfig,
    serving: kubeletServing(api.controlPlane),
  });
}
