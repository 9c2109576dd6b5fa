// A cluster's wake-up (shared/plan/wake/wake.ts): while its restore waits on something only the user can
// fix and no event of ours announces (a credentials Secret or a claim created, an EtcdSnapshot
// completing), at bootstrap or for an in-place request, its PingSource `<name>-etcdfn-cluster-wake`
// fires every minute for reconcile-cluster (whose Trigger takes PingSources by that suffix).
import type { EtcdCluster } from '../../api/etcd-cluster.ts';
import type { KubeObject } from '../../k8s/objects.ts';
import type { ClusterState } from '../cluster/types.ts';
import { RESTORED_CONDITION } from '../restore/source.ts';
import { boundedName, type PingSink, type PingSource } from '../../builders/ping-source.ts';
import { pingSchedule } from '../schedule/ping.ts';
import { wakePingSource, wokenObject } from './wake.ts';

const DATA_KEY = 'etcdCluster';
/** The end of every cluster wake-up's name; knative/triggers.yaml routes PingSources by it. */
export const CLUSTER_WAKE_SUFFIX = '-etcdfn-cluster-wake';

export const clusterWakeName = (clusterName: string): string =>
  boundedName('', clusterName, CLUSTER_WAKE_SUFFIX);

/** Whether the cluster waits on a restore that something outside our events will unblock. */
export function restoreWaits(state: Pick<ClusterState, 'restore' | 'inPlaceRestore'>): boolean {
  return state.restore?.kind === 'blocked' || state.inPlaceRestore?.kind === 'blocked';
}

/**
 * Whether a wake-up may exist: only a blocked restore makes one, and a blocked restore always says
 * Restored=False; so a cluster without that condition needs no read of its PingSource.
 */
export function mayHaveWake(cluster: EtcdCluster): boolean {
  return (cluster.status?.conditions ?? []).some(c => c.type === RESTORED_CONDITION && c.status === 'False');
}

export function desiredClusterWake(
  cluster: EtcdCluster & KubeObject,
  waits: boolean,
  sink: PingSink,
): PingSource | undefined {
  if (!waits || cluster.metadata.deletionTimestamp) return undefined;
  const name = cluster.metadata.name ?? '';
  return wakePingSource(cluster, clusterWakeName(name), DATA_KEY, name, sink);
}

/** The cluster a tick's data names, when the tick came from a cluster's wake-up. */
export const clusterOfWake = (data: unknown) => wokenObject(data, DATA_KEY);

/**
 * The defragmentation schedule's own timing: `<name>-defrag-etcdfn-cluster-wake` fires at the
 * schedule's times for reconcile-cluster (the functions scale to zero; the resync tick is too rare),
 * and goes with the schedule. Same route and data as the wake-up above.
 */
export const defragWakeName = (clusterName: string): string =>
  boundedName('', clusterName, `-defrag${CLUSTER_WAKE_SUFFIX}`);

export function desiredDefragWake(cluster: EtcdCluster & KubeObject, sink: PingSink): PingSource | undefined {
  const policy = cluster.spec.maintenance?.defrag;
  if (!policy?.schedule || cluster.metadata.deletionTimestamp) return undefined;
  const name = cluster.metadata.name ?? '';
  const wake = wakePingSource(cluster, defragWakeName(name), DATA_KEY, name, sink);
  const { schedule: _everyMinute, timezone: _none, ...rest } = wake.spec;
  return { ...wake, spec: { ...rest, ...pingSchedule(policy.schedule, policy.timeZone) } };
}
