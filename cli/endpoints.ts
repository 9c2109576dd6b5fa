// Where a cluster's members answer: each member Pod's client URL, by Pod name. The plugin talks to
// etcd through the Pod IPs, so it needs a network path to them (in the cluster, or the sandbox).
import type { Cluster } from './context.ts';
import { CliError, listPods, type Cli } from './context.ts';
import { CLIENT_PORT } from '../shared/names.ts';

export interface MemberEndpoint {
  /** The member's Pod name, which is also its etcd member name. */
  name: string;
  endpoint: string;
}

/** Every running member Pod with an IP, by name; a CliError when there is none or etcd is out of reach. */
export async function memberEndpoints(cli: Cli, cluster: Cluster): Promise<MemberEndpoint[]> {
  const name = cluster.metadata.name ?? '';
  if (cluster.spec.tls?.client || cluster.spec.auth?.enabled) {
    throw new CliError(`${name} uses client TLS or etcd authentication, which the plugin cannot use yet`);
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
