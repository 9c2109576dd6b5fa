// finalize-member's I/O: observe a member being deleted, plan (shared/plan/member/finalize.ts), act.
// Leadership transfer, removal from etcd and the finalizer's removal produce no event this function
// receives, so they follow one another in the same invocation (re-observing before each step).
import { setTimeout as sleep } from 'node:timers/promises';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import type { EtcdMember } from '../api/etcd-member.ts';
import { API_VERSION, ETCD_CLUSTER, ETCD_MEMBER } from '../api/group.ts';
import { reportedLeader } from '../etcd/status.ts';
import type { HandlerOutcome } from '../events/handler.ts';
import type { KubeObject, ObjectRef } from '../k8s/objects.ts';
import { clusterSelector, MEMBER_FINALIZER } from '../names.ts';
import {
  hasFinalizer,
  needsEtcd,
  peerEndpoints,
  planFinalize,
  type FinalizeAction,
  type FinalizeState,
} from '../plan/member/finalize.ts';
import { isBeingDeleted } from '../plan/member/pod.ts';
import { ownUrls } from '../plan/member/status.ts';
import type { Context } from '../runtime/context.ts';
import { withClusterEtcd } from '../runtime/cluster-etcd.ts';
import { crashPoint } from '../runtime/crash.ts';
import { emitEvents } from './member-events.ts';
import { noteLogContext } from '../log-context.ts';

export interface MemberRef {
  namespace: string;
  name: string;
}

type Member = EtcdMember & KubeObject;
type Step = { continue: true; summary: string } | { outcome: HandlerOutcome };

/** move-leader → remove-from-etcd → remove-finalizer, plus one pass to spare. */
const MAX_PASSES = 4;

export async function finalizeMember(ctx: Context, ref: MemberRef): Promise<HandlerOutcome> {
  const summaries: string[] = [];
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const state = await observeFinalize(ctx, ref);
    if (!state) return done(summaries, `EtcdMember ${ref.namespace}/${ref.name} is gone`);
    const action = planFinalize(state);
    noteLogContext({ cluster: state.member.spec.clusterName, member: ref.name, step: action.kind });
    const step = await act(state.cluster ? withClusterEtcd(ctx, state.cluster) : ctx, state, action);
    if ('outcome' in step) {
      const outcome = step.outcome;
      return outcome.result === 'done' ? done(summaries, outcome.summary) : outcome;
    }
    summaries.push(step.summary);
  }
  return {
    result: 'retry',
    reason: `${summaries.join('; ')}; not finished after ${MAX_PASSES} steps`,
    status: 503,
  };
}

export async function observeFinalize(ctx: Context, ref: MemberRef): Promise<FinalizeState | undefined> {
  const read = await ctx.kube.get<Member>(memberRef(ref.namespace, ref.name));
  if (read.kind === 'not-found') return undefined;
  const member = read.object;
  // Most EtcdMember events are not deletions: for those, the member alone says there is nothing to do.
  if (!isBeingDeleted(member) || !hasFinalizer(member)) return { member, others: [], tried: [] };
  const clusterName = member.spec.clusterName;
  const cluster = await ctx.kube.find<EtcdCluster & KubeObject>({
    apiVersion: API_VERSION,
    kind: ETCD_CLUSTER.kind,
    namespace: ref.namespace,
    name: clusterName,
  });
  const state: FinalizeState = { member, cluster, others: [], tried: [] };
  // A member whose cluster is gone has no Secrets to dial with: plain ctx.etcd then.
  if (cluster) ctx = withClusterEtcd(ctx, cluster);
  // Whether there are others matters only for a member whose removal is still ours to do.
  if (!needsEtcd({ ...state, others: [member] })) return state;
  const all = await ctx.kube.list<Member>(
    API_VERSION,
    ETCD_MEMBER.kind,
    ref.namespace,
    clusterSelector(clusterName),
  );
  state.others = all.filter(m => m.metadata.name !== ref.name && m.spec.clusterName === clusterName);
  if (!needsEtcd(state)) return state;
  state.tried = peerEndpoints(state.others);
  if (state.tried.length === 0) return state;
  const listed = await ctx.etcd.listMembers(state.tried);
  if (listed.kind !== 'ok') {
    state.etcdError = listed.message;
    return state;
  }
  // Who leads, as the member that answered and the member itself see it (highest term wins).
  const statuses = await ctx.etcd.clusterStatus([listed.endpoint, ownUrls(member).client]);
  state.etcd = { members: listed.members, clusterId: listed.clusterId, endpoint: listed.endpoint };
  const leaderId = reportedLeader(statuses);
  if (leaderId) state.etcd.leaderId = leaderId;
  return state;
}

