// Helpers of the restore e2e tests: writing many keys, reading one member's own copy of them
// (serializable reads), the cluster ID etcd reports, the ready members' Pod IPs.
import { Etcd3 } from 'etcd3';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { KubeObject, KubeObjects } from '../../shared/k8s/objects.ts';

export const KEYS = 10_000;
/** Puts per transaction: under etcd's default --max-txn-ops (128). */
const PER_TXN = 100;

export type Cluster = EtcdCluster & KubeObject;
export interface PodLike extends KubeObject {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}

export const keyName = (n: number): string => `k/${String(n).padStart(5, '0')}`;

/** Writes KEYS keys `k/00000`… with value `value-<n>`, in batched transactions. */
export async function writeKeys(ip: string, count: number): Promise<void> {
  const client = new Etcd3({ hosts: `http://${ip}:2379` });
  try {
    for (let start = 0; start < count; start += PER_TXN * 4) {
      await Promise.all(
        [0, 1, 2, 3].map(async part => {
          const from = start + part * PER_TXN;
          if (from >= count) return;
          const ops = [];
          for (let n = from; n < Math.min(count, from + PER_TXN); n++) {
            ops.push(client.put(keyName(n)).value(`value-${n}`));
          }
          await client
            .if(keyName(from), 'Create', '>', -1)
            .then(...ops)
            .commit();
        }),
      );
    }
  } finally {
    client.close();
  }
}

/** What one member holds locally: the key count under k/, a sample value and its revision. */
export async function keysOn(
  ip: string,
  sampleKey = keyName(4321),
): Promise<{ count: number; sample: string | null; revision: number }> {
  const client = new Etcd3({ hosts: `http://${ip}:2379` });
  try {
    const count = await client.getAll().prefix('k/').serializable(true).count();
    const sample = await client.get(sampleKey).serializable(true).string();
    const status = await client.maintenance.status();
    return { count, sample, revision: Number(status.header.revision) };
  } finally {
    client.close();
  }
}

export async function clusterIdOf(ip: string): Promise<string> {
  const client = new Etcd3({ hosts: `http://${ip}:2379` });
  try {
    const list = await client.cluster.memberList({ linearizable: false });
    return BigInt(list.header.cluster_id).toString(16);
  } finally {
    client.close();
  }
}

export async function podIPs(kube: KubeObjects, namespace: string, cluster: string): Promise<string[]> {
  const pods = await kube.list<PodLike>('v1', 'Pod', namespace, `etcdfn.io/cluster=${cluster}`);
  return pods
    .filter(p => p.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True'))
    .map(p => p.status?.podIP ?? '')
    .filter(Boolean);
}

export function condition(cluster: Cluster | undefined, type: string) {
  return cluster?.status?.conditions?.find(c => c.type === type);
}
