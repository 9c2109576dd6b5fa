// Gathers a ClusterState: one read of each kind of object, then etcd's view through the members.
import type {
  V1NetworkPolicy,
  V1Pod,
  V1PodDisruptionBudget,
  V1Secret,
  V1Service,
} from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import type { EtcdMember } from '../api/etcd-member.ts';
import type { EtcdSnapshot } from '../api/etcd-snapshot.ts';
import { API_VERSION, ETCD_CLUSTER, ETCD_MEMBER, ETCD_SNAPSHOT } from '../api/group.ts';
import { secretValues } from '../k8s/secrets.ts';
import { RESTORE_CONTAINERS, parseFailure } from '../restore/layout.ts';
import {
  resolveRestore,
  restoreClaimName,
  restoreSecretName,
  seedResolution,
} from '../plan/restore/source.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { resolveInPlace, type InPlaceRestoreFacts } from '../plan/restore/in-place.ts';
import { activeRestore, inPlaceSource, pendingRequest } from '../plan/restore/in-place-status.ts';
import {
  clientServiceName,
  clusterSelector,
  headlessServiceName,
  networkPolicyName,
  podDisruptionBudgetName,
} from '../names.ts';
import type { ClusterState, DowngradeFacts, EtcdView, PodFacts } from '../plan/cluster/types.ts';
import { downgradeInPlay } from '../plan/upgrade/downgrade.ts';
import {
  etcdEndpoints,
  isMemberReady,
  memberUrls,
  ownMembers,
  podsOfMembers,
  runningMembers,
} from '../plan/cluster/members.ts';
import { needsRaftIndexes } from '../plan/upgrade/wal-guard.ts';
import { ETCD_CONTAINER } from '../builders/pod.ts';
import { withClusterEtcd } from '../runtime/cluster-etcd.ts';
import type { Context } from '../runtime/context.ts';
import { observeRecoverySnapshot } from './cluster-observe-recovery.ts';
import { needsSelfReports } from '../plan/recovery/force-new-cluster.ts';
import { podForcesNewCluster } from '../plan/member/force-new-cluster.ts';
import { selfReports } from './cluster-recovery-observe.ts';
import { observeDbSizes } from './cluster-volumes.ts';
import { observeSpace } from './cluster-defrag.ts';
import type { RestoreFacts, RestoreResolution } from '../plan/restore/types.ts';

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
  // Every etcd call below dials with this cluster's TLS and credentials.
  ctx = withClusterEtcd(ctx, cluster);
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
  const own = ownMembers(cluster, members);
  const state: ClusterState = {
    now: ctx.now(),
    cluster,
    members: own,
    pods: podsOfMembers(own, pods).map(podFacts),
    services: { headless, client },
    pdb,
    networkPolicy,
  };
  const restore =
    inPlaceSource(cluster) ??
    (cluster.status?.clusterID ? undefined : seedResolution(state.members)) ??
    (await observeRestore(ctx, cluster));
  if (restore) state.restore = restore;
  const request = await observeInPlaceRequest(ctx, cluster);
  if (request) state.inPlaceRestore = request;
  if (ctx.settings.operatorNamespace) state.operatorNamespace = ctx.settings.operatorNamespace;
  const endpoints = etcdEndpoints(state, cluster);
  if (endpoints.length > 0) state.etcd = await etcdView(ctx, endpoints);
  if (state.etcd?.reachable && downgradeInPlay(state))
    state.etcd.downgrade = await downgradeFacts(ctx, endpoints);
  const recovery = await observeRecoverySnapshot(ctx, state);
  if (recovery) state.recoverySnapshot = recovery;
  if (needsSelfReports(state)) state.selfReports = await selfReports(ctx, state);
  if (state.etcd?.reachable) state.dbSizes = await observeDbSizes(ctx, state);
  if (state.etcd?.reachable && cluster.spec.maintenance?.defrag) state.space = await observeSpace(ctx, state);
  if (needsRaftIndexes(state)) state.raftIndexes = await observeRaftIndexes(ctx, state);
  return state;
}

/** Each ready member's committed and applied raft index, asked of the member itself (in parallel). */
async function observeRaftIndexes(ctx: Context, state: ClusterState): Promise<ClusterState['raftIndexes']> {
  const names = runningMembers(state)
    .filter(m => isMemberReady(state, m))
    .map(m => m.metadata.name ?? '');
  const statuses = await ctx.etcd.clusterStatus(names.map(n => memberUrls(state.cluster, n).client));
  const indexes: NonNullable<ClusterState['raftIndexes']> = {};
  statuses.forEach((s, i) => {
    if (s.kind === 'ok')
      indexes[names[i]] = { raftIndex: s.status.raftIndex, applied: s.status.raftAppliedIndex };
  });
  return indexes;
}

/** The value of --snapshot-count on the etcd container (either spelling), if it carries one. */
export function podSnapshotCount(pod: V1Pod): number | undefined {
  const etcd = pod.spec?.containers.find(c => c.name === ETCD_CONTAINER);
  const words = [...(etcd?.command ?? []), ...(etcd?.args ?? [])];
  let found: number | undefined;
  words.forEach((w, i) => {
    const value = w.startsWith('--snapshot-count=')
      ? w.slice('--snapshot-count='.length)
      : w === '--snapshot-count'
        ? words[i + 1]
        : undefined;
    if (value !== undefined && /^\d+$/.test(value)) found = Number(value);
  });
  return found;
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
  if (podForcesNewCluster(pod)) facts.forceNewCluster = true;
  const snapshotCount = podSnapshotCount(pod);
  if (snapshotCount !== undefined) facts.snapshotCount = snapshotCount;
  const restoreFailure = lastRestoreFailure(pod);
  if (restoreFailure) facts.restoreFailure = restoreFailure;
  return facts;
}

