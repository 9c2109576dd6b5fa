// reconcile-cluster, end to end: observe → plan → (claim) → act → status, one step at a time. A step
// that changed something is followed at once by the next (observed afresh), up to chainSteps, so a
// sequence of quick steps (adopt the target, claim, add the member...) does not wait on the events
// its own writes cause; each step stays whole on its own, so a crash between two is an ordinary one.
import { pingSink } from './ping-sink.ts';
import { isDeepStrictEqual } from 'node:util';
import type { EtcdCluster, EtcdClusterStatus } from '../api/etcd-cluster.ts';
import type { HandlerOutcome } from '../events/handler.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { authDue, statusAfterAct } from '../plan/cluster/after-act.ts';
import { claimEvent } from '../plan/cluster/claim-event.ts';
import { isClaimingStep } from '../plan/cluster/step.ts';
import { planCluster, type ClusterPlan } from '../plan/cluster/plan.ts';
import { recoveryWaits } from '../plan/recovery/quorum-loss.ts';
import type { ClusterState } from '../plan/cluster/types.ts';
import { freshFigures } from '../plan/space/volume-growth.ts';
import {
  clusterWakeName,
  defragWakeName,
  desiredClusterWake,
  desiredDefragWake,
  mayHaveWake,
  restoreWaits,
} from '../plan/wake/cluster-wake.ts';
import type { Context } from '../runtime/context.ts';
import { withClusterEtcd } from '../runtime/cluster-etcd.ts';
import { withSecretCache } from '../k8s/secret-cache.ts';
import { crashPoint } from '../runtime/crash.ts';
import { keepCertificates } from './certificates.ts';
import type { ActResult } from './act-result.ts';
import { act } from './cluster-act.ts';
import { runAuth } from './cluster-auth-run.ts';
import { etcdEndpoints } from '../plan/cluster/members.ts';
import { observeCluster, type ClusterRef } from './cluster-observe.ts';
import { recordEvent } from './record-event.ts';
import { ensureWake } from './wake.ts';
import { noteLogContext } from '../log-context.ts';

const FUNCTION = 'reconcile-cluster';
type Cluster = EtcdCluster & KubeObject;

/** `woken`: the event was the cluster's own wake-up (its PingSource exists, at least until now). */
export async function reconcileCluster(
  eventCtx: Context,
  ref: ClusterRef,
  opts: { woken?: boolean } = {},
): Promise<HandlerOutcome> {
  const summaries: string[] = [];
  const actions: string[] = [];
  for (let taken = 1; ; taken++) {
    const { outcome, onward, action } = await reconcileStep(eventCtx, ref, taken === 1 ? opts : {});
    if (outcome.result !== 'done') return outcome;
    summaries.push(outcome.summary);
    if (action) actions.push(action);
    if (!onward || taken >= eventCtx.settings.chainSteps)
      return {
        result: 'done',
        summary: summaries.filter(Boolean).join('; then '),
        ...(actions.length > 0 && { details: { action: actions.length === 1 ? actions[0] : actions } }),
      };
  }
}

interface StepResult {
  outcome: HandlerOutcome;
  /** The step changed something and was not a wait: the next one may be possible at once. */
  onward: boolean;
  action?: string;
}

async function reconcileStep(
  eventCtx: Context,
  ref: ClusterRef,
  opts: { woken?: boolean },
): Promise<StepResult> {
  // Observe, plan, claim, act, auth and the status write in the order of their crash points; the
  // status is shaped in plan/ (before the step, or from its outcome), never edited here.
  // Certificate issuing, certificate status and the etcd access seam share one read per Secret.
  const ctx: Context = { ...eventCtx, kube: withSecretCache(eventCtx.kube) };
  const state = await observeCluster(ctx, ref);
  if (!state)
    return {
      outcome: { result: 'done', summary: `EtcdCluster ${ref.namespace}/${ref.name} is gone` },
      onward: false,
    };
  // Judged on the status as observed, before this invocation's own writes replace it.
  const wakeMayExist = opts.woken === true || mayHaveWake(state.cluster);
  // Auto TLS certificates are issued here, before any step can need a member Pod to mount them;
  // what the Secrets then hold is observed for the plan, which shapes status.certificates.
  state.certificates = await keepCertificates(ctx, state.cluster);
  const defragWakeMayExist =
    state.cluster.spec.maintenance?.defrag?.schedule !== undefined ||
    state.cluster.status?.defragSchedule !== undefined;
  const plan = planCluster(state);
  noteLogContext({ cluster: ref.name, step: plan.action.kind });
  let cluster = state.cluster as Cluster;
  // A promotion is claimed too: two racing would both propose the change, and raft drops the
  // second (one configuration change at a time), whose call then hangs until it times out.
  const claims = isClaimingStep(plan.action);
  if (claims) {
    // Claim before acting: only the invocation whose status write wins carries the step out.
    const claimed = await ctx.kube.replaceStatus({ ...cluster, status: plan.status });
    if (claimed.kind !== 'written') return { outcome: lostRace(ref, claimed.kind), onward: false };
    await crashPoint('cluster:claimed');
    cluster = claimed.object;
    state.cluster = cluster;
  }
  const acted = await act(withClusterEtcd(ctx, cluster), state, plan.action, plan.owned);
  const { result, authEnabled, events } = await authAfter(ctx, state, cluster, plan, acted);
  // A resumed addition that went through cleared its operation with a status write of its own
  // (cluster-act.ts clearOperation), which brings the next event: the status planned before that
  // write would only conflict with it (or, written, bring the cleared operation back).
  const cleared = plan.action.kind === 'resume' && result.ok;
  let wrote = claims || cleared;
  if (!claims && !cleared) {
    const retrying = !result.ok && result.outcome.result === 'retry' ? result.outcome.reason : undefined;
    const outcome = {
      ...(authEnabled !== undefined && { authEnabled }),
      ...(retrying !== undefined && { retrying }),
    };
    const status = statusAfterAct(plan.status, outcome, ctx.now());
    const written = await writeStatusIfChanged(ctx, cluster, status, state.dbSizes);
    if (written === 'conflict') return { outcome: lostRace(ref, 'conflict'), onward: false };
    wrote = written === 'written';
    if (written === 'written')
      await crashPoint(
        status.inPlaceRestore?.step !== cluster.status?.inPlaceRestore?.step
          ? 'cluster:restore-step-written'
          : status.forceNewCluster?.step !== cluster.status?.forceNewCluster?.step
            ? 'cluster:force-step-written'
            : status.clusterID !== cluster.status?.clusterID
              ? 'cluster:cluster-id-latched'
              : 'cluster:status-written',
      );
  }
  await recordPlanEvents(ctx, cluster, { ...plan, events }, result.ok);
  const woken = await syncWake(ctx, cluster, restoreWaits(state) || recoveryWaits(state), wakeMayExist);
  const timed = defragWakeMayExist
    ? await ensureWake(
        ctx,
        cluster,
        defragWakeName(ref.name),
        desiredDefragWake(cluster, await pingSink(ctx)),
      )
    : '';
  if (!result.ok) return { outcome: result.outcome, onward: false };
  const summary = [result.summary, woken, timed].filter(Boolean).join('; ');
  const kind = plan.action.kind;
  const onward = kind !== 'wait' && (wrote || kind !== 'none');
  return { outcome: { result: 'done', summary }, onward, action: kind };
}

