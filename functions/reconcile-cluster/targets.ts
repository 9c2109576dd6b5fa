// Which EtcdCluster an event is about. Pure: members are named <cluster>-<ordinal>, so a member
// event names its cluster without a read (and still does after the member is gone).
import { API_VERSION, ETCD_CLUSTER, ETCD_MEMBER } from '../../shared/api/group.ts';
import type { OperatorEvent } from '../../shared/events/types.ts';
import { clusterOfWake } from '../../shared/plan/wake/cluster-wake.ts';

export type ClusterTarget =
  /** `woken`: the cluster's own wake-up PingSource sent the event. */
  | { kind: 'cluster'; namespace: string; name: string; woken?: boolean }
  | { kind: 'all-clusters' }
  | { kind: 'ignore'; why: string };

export function clusterTarget(event: OperatorEvent): ClusterTarget {
  if (event.kind === 'tick') {
    // A cluster's own wake-up (shared/plan/wake/cluster-wake.ts) names it; the resync tick names none.
    const woken = clusterOfWake(event.data);
    return woken ? { kind: 'cluster', ...woken, woken: true } : { kind: 'all-clusters' };
  }
  const { apiVersion, kind, namespace, name } = event.ref;
  if (apiVersion !== API_VERSION)
    return { kind: 'ignore', why: `${apiVersion} ${kind} is not for reconcile-cluster` };
  if (kind === ETCD_CLUSTER.kind) return { kind: 'cluster', namespace, name };
  if (kind === ETCD_MEMBER.kind) {
    const cluster = clusterOfMember(name);
    return cluster
      ? { kind: 'cluster', namespace, name: cluster }
      : { kind: 'ignore', why: `member ${name} is not named <cluster>-<ordinal>` };
  }
  return { kind: 'ignore', why: `${kind} is not for reconcile-cluster` };
}

export function clusterOfMember(member: string): string | undefined {
  const match = /^(.+)-\d+$/.exec(member);
  return match?.[1];
}
