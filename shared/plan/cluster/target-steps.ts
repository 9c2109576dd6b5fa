// The steps about the locked target itself (./target.ts): taking it on for the first time, adopting
// a new spec, refusing one, waiting before one, and saying the target was missed. The concerns in
// ./concerns.ts choose among them; each builds its whole plan here.
import type { EtcdClusterStatus } from '../../api/etcd-cluster.ts';
import { clusterToken } from '../../names.ts';
import { WAITING_FOR_RAFT_SNAPSHOT } from '../upgrade/wal-guard.ts';
import { podOf, runningMembers } from './members.ts';
import { computeStatus } from './status.ts';
import {
  podTrouble,
  targetMessage,
  working,
  type ClusterEvent,
  type ClusterPlan,
  type Progress,
} from './step.ts';
import { deadlineFrom, observedFromSpec } from './target.ts';
import type { ClusterState } from './types.ts';

/** No target locked yet: the spec becomes the target, with a cluster token and a deadline. */
export function initialTarget(state: ClusterState): ClusterPlan {
  const cluster = state.cluster;
  const current = cluster.status ?? {};
  const observed = observedFromSpec(cluster);
  const base: EtcdClusterStatus = {
    ...current,
    clusterToken:
      current.clusterToken ??
      clusterToken(cluster.metadata.namespace ?? '', cluster.metadata.name ?? '', cluster.metadata.uid ?? ''),
    observed,
    progressDeadline: deadlineFrom(cluster, state.now),
    nextMemberOrdinal: current.nextMemberOrdinal ?? 0,
  };
  const progress = {
    active: true,
    reason: 'NewTarget',
    message: targetMessage(observed.replicas, observed.version),
  };
  return { action: { kind: 'none' }, status: computeStatus(state, base, progress), events: [] };
}

export function adoptSpec(state: ClusterState, reason: 'NewTarget' | 'RetryAfterDeadline'): ClusterPlan {
  const observed = observedFromSpec(state.cluster);
  const base = {
    ...state.cluster.status,
    observed,
    progressDeadline: deadlineFrom(state.cluster, state.now),
  };
  const message =
    reason === 'NewTarget'
      ? targetMessage(observed.replicas, observed.version)
      : `the previous target missed its deadline; now ${targetMessage(observed.replicas, observed.version)}`;
  const events: ClusterEvent[] = [{ type: 'Normal', reason, message }];
  return {
    action: { kind: 'none' },
    status: computeStatus(state, base, { active: true, reason, message }),
    events,
  };
}

/** The spec asks for something that must not be adopted: the locked target stays, and status says why. */
export function refuseTarget(state: ClusterState, reason: string, message: string): ClusterPlan {
  const current = state.cluster.status ?? {};
  const progress: Progress = { active: false, reason, message };
  const already = current.conditions?.some(
    c => c.type === 'Progressing' && c.reason === reason && c.message === message,
  );
  return {
    action: { kind: 'none' },
    status: {
      ...computeStatus(state, current, progress),
      ...(current.progressDeadline && { progressDeadline: current.progressDeadline }),
    },
    events: already ? [] : [{ type: 'Warning', reason, message }],
  };
}

/**
 * spec.version asks for etcd 3.7 while a member may still replay raft entries of etcd 3.5
 * (../upgrade/wal-guard.ts): nothing is adopted and no member is touched; etcd itself ends the wait
 * (a raft snapshot), and no event says when, so it is checked again with back-off (and on every
 * resync). The message names no moving figure, so the status is written once, not at every check.
 */
export function waitForRaftSnapshots(state: ClusterState, message: string): ClusterPlan {
  const current = state.cluster.status ?? {};
  const already = current.conditions?.some(
    c => c.type === 'Progressing' && c.reason === WAITING_FOR_RAFT_SNAPSHOT,
  );
  return {
    action: { kind: 'recheck', reason: 'waiting for raft snapshots past the etcd 3.5 entries' },
    // Active progress: computeStatus keeps the deadline (refuseTarget's inactive one must put it back).
    status: computeStatus(state, current, working(WAITING_FOR_RAFT_SNAPSHOT, message)),
    events: already ? [] : [{ type: 'Normal', reason: WAITING_FOR_RAFT_SNAPSHOT, message }],
  };
}

export function deadlineExceeded(state: ClusterState): ClusterPlan {
  const current = state.cluster.status ?? {};
  const observed = current.observed!;
  const seconds = state.cluster.spec.progressDeadlineSeconds ?? 600;
  const troubled = runningMembers(state).find(m => podOf(state, m)?.problem);
  const trouble = troubled ? `; member ${troubled.metadata.name}${podTrouble(state, troubled)}` : '';
  const progress: Progress = current.clusterID
    ? {
        active: false,
        reason: 'DeadlineExceeded',
        message: `could not reach ${targetMessage(observed.replicas, observed.version)} within ${seconds}s${trouble}; see the members' conditions and Pods, then edit the spec to retry or delete the cluster`,
      }
    : {
        active: false,
        reason: 'BootstrapFailed',
        message: `the cluster did not form within ${seconds}s${trouble}; fix the cause, then delete and recreate the cluster`,
      };
  // The deadline stays in status so the failure is stable until the user acts.
  const status = { ...computeStatus(state, current, progress), progressDeadline: current.progressDeadline };
  const already = current.conditions?.some(c => c.type === 'Progressing' && c.reason === progress.reason);
  const events: ClusterEvent[] = already
    ? []
    : [{ type: 'Warning', reason: progress.reason, message: progress.message }];
  return { action: { kind: 'none' }, status, events };
}
