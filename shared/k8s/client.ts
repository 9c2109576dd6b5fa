// Loading a KubeConfig the way every etcdfn process does: $KUBECONFIG or ~/.kube/config on a
// laptop and in the sandbox, the service account inside a cluster.
import { KubeConfig } from '@kubernetes/client-node';

export function loadKubeConfig(path = process.env.KUBECONFIG): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}
