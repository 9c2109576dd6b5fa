// run-snapshot: takes EtcdSnapshots to S3 or, through a Job, to a PVC (shared/reconcile/snapshot.ts) and runs
// EtcdSnapshotSchedules (shared/reconcile/schedule.ts). Entry point for the functions framework
// (FUNCTION_TARGET).
import { inWatchedNamespaces } from '../../shared/runtime/watched.ts';
import { pingSink } from '../../shared/reconcile/ping-sink.ts';
import * as ff from '@google-cloud/functions-framework';
import type { V1Job } from '@kubernetes/client-node';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import type { EtcdSnapshotSchedule } from '../../shared/api/etcd-snapshot-schedule.ts';
import { API_VERSION, ETCD_SNAPSHOT, ETCD_SNAPSHOT_SCHEDULE } from '../../shared/api/group.ts';
import { eventFunction, type EventHandler, type HandlerOutcome } from '../../shared/events/handler.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { owningSchedule } from '../../shared/plan/schedule/run.ts';
import { isFinished } from '../../shared/plan/snapshot/plan.ts';
import { reconcileSchedule, type ScheduleRef } from '../../shared/reconcile/schedule.ts';
import { ensureSchedulePing } from '../../shared/reconcile/schedule-ping.ts';
import {
  DEFAULT_RESYNC_BUDGET_MS,
  RESYNC_OBJECT_RETRIES,
  resyncEach,
} from '../../shared/reconcile/resync-each.ts';
import { resyncGate } from '../../shared/reconcile/resync-gate.ts';
import { reconcileSnapshot } from '../../shared/reconcile/snapshot.ts';
import { ensureWake } from '../../shared/reconcile/wake.ts';
import { desiredWake, wakeName } from '../../shared/plan/wake/snapshot-wake.ts';
import { defaultContext, type Context } from '../../shared/runtime/context.ts';
import { FUNCTION_NAME, snapshotTarget } from './targets.ts';

/** The handler over a given context (tests pass their own; the context is created on first use). */
export function createHandler(context: () => Context = defaultContext): EventHandler {
  // One per handler (per process): full resyncs coalesced, at most one running and one queued.
  const gate = resyncGate(FUNCTION_NAME);
  return async event => {
    const target = snapshotTarget(event);
    switch (target.kind) {
      case 'ignore':
        return { result: 'done', summary: target.summary };
      case 'resync':
        return gate(() => resync(context()));
      case 'schedule':
        return scheduleAndTiming(context(), { namespace: target.namespace, name: target.name });
      case 'snapshot':
        return snapshotAndSchedule(context(), { namespace: target.namespace, name: target.name });
      case 'job': {
        const owner = await jobOwner(context(), target);
        if (!owner)
          return {
            result: 'done',
            summary: `Job ${target.namespace}/${target.name}: no EtcdSnapshot owns it`,
          };
        return snapshotAndSchedule(context(), { namespace: target.namespace, name: owner });
      }
    }
  };
}

/** The EtcdSnapshot that owns a Job (a snapshot to a PVC), if any. */
async function jobOwner(ctx: Context, ref: { namespace: string; name: string }): Promise<string | undefined> {
  const job = await ctx.kube.find<V1Job & KubeObject>({
    apiVersion: 'batch/v1',
    kind: 'Job',
    namespace: ref.namespace,
    name: ref.name,
  });
  return job?.metadata.ownerReferences?.find(
    o => o.apiVersion === API_VERSION && o.kind === ETCD_SNAPSHOT.kind,
  )?.name;
}

/** The snapshot, then its wake-up (a PingSource while it is unfinished), read back after the step. */
async function snapshotAndWake(
  ctx: Context,
  ref: { namespace: string; name: string },
): Promise<{ outcome: HandlerOutcome; snapshot?: EtcdSnapshot & KubeObject }> {
  const outcome = await reconcileSnapshot(ctx, ref);
  if (outcome.result !== 'done') return { outcome };
  const snapshot = await ctx.kube.find<EtcdSnapshot & KubeObject>({
    apiVersion: API_VERSION,
    kind: ETCD_SNAPSHOT.kind,
    ...ref,
  });
  if (!snapshot) return { outcome };
  const desired = desiredWake(snapshot, await pingSink(ctx));
  const woken = await ensureWake(ctx, snapshot, wakeName(snapshot.metadata.name ?? ''), desired);
  return { outcome: woken ? { ...outcome, summary: `${outcome.summary}; ${woken}` } : outcome, snapshot };
}