/**
 * Auth, once the step leaves nothing to do (authDue). It cannot be planned with the step: each of
 * its steps is decided from etcd's answers to logins (cluster-auth-run.ts). It ends the step's
 * result as it ends, and leaves status.authEnabled's value and its event for the plan's status and
 * events.
 */
async function authAfter(
  ctx: Context,
  state: ClusterState,
  cluster: Cluster,
  plan: ClusterPlan,
  acted: ActResult,
): Promise<{ result: ActResult; authEnabled?: boolean; events: ClusterPlan['events'] }> {
  const auth =
    acted.ok && authDue(plan) ? await runAuth(ctx, cluster, etcdEndpoints(state, cluster)) : undefined;
  if (!auth) return { result: acted, events: plan.events };
  if (auth.kind === 'failed')
    return {
      result: { ok: false, outcome: { result: 'retry', reason: auth.reason, status: 503 } },
      authEnabled: auth.authEnabled,
      events: plan.events,
    };
  return {
    result: { ok: true, summary: auth.summary },
    authEnabled: auth.authEnabled,
    events: auth.event ? [...plan.events, auth.event] : plan.events,
  };
}

/**
 * A restore that waits on the user gets a wake-up; it goes once it no longer waits. Only a waiting
 * restore makes one (and says Restored=False), so most clusters need no read; a wake-up left by a
 * crash still fires, and its own event (`woken`) has it deleted.
 */
async function syncWake(ctx: Context, cluster: Cluster, waits: boolean, mayExist: boolean): Promise<string> {
  if (!waits && !mayExist) return '';
  const desired = desiredClusterWake(cluster, waits, await pingSink(ctx));
  return ensureWake(ctx, cluster, clusterWakeName(cluster.metadata.name ?? ''), desired);
}

async function writeStatusIfChanged(
  ctx: Context,
  cluster: Cluster,
  status: EtcdClusterStatus,
  dbSizes: ClusterState['dbSizes'],
): Promise<'unchanged' | 'written' | 'conflict'> {
  if (isDeepStrictEqual(JSON.parse(JSON.stringify(status)), JSON.parse(JSON.stringify(cluster.status ?? {}))))
    return 'unchanged';
  // Written anyway: with the database figures of the moment (settled ones only spare a write).
  const written = await ctx.kube.replaceStatus({ ...cluster, status: freshFigures(status, dbSizes) });
  return written.kind === 'written' ? 'written' : written.kind === 'conflict' ? 'conflict' : 'unchanged';
}

async function recordPlanEvents(
  ctx: Context,
  cluster: Cluster,
  plan: ClusterPlan,
  succeeded: boolean,
): Promise<void> {
  for (const event of plan.events) await recordEvent(ctx, cluster, event, FUNCTION);
  if (!succeeded) return;
  const action = plan.action;
  if (action.kind === 'claim' || action.kind === 'resume') {
    await recordEvent(ctx, cluster, claimEvent(action.operation), FUNCTION);
  } else if (action.kind === 'promote') {
    await recordEvent(
      ctx,
      cluster,
      { type: 'Normal', reason: 'MemberPromoted', message: `promoted ${action.member} to voter` },
      FUNCTION,
    );
  } else if (action.kind === 'remove-orphan') {
    const message = `removed etcd member ${action.id} (${action.peerURL}): no EtcdMember stood for it`;
    await recordEvent(ctx, cluster, { type: 'Warning', reason: 'OrphanRemoved', message }, FUNCTION);
  }
}

function lostRace(ref: ClusterRef, why: string): HandlerOutcome {
  // Another invocation wrote first; its write triggers the next event, which re-plans from there.
  return {
    result: 'done',
    summary: `EtcdCluster ${ref.namespace}/${ref.name} changed underneath (${why}); the next event continues`,
  };
}
