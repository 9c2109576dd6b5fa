// The status a person reads: ready count, members, phase and the three conditions. Computed from
// observed state alone, so two invocations looking at the same world write the same status.
import type { ClusterMemberStatus, ClusterPhase, EtcdClusterStatus } from '../../api/etcd-cluster.ts';
import { setCondition, type ConditionInput } from '../../conditions.ts';
import { clusterSelector, pvcName } from '../../names.ts';
import { restoreRecoveryAdvice } from '../recovery/quorum-loss.ts';
import { replacementProgress } from '../membership/replacement.ts';
import { GROWING_REASON, memberFigures } from '../space/volume-growth.ts';
import { inPlaceRestoreCondition } from '../restore/in-place-status.ts';
import { forceRecoveryCondition } from '../recovery/force-new-cluster-status.ts';
import type { ClusterState } from './types.ts';
import { activeMembers, heldMember, isMemberReady, membershipOf, runningMembers } from './members.ts';
import { RESTORED_CONDITION, restoreCondition } from '../restore/source.ts';
import type { Progress } from './step.ts';

/**
 * Restored, for a cluster created from a snapshot: from the resolution and the restore steps of the
 * initial members' Pods (the seed's, or every member's in a static restore: the first that failed).
 */
function restoreConditionOf(state: ClusterState, base: EtcdClusterStatus): ConditionInput | undefined {
  const inPlace = inPlaceRestoreCondition(state, base);
  if (inPlace) return inPlace;
  const initial = activeMembers(state).filter(m => m.spec.bootstrap === true);
  const pods = initial.map(m => state.pods.find(p => p.name === m.metadata.name));
  const failed = pods.find(p => p?.restoreFailure);
  const current = base.conditions?.find(c => c.type === RESTORED_CONDITION);
  return restoreCondition({
    cluster: state.cluster,
    ...(base.clusterID && { clusterID: base.clusterID }),
    ...(state.restore && { resolution: state.restore }),
    ...(failed?.restoreFailure && { seedFailure: failed.restoreFailure, failedMember: failed.name }),
    ...(initial.length > 1 && { restoringMembers: initial.length }),
    ...(current && { current }),
  });
}

export function computeStatus(
  state: ClusterState,
  base: EtcdClusterStatus,
  progress: Progress,
): EtcdClusterStatus {
  const cluster = state.cluster;
  const desired = base.observed?.replicas ?? 0;
  const running = runningMembers(state);
  const ready = running.filter(m => isMemberReady(state, m)).length;
  const generation = cluster.metadata.generation;
  const status: EtcdClusterStatus = {
    ...base,
    readyMembers: ready,
    ready: `${ready}/${desired}`,
    selector: clusterSelector(cluster.metadata.name ?? ''),
    members: memberStatuses(state),
  };
  if (generation !== undefined) status.observedGeneration = generation;
  let conditions = base.conditions ?? [];
  const set = (c: ConditionInput) => {
    conditions = setCondition(
      conditions,
      generation === undefined ? c : { ...c, observedGeneration: generation },
      state.now,
    );
  };
  for (const c of healthConditions(state, desired, ready, base)) set(c);
  const restored = restoreConditionOf(state, base);
  if (restored) set(restored);
  const recovery = forceRecoveryCondition(base);
  if (recovery) set(recovery);
  const replacing = replacementProgress(state, status);
  if (replacing.condition) set(replacing.condition);
  if (replacing.done) delete status.replacement;
  set({
    type: 'Progressing',
    status: progress.active ? 'True' : 'False',
    reason: progress.reason,
    message: progress.message,
  });
  status.conditions = conditions;
  status.phase = phaseOf(status, desired, ready, progress);
  if (!progress.active) delete status.progressDeadline;
  return status;
}

function healthConditions(
  state: ClusterState,
  desired: number,
  ready: number,
  base: EtcdClusterStatus,
): ConditionInput[] {
  if (desired === 0) {
    const message = pausedMessage(state);
    return [
      { type: 'Available', status: 'False', reason: 'Paused', message },
      { type: 'Degraded', status: 'False', reason: 'Paused', message: '' },
    ];
  }
  if (!base.clusterID) {
    return [
      {
        type: 'Available',
        status: 'False',
        reason: 'Bootstrapping',
        message: 'the cluster has not formed yet',
      },
      { type: 'Degraded', status: 'False', reason: 'Bootstrapping', message: '' },
    ];
  }
  if (state.etcd && !state.etcd.reachable && ready > 0) {
    const message = `etcd did not answer through any ready member: ${stableError(state.etcd.error)}`;
    return [
      { type: 'Available', status: 'False', reason: 'ClusterUnreachable', message },
      { type: 'Degraded', status: 'True', reason: 'ClusterUnreachable', message },
    ];
  }
  if (ready >= desired) {
    const message = `all ${desired} members ready`;
    return [
      { type: 'Available', status: 'True', reason: 'QuorumHealthy', message },
      { type: 'Degraded', status: 'False', reason: 'QuorumHealthy', message: '' },
    ];
  }
  // After a forced new cluster etcd has fewer voters than desired until the new members join: a
  // majority of those it has now is ready, so it has quorum.
  const forced = ['Removing', 'Rejoining'].includes(base.forceNewCluster?.step ?? '');
  const etcdVoters =
    forced && state.etcd?.reachable ? state.etcd.members.filter(e => !e.isLearner).length : 0;
  if (ready > Math.floor(desired / 2) || (etcdVoters > 0 && ready > Math.floor(etcdVoters / 2))) {
    const message = `${ready}/${desired} members ready`;
    return [
      { type: 'Available', status: 'True', reason: 'QuorumAvailable', message },
      { type: 'Degraded', status: 'True', reason: 'MembersUnhealthy', message },
    ];
  }
  const ownPolicy =
    state.cluster.spec.recovery?.policy === 'ForceNewCluster'
      ? 'spec.recovery.policy ForceNewCluster acts if it lasts (see the QuorumRecovery condition)'
      : 'etcdfn changes nothing while quorum is lost';
  const advice =
    restoreRecoveryAdvice(state) ??
    `${ownPolicy}. What you can do: bring back the members whose Pods cannot run (their Ready condition and logs say why); members whose data is lost cannot rejoin, so if a majority lost its data, set spec.recovery.policy: ForceNewCluster (the most advanced surviving member goes on alone and the others are replaced; writes only they had are lost) or RestoreLatestSnapshot (the newest verified snapshot is restored in place; writes after it are lost), or create a new EtcdCluster restoring a snapshot (spec.bootstrap.restore)`;
  const message = `${ready}/${desired} members ready: quorum lost, writes fail until a majority is back; ${memberStates(state)}; ${advice}`;
  return [
    { type: 'Available', status: 'False', reason: 'QuorumLost', message },
    { type: 'Degraded', status: 'True', reason: 'QuorumLost', message },
  ];
}