/** The snapshot; then, when a schedule owns it, the schedule (its status and retention follow the snapshot). */
async function snapshotAndSchedule(
  ctx: Context,
  ref: { namespace: string; name: string },
): Promise<HandlerOutcome> {
  const { outcome, snapshot } = await snapshotAndWake(ctx, ref);
  const owner = snapshot ? owningSchedule(snapshot) : undefined;
  if (outcome.result !== 'done' || !owner) return outcome;
  const scheduled = await reconcileSchedule(ctx, { namespace: ref.namespace, name: owner });
  if (scheduled.result !== 'done') return scheduled;
  return { result: 'done', summary: `${outcome.summary}; schedule: ${scheduled.summary}` };
}

/** The schedule, then its own timing (its PingSource follows its cron, time zone and suspend). */
async function scheduleAndTiming(ctx: Context, ref: ScheduleRef): Promise<HandlerOutcome> {
  const outcome = await reconcileSchedule(ctx, ref);
  if (outcome.result !== 'done') return outcome;
  return { ...outcome, summary: `${outcome.summary}; ${await ensureSchedulePing(ctx, ref)}` };
}

/**
 * The tick: every schedule, then every snapshot not Complete or Failed, each on its own (one that
 * throws does not keep the others from firing), within one time budget. An object whose step throws
 * is tried again inside the request (RESYNC_OBJECT_RETRIES more times); one that still fails is
 * reported, and the tick is done: redelivering it would run every other schedule and snapshot again
 * (up to the Trigger's 6 retries). Each schedule still fires from its own PingSource, whose event
 * the event system retries for that schedule alone.
 */
async function resync(ctx: Context): Promise<HandlerOutcome> {
  const started = ctx.now().getTime();
  const budgetMs = ctx.settings.resyncBudgetMs ?? DEFAULT_RESYNC_BUDGET_MS;
  const schedules = await inWatchedNamespaces(ctx, ns =>
    ctx.kube.list<EtcdSnapshotSchedule & KubeObject>(API_VERSION, ETCD_SNAPSHOT_SCHEDULE.kind, ns),
  );
  const refOf = (o: KubeObject) => ({ namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '' });
  const scheduled = await resyncEach(
    ETCD_SNAPSHOT_SCHEDULE.kind,
    schedules.map(refOf),
    ref => scheduleAndTiming(ctx, ref),
    { now: ctx.now, budgetMs, retries: RESYNC_OBJECT_RETRIES },
  );
  const all = await inWatchedNamespaces(ctx, ns =>
    ctx.kube.list<EtcdSnapshot & KubeObject>(API_VERSION, ETCD_SNAPSHOT.kind, ns),
  );
  const unfinished = all.filter(s => !isFinished(s));
  const snapshots = await resyncEach(
    ETCD_SNAPSHOT.kind,
    unfinished.map(refOf),
    async ref => (await snapshotAndWake(ctx, ref)).outcome,
    {
      now: ctx.now,
      budgetMs: Math.max(0, budgetMs - (ctx.now().getTime() - started)),
      retries: RESYNC_OBJECT_RETRIES,
    },
  );
  const failures = [...scheduled.failed, ...snapshots.failed];
  const skipped = scheduled.skipped + snapshots.skipped;
  let summary = `resync of ${schedules.length} schedule(s) and ${unfinished.length} unfinished snapshot(s) of ${all.length}`;
  if (skipped > 0) summary += `; ${skipped} left for the next tick (time budget spent)`;
  if (failures.length > 0) summary += `; ${failures.length} failed after ${RESYNC_OBJECT_RETRIES + 1} tries`;
  return { result: 'done', summary, details: [...scheduled.details, ...snapshots.details] };
}

export const handler: EventHandler = createHandler();

ff.http(FUNCTION_NAME, eventFunction(FUNCTION_NAME, handler));