/** The termination message of the restore step that failed last, if one did and has not passed since. */
function lastRestoreFailure(pod: V1Pod): { reason: string; message: string } | undefined {
  for (const status of pod.status?.initContainerStatuses ?? []) {
    if (!(RESTORE_CONTAINERS as readonly string[]).includes(status.name)) continue;
    if (status.state?.terminated?.exitCode === 0) continue;
    const failed = status.state?.terminated ?? status.lastState?.terminated;
    if (failed && failed.exitCode !== 0)
      return parseFailure(failed.message ?? `exit code ${failed.exitCode}`);
    return undefined;
  }
  return undefined;
}

/** The EtcdSnapshot of an in-place restore request not yet accepted, and its S3 Secret. */
async function observeInPlaceRequest(
  ctx: Context,
  cluster: EtcdCluster & KubeObject,
): Promise<RestoreResolution | undefined> {
  const request = pendingRequest(cluster);
  if (!request || activeRestore(cluster)) return undefined;
  const namespace = cluster.metadata.namespace ?? '';
  const snapshot =
    (await ctx.kube.find<EtcdSnapshot & KubeObject>({
      apiVersion: API_VERSION,
      kind: ETCD_SNAPSHOT.kind,
      namespace,
      name: request.snapshotRef.name,
    })) ?? null;
  const facts: InPlaceRestoreFacts = { snapshot };
  const secretName = snapshot?.spec.destination.s3?.credentialsSecretRef.name;
  if (secretName) {
    const secret = await ctx.kube.find<V1Secret & KubeObject>({
      apiVersion: 'v1',
      kind: 'Secret',
      namespace,
      name: secretName,
    });
    facts.secretKeys = secret ? Object.keys(secretValues(secret)) : null;
  }
  facts.claimFound = await claimFound(ctx, namespace, snapshot?.spec.destination.pvc?.claimName);
  return resolveInPlace(cluster, facts);
}

/** Whether a PVC source's claim exists; undefined when there is no claim to ask about. */
async function claimFound(
  ctx: Context,
  namespace: string,
  name: string | undefined,
): Promise<boolean | undefined> {
  if (!name) return undefined;
  const claim = await ctx.kube.find<KubeObject>({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    namespace,
    name,
  });
  return claim !== undefined;
}

/** The restore's source and its Secret, read only while the cluster has not formed. */
async function observeRestore(
  ctx: Context,
  cluster: EtcdCluster & KubeObject,
): Promise<RestoreResolution | undefined> {
  const source = cluster.spec.bootstrap?.restore?.source;
  if (!source || cluster.status?.clusterID) return undefined;
  const namespace = cluster.metadata.namespace ?? '';
  const facts: RestoreFacts = {};
  if (source.snapshotRef) {
    facts.snapshot =
      (await ctx.kube.find<EtcdSnapshot & KubeObject>({
        apiVersion: API_VERSION,
        kind: ETCD_SNAPSHOT.kind,
        namespace,
        name: source.snapshotRef.name,
      })) ?? null;
  }
  const secretName = restoreSecretName(cluster, facts.snapshot);
  if (secretName) {
    const secret = await ctx.kube.find<V1Secret & KubeObject>({
      apiVersion: 'v1',
      kind: 'Secret',
      namespace,
      name: secretName,
    });
    facts.secretKeys = secret ? Object.keys(secretValues(secret)) : null;
  }
  facts.claimFound = await claimFound(ctx, namespace, restoreClaimName(source, facts.snapshot));
  return resolveRestore(cluster, facts);
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

/** Each member's storage version and whether etcd's downgrade is enabled (a downgrade only). */
async function downgradeFacts(ctx: Context, endpoints: string[]): Promise<DowngradeFacts> {
  const answers = await Promise.all(endpoints.map(e => ctx.etcd.storageState(e)));
  const facts: DowngradeFacts = { enabled: false, storage: {} };
  for (const a of answers) {
    if (a.kind !== 'ok') continue;
    facts.enabled ||= a.state.downgradeEnabled;
    if (a.state.memberId) facts.storage[a.state.memberId] = a.state.storageVersion;
  }
  return facts;
}

async function etcdView(ctx: Context, endpoints: string[]): Promise<EtcdView> {
  const list = await ctx.etcd.listMembers(endpoints);
  if (list.kind !== 'ok') return { reachable: false, error: list.message };
  const view: EtcdView = { reachable: true, members: list.members, clusterId: list.clusterId };
  const status = await ctx.etcd.memberStatus(list.endpoint);
  if (status.kind === 'ok' && status.status.leaderId) view.leaderId = status.status.leaderId;
  if (status.kind === 'ok') {
    const alarms = (['NOSPACE', 'CORRUPT'] as const).filter(a =>
      status.status.errors.some(e => e.includes(a)),
    );
    if (alarms.length > 0) view.alarms = alarms;
  }
  return view;
}
