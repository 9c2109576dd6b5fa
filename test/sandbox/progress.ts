// Prints a line whenever an EtcdCluster's ready count, phase or progress message changes, so a
// person watching `npm run sandbox` can follow what the operator does.
import { API_VERSION, ETCD_CLUSTER } from '../../shared/api/group.ts';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import { loadKubeConfig } from '../../shared/k8s/client.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';

export function watchProgress(
  kubeconfig: string,
  print: (line: string) => void,
  intervalMs = 1000,
): () => void {
  const kube = new KubeObjects(loadKubeConfig(kubeconfig));
  const last = new Map<string, string>();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    kube
      .list<EtcdCluster & KubeObject>(API_VERSION, ETCD_CLUSTER.kind, '')
      .then(clusters => {
        for (const cluster of clusters) {
          const key = `${cluster.metadata.namespace}/${cluster.metadata.name}`;
          const line = describe(cluster);
          if (last.get(key) !== line) print(`${new Date().toISOString().slice(11, 19)}  ${key}  ${line}`);
          last.set(key, line);
        }
      })
      .catch(() => undefined)
      .finally(() => {
        busy = false;
      });
  }, intervalMs);
  return () => clearInterval(timer);
}

function describe(cluster: EtcdCluster): string {
  const status = cluster.status ?? {};
  const progressing = status.conditions?.find(c => c.type === 'Progressing');
  return `ready ${status.ready ?? '-'}  ${status.phase ?? 'Pending'}  ${progressing?.message ?? ''}`.trimEnd();
}
