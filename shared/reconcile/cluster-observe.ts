// Gathers a ClusterState: one read of each kind of object, then etcd's view through the members.
import type { V1NetworkPolicy, V1Pod, V1PodDisruptionBudget, V1Service } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import type { EtcdMember } from '../api/etcd-member.ts';
import { API_VERSION, ETCD_CLUSTER, ETCD_MEMBER } from '../api/group.ts';
import type { KubeObject } from '../k8s/objects.ts';
import {
  clientServiceName,
  clusterSelector,
  headlessServiceName,
  networkPolicyName,
  podDisruptionBudgetName,
} from '../names.ts';
import type { ClusterState, EtcdView, PodFacts } from '../plan/cluster-state.ts';
import { etcdEndpoints } from '../plan/members.ts';
import type { Context } from '../runtime/context.ts';

export interface ClusterRef {
  namespace: string;
  name: string;
}

export async function observeCluster(ctx: Context, ref: ClusterRef): Promise<ClusterState | undefined> {
  const read = await ctx.kube.get<EtcdCluster & KubeObject>({
    apiVersion: API_VERSION,
    kind: ETCD_CLUSTER.kind,
    namespace: ref.namespace,
    name: ref.name,
  });
  if (read.kind === 'not-found') return undefined;
  const cluster = read.object;
  const selector = clusterSelector(ref.name);
  const namespaced = (apiVersion: string, kind: string, name: string) => ({
    apiVersion,
    kind,
    namespace: ref.namespace,
    name,
  });
  const [members, pods, headless, client, pdb, networkPolicy] = await Promise.all([
    ctx.kube.list<EtcdMember & KubeObject>(API_VERSION, ETCD_MEMBER.kind, ref.namespace, selector),
    ctx.kube.list<V1Pod & KubeObject>('v1', 'Pod', ref.namespace, selector),
    ctx.kube.find<V1Service & KubeObject>(namespaced('v1', 'Service', headlessServiceName(ref.name))),
    ctx.kube.find<V1Service & KubeObject>(namespaced('v1', 'Service', clientServiceName(ref.name))),
    ctx.kube.find<V1PodDisruptionBudget & KubeObject>(
      namespaced('policy/v1', 'PodDisruptionBudget', podDisruptionBudgetName(ref.name)),
    ),
    ctx.kube.find<V1NetworkPolicy & KubeObject>(
      namespaced('networking.k8s.io/v1', 'NetworkPolicy', networkPolicyName(ref.name)),
    ),
  ]);
  const state: ClusterState = {
    now: ctx.now(),
    cluster,
    members,
    pods: pods.map(podFacts),
    services: { headless, client },
    pdb,
    networkPolicy,
  };
  if (ctx.settings.operatorNamespace) state.operatorNamespace = ctx.settings.operatorNamespace;
  const endpoints = etcdEndpoints(state, cluster);
  if (endpoints.length > 0) state.etcd = await etcdView(ctx, endpoints);
  return state;
}

export function podFacts(pod: V1Pod): PodFacts {
  const ready = pod.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True') ?? false;
  const facts: PodFacts = {
    name: pod.metadata?.name ?? '',
    ready,
    phase: pod.status?.phase ?? 'Pending',
    deleting: pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null,
  };
  const problem = podProblem(pod);
  if (problem) facts.problem = problem;
  return facts;
}

const STUCK_REASONS = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CrashLoopBackOff',
  'CreateContainerConfigError',
  'CreateContainerError',
]);

function podProblem(pod: V1Pod): string | undefined {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const status of statuses) {
    const waiting = status.state?.waiting;
    if (waiting?.reason && STUCK_REASONS.has(waiting.reason)) {
      return `${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}`;
    }
  }
  return undefined;
}

async function etcdView(ctx: Context, endpoints: string[]): Promise<EtcdView> {
  const list = await ctx.etcd.listMembers(endpoints);
  if (list.kind !== 'ok') return { reachable: false, error: list.message };
  const view: EtcdView = { reachable: true, members: list.members, clusterId: list.clusterId };
  const status = await ctx.etcd.memberStatus(list.endpoint);
  if (status.kind === 'ok' && status.status.leaderId) view.leaderId = status.status.leaderId;
  return view;
}
