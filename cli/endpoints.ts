// Where a cluster's members answer, and how to dial them: each member Pod's client URL by Pod name,
// plus the connection options (client TLS, credentials) built from the cluster's Secrets, the same
// way the operator builds its own (shared/etcd/access.ts). The plugin talks to etcd through the Pod
// IPs, so it needs a network path to them (in the cluster, or the sandbox); with TLS it checks the
// serving certificate against the client Service's name, which every member's certificate carries.
import type { Cluster } from './context.ts';
import { CliError, kubeCall, listPods, type Cli } from './context.ts';
import type { EtcdConnectionOptions } from '../shared/etcd/connection.ts';
import { accessSecretNames } from '../shared/etcd/access.ts';
import { resolveClusterAccess } from '../shared/runtime/cluster-etcd.ts';
import { CLIENT_PORT, clientServiceName } from '../shared/names.ts';

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

/** Every running member Pod with an IP, and how to dial them; a CliError when etcd is out of reach. */
export async function memberEndpoints(cli: Cli, cluster: Cluster): Promise<ClusterReach> {
  const name = cluster.metadata.name ?? '';
  const options = await connectionOptions(cli, cluster);
  const scheme = options.tls ? 'https' : 'http';
  const pods = await listPods(cli, name);
  const members = pods
    .filter(p => p.status?.podIP && !p.metadata.deletionTimestamp)
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
