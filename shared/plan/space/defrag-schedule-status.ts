// The defragmentation schedule's record on every plan (status.defragSchedule): the next due time,
// the run under way and its members done, and why a due run does not start. Applied to the plan's
// own status, so a claim's write carries the run it starts and a released claim's member stays done.
import type { EtcdClusterStatus } from '../../api/etcd-cluster.ts';
import type { ClusterState } from '../cluster/types.ts';
import type { ClusterEvent, ClusterPlan } from '../cluster/step.ts';
import { defragOperation, followersThenLeader, unfitBecause } from './defrag.ts';
import { scheduledRun } from './defrag-schedule.ts';

/** `complete`: planCluster's isComplete for the observed state. */
export function withDefragSchedule(state: ClusterState, plan: ClusterPlan, complete: boolean): ClusterPlan {
  const before = state.cluster.status?.defragSchedule;
  const planned = { ...state.cluster, status: plan.status };
  const run = scheduledRun(planned, followersThenLeader(state), state.now);
  if (run.step === 'off') {
    if (!plan.status.defragSchedule) return plan;
    const { defragSchedule: _gone, ...status } = plan.status;
    return { ...plan, status };
  }
  let record = run.record;
  const events: ClusterEvent[] = [];
  const claimed = defragOperation(plan.status) !== undefined;
  if (run.step === 'run' && !claimed) {
    const why =
      unfitBecause(state, complete) ??
      (state.space?.[run.remaining[0]]
        ? 'other work on the cluster comes first'
        : `${run.remaining[0]} did not report its database size`);
    record = { ...record, waiting: `the run due at ${record.lastRun} waits: ${why}` };
    if (record.waiting !== before?.waiting)
      events.push({ type: 'Warning', reason: 'DefragmentationDelayed', message: record.waiting! });
  } else if (run.step !== 'invalid' && record.waiting !== undefined) {
    const { waiting: _cleared, ...rest } = record;
    record = rest;
  }
  if (run.step === 'invalid' && record.waiting !== before?.waiting)
    events.push({ type: 'Warning', reason: 'DefragmentationScheduleInvalid', message: record.waiting! });
  if (record.completedAt && !before?.completedAt && record.lastRun === before?.lastRun)
    events.push({
      type: 'Normal',
      reason: 'DefragmentationRunCompleted',
      message: `scheduled run due at ${record.lastRun} defragmented ${(record.defragmented ?? []).join(', ')}; next run at ${record.nextRun ?? 'never'}`,
    });
  const status: EtcdClusterStatus = { ...plan.status, defragSchedule: record };
  return { ...plan, status, events: [...plan.events, ...events] };
}