/** Each running member's last known state, for the QuorumLost message. */
function memberStates(state: ClusterState): string {
  return runningMembers(state)
    .map(m => {
      const name = m.metadata.name ?? '';
      const id = m.status?.memberID ? ` (ID ${m.status.memberID})` : '';
      const pod = state.pods.find(p => p.name === name);
      const what = m.status?.dataLoss
        ? `data lost: ${m.status.dataLoss.message}`
        : isMemberReady(state, m)
          ? 'ready'
          : pod?.problem
            ? `not running: ${pod.problem}`
            : pod
              ? `not ready (Pod ${pod.phase})`
              : 'no Pod';
      return `${name}${id} ${what}`;
    })
    .sort()
    .join('; ');
}

/**
 * What a paused cluster's data is, for each case: never formed (none), still pausing (members being
 * stopped), kept on the dormant member's volume, in memory (gone), or on a member whose deletion is
 * held.
 */
function pausedMessage(state: ClusterState): string {
  if (!state.cluster.status?.clusterID) {
    return 'paused (spec.replicas=0) before the cluster formed, so there is no data';
  }
  const held = heldMember(state);
  if (held) return heldWhilePaused(held.metadata.name ?? '');
  const dormant = activeMembers(state).find(m => m.spec.dormant === true);
  if (!dormant) {
    return 'pausing (spec.replicas=0): stopping the members one at a time; the last one keeps the data on its PersistentVolumeClaim';
  }
  if (dormant.spec.storage.medium === 'Memory') {
    return 'paused (spec.replicas=0); the data was in memory and is gone: delete and recreate the cluster';
  }
  return `paused (spec.replicas=0); the data is kept on PersistentVolumeClaim ${pvcName(dormant.metadata.name ?? '')}; scale up to resume`;
}

/** What to say about a member whose deletion is held while the cluster is paused. */
export function heldWhilePaused(name: string): string {
  return `paused (spec.replicas=0); member ${name} was deleted but holds the cluster's only data (on PersistentVolumeClaim ${pvcName(name)}), so its deletion is held; scale up to resume: ${name} then runs again as the seed, the other members join it and ${name} is removed once they have; delete the EtcdCluster to delete the data`;
}

/**
 * Work on a cluster at its target that changes neither its members nor its version: not Scaling.
 * The phase says whether it serves (Running or Degraded); Progressing=True names the work.
 */
const MAINTENANCE_REASONS = new Set([GROWING_REASON, 'Defragmenting']);

function phaseOf(
  status: EtcdClusterStatus,
  desired: number,
  ready: number,
  progress: Progress,
): ClusterPhase {
  if (progress.reason === 'DeadlineExceeded' || progress.reason === 'BootstrapFailed') return 'Failed';
  if (desired === 0 && !progress.active) return 'Paused';
  if (!status.clusterID) return desired === 0 ? 'Paused' : 'Bootstrapping';
  if (progress.active && !MAINTENANCE_REASONS.has(progress.reason)) return 'Scaling';
  return ready >= desired ? 'Running' : 'Degraded';
}

function memberStatuses(state: ClusterState): ClusterMemberStatus[] {
  const etcd = state.etcd?.reachable ? state.etcd : undefined;
  return activeMembers(state)
    .filter(m => m.spec.dormant !== true)
    .map(member => {
      const entry: ClusterMemberStatus = {
        name: member.metadata.name ?? '',
        ready: isMemberReady(state, member),
      };
      const membership = etcd ? membershipOf(state.cluster, member, etcd.members) : undefined;
      const id = membership?.id ?? member.status?.memberID;
      if (id) entry.id = id;
      if (membership) entry.role = membership.isLearner ? 'learner' : 'voter';
      if (etcd?.leaderId && id === etcd.leaderId) entry.leader = true;
      if (member.status?.version) entry.version = member.status.version;
      const previous = state.cluster.status?.members?.find(p => p.name === entry.name);
      return { ...entry, ...memberFigures(state, member, previous) };
    })
    .sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }));
}

/** Drops parts of network errors that change on every attempt, so the message stays put. */
export function stableError(message: string): string {
  return message.replace(/ on [0-9.:[\]]+/g, '').replace(/\s+\(after \d+ms\)/g, '');
}
