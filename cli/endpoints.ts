// Where a cluster's members answer, and how to dial them: each member Pod's client URL by Pod name,
// plus the connection options (client TLS, credentials) built from the cluster's Secrets, the same
// way the operator builds its own (shared/etcd/access.ts). The plugin talks to etcd through the Pod
// IPs, so it needs a network path to them (in the cluster, or the sandbox); with TLS it checks the
// serving certificate against the client Service's name, which every member's certificate carries.
import type { Cluster } from './context.ts';
import { CliError, kubeCall, listPods, type Cli, type Pod } from './context.ts';
import { API_VERSION } from '../shared/api/group.ts';
import type { KubeObject } from '../shared/k8s/objects.ts';
import type { EtcdConnectionOptions } from '../shared/etcd/connection.ts';
import { accessSecretNames } from '../shared/etcd/access.ts';
import { resolveClusterAccess } from '../shared/runtime/cluster-etcd.ts';
import { CLIENT_PORT, CLUSTER_LABEL, clientServiceName } from '../shared/names.ts';

export interface MemberEndpoint {
  /** The member's Pod name, which is also its etcd member name. */
  name: string;
  endpoint: string;
}

export interface ClusterReach {
  members: MemberEndpoint[];
  /** Pass to every etcd call: TLS material and credentials, or nothing for a plaintext cluster. */
  options: EtcdConnectionOptions;
}

/**
 * The Pods worth dialling: each has an IP, is not being deleted, and its EtcdMember exists and is not
 * being deleted. After a scale-down the removed member's Pod outlives its EtcdMember until the
 * garbage collector deletes it, with etcd already stopped in it; it is not a member any more, so it
 * must not make a healthy cluster read as unhealthy.
 */
export function memberPods(pods: readonly Pod[], etcdMembers: readonly KubeObject[]): Pod[] {
  const live = new Set(etcdMembers.filter(m => !m.metadata.deletionTimestamp).map(m => m.metadata.uid));
  return pods.filter(p => {
    if (!p.status?.podIP || p.metadata.deletionTimestamp) return false;
    const owner = p.metadata.ownerReferences?.find(o => o.controller && o.kind === 'EtcdMember');
    return owner !== undefined && live.has(owner.uid);
  });
}

/** Every running member Pod with an IP, and how to dial them; a CliError when etcd is out of reach. */
export async function memberEndpoints(cli: Cli, cluster: Cluster): Promise<ClusterReach> {
  const name = cluster.metadata.name ?? '';
  const options = await connectionOptions(cli, cluster);
  const scheme = options.tls ? 'https' : 'http';
  const [pods, etcdMembers] = await Promise.all([
    listPods(cli, name),
    kubeCall(cli, () =>
      cli.kube.list<KubeObject>(API_VERSION, 'EtcdMember', cli.namespace, `${CLUSTER_LABEL}=${name}`),
    ),
  ]);
  const members = memberPods(pods, etcdMembers)
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))
    .map(p => ({ name: p.metadata.name ?? '', endpoint: `${scheme}://${p.status?.podIP}:${CLIENT_PORT}` }));
  if (members.length === 0) {
    const paused = cluster.status?.phase === 'Paused' ? ' (the cluster is paused)' : '';
    throw new CliError(`etcd unreachable: no Pod of ${name} has an IP${paused}`);
  }
  return { members, options };
}

/** The cluster's client TLS and credentials, read from its Secrets with the user's own rights. */
export async function connectionOptions(cli: Cli, cluster: Cluster): Promise<EtcdConnectionOptions> {
  if (accessSecretNames(cluster).length === 0) return {};
  const name = cluster.metadata.name ?? '';
  const resolved = await kubeCall(cli, () => resolveClusterAccess(cli.kube, cluster));
  if (resolved.kind === 'unresolved') throw new CliError(`cannot dial ${name}: ${resolved.problem.message}`);
  const { tls, auth } = resolved.access;
  const serverName = `${clientServiceName(name)}.${cluster.metadata.namespace ?? cli.namespace}.svc`;
  return { ...(tls && { tls: { ...tls, serverName } }), ...(auth && { auth }) };
}
