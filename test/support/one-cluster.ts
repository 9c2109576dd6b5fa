// For the bootstrap e2e tests: the members of a cluster form ONE etcd cluster, asked member by
// member (each Pod's own endpoint, not the Service): every one answers with the cluster ID the
// status recorded, and a put made through one is read back through each of the others.
import { Etcd3 } from 'etcd3';
import { API_VERSION } from '../../shared/api/group.ts';
import { toHexId } from '../../shared/etcd/ids.ts';
import type { KubeObject, KubeObjects } from '../../shared/k8s/objects.ts';
import type { Cluster } from './converge.ts';

interface PodLike extends KubeObject {
  status?: { podIP?: string };
}

/** Why the members are not one cluster with one put readable everywhere, or undefined. */
export async function notOneCluster(
  kube: KubeObjects,
  namespace: string,
  name: string,
): Promise<string | undefined> {
  const read = await kube.get<Cluster>({ apiVersion: API_VERSION, kind: 'EtcdCluster', namespace, name });
  if (read.kind !== 'found') return `EtcdCluster ${name} not found`;
  const recorded = read.object.status?.clusterID;
  if (!recorded) return 'no cluster ID recorded';
  const pods = await kube.list<PodLike>('v1', 'Pod', namespace, `etcdfn.io/cluster=${name}`);
  const urls = pods.map(p => `http://${p.status?.podIP}:2379`);
  const seen: string[] = [];
  for (const url of urls) {
    const client = new Etcd3({ hosts: url, dialTimeout: 2000 });
    try {
      const status = await client.maintenance.status();
      seen.push(toHexId(status.header.cluster_id));
    } catch (err) {
      return `${url}: ${(err as Error).message}`;
    } finally {
      client.close();
    }
  }
  if (seen.some(id => id !== recorded))
    return `the members answer for clusters ${seen.join(', ')}; status says ${recorded}`;
  const key = `one-cluster/${name}`;
  const value = `written-${Date.now()}`;
  const writer = new Etcd3({ hosts: urls[0] ?? '', dialTimeout: 2000 });
  try {
    await writer.put(key).value(value).exec();
  } finally {
    writer.close();
  }
  for (const url of urls) {
    const reader = new Etcd3({ hosts: url, dialTimeout: 2000 });
    try {
      const got = await reader.get(key).string();
      if (got !== value) return `${url} reads ${got} for the put made through ${urls[0]}`;
    } finally {
      reader.close();
    }
  }
  return undefined;
}