async function act(ctx: Context, state: FinalizeState, action: FinalizeAction): Promise<Step> {
  const name = state.member.metadata.name ?? '';
  switch (action.kind) {
    case 'none':
      return { outcome: { result: 'done', summary: action.reason } };
    case 'retry':
      return { outcome: { result: 'retry', reason: action.reason, status: 503 } };
    case 'keep':
      await emitEvents(ctx, state.cluster!, [action.event], 'finalize-member');
      return { outcome: { result: 'done', summary: action.reason } };
    case 'remove-finalizer':
      return removeFinalizer(ctx, state.member, action.reason);
    case 'move-leader': {
      const endpoints = [ownUrls(state.member).client, ...state.tried];
      const moved = await ctx.etcd.moveLeader(endpoints, action.toId);
      if (moved.kind === 'ok') await crashPoint('finalize:leader-moved');
      if (moved.kind !== 'ok')
        return retry(`moving leadership off ${name} to ${action.toName}: ${moved.message}`);
      await emitEvents(ctx, state.cluster!, [action.event], 'finalize-member');
      return { continue: true, summary: `moved leadership from ${name} to ${action.toName}` };
    }
    case 'remove-from-etcd': {
      const removed = await removePatiently(ctx, state.tried, action.id);
      if (removed.kind === 'ok') await crashPoint('finalize:removed-from-etcd');
      if (removed.kind === 'member-not-found')
        return { continue: true, summary: `${name} was already out of etcd` };
      if (removed.kind !== 'ok')
        return retry(`removing ${name} (${action.id}) from etcd: ${removed.message}`);
      await emitEvents(ctx, state.cluster!, [action.event], 'finalize-member');
      return { continue: true, summary: `removed ${name} (${action.id}) from etcd` };
    }
  }
}

/**
 * etcd refuses a removal until every voter has been connected for 5 s (its strict reconfiguration
 * check), which is often not yet the case right after a member started or was promoted (a quick
 * 3 → 5 → 3): wait inside the request rather than bounce the event through the retry back-off.
 */
async function removePatiently(ctx: Context, endpoints: string[], id: string) {
  const deadline = Date.now() + ctx.settings.unhealthyWaitMs;
  for (;;) {
    const removed = await ctx.etcd.remove(endpoints, id);
    if (removed.kind !== 'unhealthy-cluster' || Date.now() >= deadline) return removed;
    // etcd lets the removal through the moment its 5 s are up: ask again soon after.
    await sleep(50);
  }
}

/** Replace with the member's resourceVersion: a concurrent change makes this a conflict, not a loss. */
async function removeFinalizer(ctx: Context, member: Member, reason: string): Promise<Step> {
  const finalizers = (member.metadata.finalizers ?? []).filter(f => f !== MEMBER_FINALIZER);
  const written = await ctx.kube.replace<Member>({ ...member, metadata: { ...member.metadata, finalizers } });
  if (written.kind === 'written') await crashPoint('finalize:finalizer-removed');
  switch (written.kind) {
    case 'written':
    case 'not-found':
      return { outcome: { result: 'done', summary: `${reason}; finalizer removed` } };
    case 'conflict':
      return {
        outcome: {
          result: 'retry',
          reason: `EtcdMember ${member.metadata.name} changed meanwhile: ${written.message}`,
          status: 409,
        },
      };
    case 'invalid':
      throw new Error(
        `removing the finalizer of EtcdMember ${member.metadata.name} refused: ${written.message}`,
      );
  }
}

const retry = (reason: string): Step => ({ outcome: { result: 'retry', reason, status: 503 } });

function done(summaries: string[], last: string): HandlerOutcome {
  return { result: 'done', summary: [...summaries, last].join('; ') };
}

function memberRef(namespace: string, name: string): ObjectRef {
  return { apiVersion: API_VERSION, kind: ETCD_MEMBER.kind, namespace, name };
}
