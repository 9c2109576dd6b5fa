// Where a cluster's members answer: each member Pod's client URL, by Pod name. The plugin talks to
// etcd through the Pod IPs, so it needs a network path to them (in the cluster, or the sandbox).
import type { Cluster } from './context.ts';
import { CliError, kubeCall, listPods, type Cli } from './context.ts';
import type { EtcdConnectionOptions } from '../shared/etcd/connection.ts';
import { rootAuthAccess, rootAuthSecretName } from '../shared/etcd/root-access.ts';
import type { KubeObject } from '../shared/k8s/objects.ts';
import { CLIENT_PORT } from '../shared/names.ts';

export interface MemberEndpoint {
  /** The member's Pod name, which is also its etcd member name. */
  name: string;
  endpoint: string;
}

/** Every running member Pod with an IP, by name; a CliError when there is none or etcd is out of reach. */
export async function memberEndpoints(cli: Cli, cluster: Cluster): Promise<MemberEndpoint[]> {
  const name = cluster.metadata.name ?? '';
  if (cluster.spec.tls?.client) {
    throw new CliError(`${name} uses client TLS, which the plugin cannot use yet`);
  }
  const pods = await listPods(cli, name);
  const members = pods
    .filter(p => p.status?.podIP && !p.metadata.deletionTimestamp)
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))
    .map(p => ({ name: p.metadata.name ?? '', endpoint: `http://${p.status?.podIP}:${CLIENT_PORT}` }));
  if (members.length === 0) {
    const paused = cluster.status?.phase === 'Paused' ? ' (the cluster is paused)' : '';
    throw new CliError(`etcd unreachable: no Pod of ${name} has an IP${paused}`);
  }
  return members;
}

/**
 * How to dial the cluster's etcd: as the operator does (shared/etcd/root-access.ts), root with the
 * password etcd has (the operator's applied copy) once status.authEnabled; nothing before.
 */
export async function etcdAccess(cli: Cli, cluster: Cluster): Promise<EtcdConnectionOptions> {
  const secret = rootAuthSecretName(cluster);
  let data: Record<string, Buffer> | undefined;
  if (secret !== undefined) {
    const read = await kubeCall(cli, () =>
      cli.kube.get<KubeObject & { data?: Record<string, string> }>({
        apiVersion: 'v1',
        kind: 'Secret',
        namespace: cli.namespace,
        name: secret,
      }),
    );
    if (read.kind === 'found') {
      const raw = read.object.data ?? {};
      data = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
    }
  }
  const access = rootAuthAccess(cluster, () => data);
  if ('problem' in access) throw new CliError(access.problem.message);
  return access.auth ? { auth: access.auth } : {};
}
