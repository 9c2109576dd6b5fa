// reconcile-member's I/O: observe one EtcdMember and what surrounds it, plan (shared/plan/member/plan.ts),
// write the member's status if it changed (compare-and-swap), then carry out the one step. A PVC
// just created is followed by the Pod in the same invocation; every other step ends it, and the
// event it causes (a Pod created, deleted or relabelled) brings the next one.
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import type { EtcdMember } from '../api/etcd-member.ts';
import { API_VERSION, ETCD_CLUSTER, ETCD_MEMBER } from '../api/group.ts';
import { isMemoryMedium } from '../builders/storage.ts';
import type { HandlerOutcome } from '../events/handler.ts';
import type { KubeObject, ObjectRef } from '../k8s/objects.ts';
import { pvcName } from '../names.ts';
import { isPodReady } from '../plan/member/pod.ts';
import { needsEtcd, planMember, type MemberPlan, type MemberState } from '../plan/member/plan.ts';
import { ownUrls } from '../plan/member/status.ts';
import { ownPod } from '../plan/member/step.ts';
import { memberUrls } from '../plan/cluster/members.ts';
import type { Context } from '../runtime/context.ts';
import { clusterEtcd } from '../runtime/cluster-etcd.ts';
import { crashPoint } from '../runtime/crash.ts';
import { emitEvents } from './member-events.ts';
import { noteLogContext } from '../log-context.ts';
import { resizePvc } from './member-volume.ts';
import { observeMemberNodes } from './member-nodes.ts';

export interface MemberRef {
  namespace: string;
  name: string;
}

type Member = EtcdMember & KubeObject;
type Step = { continue: boolean; summary: string } | { outcome: HandlerOutcome };

/**
 * At most this many observe → plan → act passes per invocation (PVC, then Pod); a status write that
 * lost to another writer counts as a pass, observed afresh, rather than sending the event back.
 */
const MAX_PASSES = 4;

export async function reconcileMember(ctx: Context, ref: MemberRef): Promise<HandlerOutcome> {
  const summaries: string[] = [];
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const state = await observeMember(ctx, ref);
    if (!state) return { result: 'done', summary: `EtcdMember ${ref.namespace}/${ref.name} not found` };
    const plan = planMember(state);
    noteLogContext({ cluster: state.member.spec.clusterName, member: ref.name, step: plan.action.kind });
    const written = await writeStatus(ctx, state.member, plan);
    if (written?.lostRace && pass < MAX_PASSES - 1) continue;
    if (written) return written.outcome;
    const step = await act(ctx, state, plan);
    if ('outcome' in step) return step.outcome;
    summaries.push(step.summary);
    if (!step.continue) break;
  }
  return { result: 'done', summary: summaries.join('; ') };
}

export async function observeMember(ctx: Context, ref: MemberRef): Promise<MemberState | undefined> {
  const read = await ctx.kube.get<Member>(objectRef(API_VERSION, ETCD_MEMBER.kind, ref.namespace, ref.name));
  if (read.kind === 'not-found') return undefined;
  const member = read.object;
  const ns = ref.namespace;
  const [cluster, pod, pvc] = await Promise.all([
    ctx.kube.find<EtcdCluster & KubeObject>(
      objectRef(API_VERSION, ETCD_CLUSTER.kind, ns, member.spec.clusterName),
    ),
    ctx.kube.find<V1Pod & KubeObject>(objectRef('v1', 'Pod', ns, ref.name)),
    isMemoryMedium(member.spec.storage)
      ? undefined
      : ctx.kube.find<V1PersistentVolumeClaim & KubeObject>(
          objectRef('v1', 'PersistentVolumeClaim', ns, pvcName(ref.name)),
        ),
  ]);
  const state: MemberState = {
    now: ctx.now(),
    member,
    cluster,
    pod,
    pvc,
    ...(await observeNodes(ctx, pod, pvc)),
    etcdImageRepository: ctx.settings.etcdImageRepository,
    etcdImageDigests: ctx.settings.etcdImageDigests,
    operatorImage: ctx.settings.operatorImage,
    ...(ctx.settings.podIPFamily && { podIPFamily: ctx.settings.podIPFamily }),
    ...(ctx.settings.s3AllowedEndpoints && { s3AllowedEndpoints: ctx.settings.s3AllowedEndpoints }),
    ...(ctx.settings.s3DeniedRanges && { s3DeniedRanges: ctx.settings.s3DeniedRanges }),
  };
  if (cluster && needsEtcd(state)) await observeEtcd(ctx, state, cluster);
  return state;
}

async function observeNodes(
  ctx: Context,
  pod: V1Pod | undefined,
  pvc: V1PersistentVolumeClaim | undefined,
): Promise<Pick<MemberState, 'nodes'>> {
  const nodes = await observeMemberNodes(ctx, pod, pvc);
  return nodes ? { nodes } : {};
}

/** The client URLs of the cluster's other ready voters, as its status lists them. */
function clusterVoterEndpoints(cluster: EtcdCluster, member: EtcdMember): string[] {
  return (cluster.status?.members ?? [])
    .filter(m => m.role === 'voter' && m.ready === true && m.name !== member.metadata.name)
    .map(m => memberUrls(cluster, m.name).client);
}

/** etcd's membership through the cluster's ready voters and the member itself; its own status if ready. */
async function observeEtcd(ctx: Context, state: MemberState, cluster: EtcdCluster): Promise<void> {
  const own = ownUrls(state.member).client;
  // The member's name reaches whichever Pod holds it: a Pod left by an earlier member of the same
  // name (a cluster deleted and made again) runs another cluster's etcd, whose answer is not ours.
  const pod = ownPod(state);
  // Asked only once its Pod is ready (/health: a leader known): etcd accepts a connection on its
  // client port before it serves, so a call to a member still joining hangs until it has joined
  // or the call times out, holding the request. Its Pod turning ready is the event that resumes.
  const ready = pod !== undefined && isPodReady(pod);
  const voters = clusterVoterEndpoints(cluster, state.member);
  const endpoints = ready ? [...voters, own] : voters;
  const etcd = clusterEtcd(ctx, cluster);
  const [listed, self] = await Promise.all([
    endpoints.length > 0 ? etcd.listMembers(endpoints) : undefined,
    ready ? etcd.memberStatus(own) : undefined,
  ]);
  if (listed?.kind === 'ok') state.etcd = { members: listed.members, clusterId: listed.clusterId };
  if (self?.kind === 'ok') state.self = self.status;
}

/**
 * Writes the planned status when it changed; undefined when the step may go ahead. Otherwise the
 * invocation's outcome, and whether the write lost a race with another writer (worth a fresh pass).
 */
async function writeStatus(
  ctx: Context,
  member: Member,
  plan: MemberPlan,
): Promise<{ outcome: HandlerOutcome; lostRace: boolean } | undefined> {
  if (!plan.statusChanged) return undefined;
  const written = await ctx.kube.replaceStatus<Member>({ ...member, status: plan.status });
  if (written.kind === 'written') await crashPoint('member:status-written');
  switch (written.kind) {
    case 'written':
      return undefined;
    case 'conflict':
      return {
        outcome: {
          result: 'retry',
          reason: `EtcdMember ${member.metadata.name} changed meanwhile: ${written.message}`,
          status: 409,
        },
        lostRace: true,
      };
    case 'not-found':
      return {
        outcome: { result: 'done', summary: `EtcdMember ${member.metadata.name} is gone` },
        lostRace: false,
      };
    case 'invalid':
      throw new Error(`status of EtcdMember ${member.metadata.name} refused: ${written.message}`);
  }
}

async function act(ctx: Context, state: MemberState, plan: MemberPlan): Promise<Step> {
  const { member } = state;
  const ns = member.metadata.namespace ?? '';
  const action = plan.action;
  const emitted = async (summary: string, next = false): Promise<Step> => {
    await emitEvents(ctx, member, plan.events, 'reconcile-member');
    return { continue: next, summary };
  };
  switch (action.kind) {
    // A decision with nothing to do can still carry news (evidence of lost data, a crash loop),
    // written to status just before: its Events go out too.
    case 'none':
      return emitted(action.reason);
    case 'wait':
      await emitEvents(ctx, member, plan.events, 'reconcile-member');
      return action.retry
        ? { outcome: { result: 'retry', reason: action.reason, status: 503 } }
        : { continue: false, summary: action.reason };
    case 'create-pvc': {
      const created = await ctx.kube.create(action.pvc as V1PersistentVolumeClaim & KubeObject);
      if (created.kind === 'created') await crashPoint('member:pvc-created');
      if (created.kind === 'invalid')
        return { continue: false, summary: `PVC ${action.pvc.metadata?.name} refused: ${created.message}` };
      return emitted(`PVC ${action.pvc.metadata?.name} ${created.kind}`, true);
    }
    case 'create-pod': {
      const created = await ctx.kube.create(action.pod as V1Pod & KubeObject);
      if (created.kind === 'created') await crashPoint('member:pod-created');
      if (created.kind === 'invalid')
        return { continue: false, summary: `Pod ${action.pod.metadata?.name} refused: ${created.message}` };
      return emitted(
        `Pod ${action.pod.metadata?.name} ${created.kind} (${action.isVoter ? 'voter' : 'learner'})`,
      );
    }
    case 'delete-pod':
      // By uid: a duplicate invocation must not delete the Pod another one just recreated.
      await ctx.kube.delete(objectRef('v1', 'Pod', ns, action.name), {
        ...(action.uid && { uid: action.uid }),
        ...(action.force && { gracePeriodSeconds: 0 }),
      });
      await crashPoint('member:pod-deleted');
      return emitted(action.reason);
    case 'patch-pod-metadata': {
      const patched = await ctx.kube.mergePatch(objectRef('v1', 'Pod', ns, action.name), {
        metadata: {
          ...(action.labels && { labels: action.labels }),
          ...(action.annotations && { annotations: action.annotations }),
        },
      });
      // Labels and the guard's annotations alike: a repeat patch changes nothing.
      if (patched.kind === 'written') await crashPoint('member:pod-labelled');
      if (patched.kind === 'conflict')
        return { outcome: { result: 'retry', reason: patched.message, status: 409 } };
      return emitted(patched.kind === 'written' ? action.reason : `Pod ${action.name}: ${patched.kind}`);
    }
    case 'move-leader': {
      const cluster = state.cluster;
      if (!cluster) return { outcome: { result: 'retry', reason: 'the EtcdCluster is gone', status: 503 } };
      const endpoints = [...clusterVoterEndpoints(cluster, state.member), ownUrls(state.member).client];
      const moved = await clusterEtcd(ctx, cluster).moveLeader(endpoints, action.toId);
      if (moved.kind !== 'ok')
        return { outcome: { result: 'retry', reason: `${action.reason}: ${moved.message}`, status: 503 } };
      // Planned again at once, on a fresh read: the Pod goes only once the member says it follows.
      return emitted(`${action.reason}: ${moved.leaderId} leads now`, true);
    }
    case 'resize-pvc': {
      const resized = await resizePvc(ctx, state, plan, action);
      if (resized.kind === 'retry')
        return { outcome: { result: 'retry', reason: resized.reason, status: 409 } };
      return { continue: false, summary: resized.summary };
    }
  }
}

function objectRef(apiVersion: string, kind: string, namespace: string, name: string): ObjectRef {
  return { apiVersion, kind, namespace, name };
}
