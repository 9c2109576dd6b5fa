// In-place restore: return a running cluster to a snapshot under the same name, Services and
// Secrets (spec.inPlaceRestore, written by `kubectl etcdfn restore`). The steps, each recorded in
// status.inPlaceRestore before the next one starts, so a crash anywhere converges:
//   accept     the request's EtcdSnapshot resolves (Complete, its Secret present): the exact object,
//              its checksum and the members to discard are recorded (step Stopping); a status write
//              with the resourceVersion, so only one invocation accepts it;
//   Stopping   every recorded member is deleted (finalize-member lets them go without an etcd
//              removal: their cluster is discarded whole); once they and their Pods are gone, the
//              cluster ID is cleared and a new cluster token recorded (step Restoring);
//   Restoring  the ordinary bootstrap path runs: a new seed restores the recorded snapshot in its
//              init containers under the new token, and the others join it as learners, exactly as
//              a cluster created from a snapshot grows (static multi-member restore does not exist
//              here); once the target is reached, step Done.
// Pure: cluster-observe gathers the facts (the request's snapshot and Secret), cluster-plan calls it.
import type { EtcdCluster, EtcdClusterStatus, InPlaceRestoreStatus } from '../../api/etcd-cluster.ts';
import type { EtcdSnapshot } from '../../api/etcd-snapshot.ts';
import { clusterToken } from '../../names.ts';
import type { ClusterState } from '../cluster/types.ts';
import { computeStatus } from '../cluster/status.ts';
import { working, type ClusterPlan } from '../cluster/step.ts';
import { activeRestore, pendingRequest } from './in-place-status.ts';
import { isDeleting } from '../cluster/members.ts';
import { claimBlock, fromSnapshot, secretBlock, sourceNameOf } from './source.ts';
import { deadlineFrom } from '../cluster/target.ts';
import type { RestoreResolution } from './types.ts';

/** What observe found for a request not yet accepted: its EtcdSnapshot and the S3 Secret's keys. */
export interface InPlaceRestoreFacts {
  /** null = not found. */
  snapshot: EtcdSnapshot | null;
  /** null = not found; undefined = not asked (no S3 source). */
  secretKeys?: string[] | null;
  /** Whether the PVC of a PVC snapshot exists; undefined = not asked (no PVC source). */
  claimFound?: boolean;
}

export function resolveInPlace(cluster: EtcdCluster, facts: InPlaceRestoreFacts): RestoreResolution {
  const request = cluster.spec.inPlaceRestore!;
  const ns = cluster.metadata.namespace ?? '';
  const name = request.snapshotRef.name;
  const snapshot = facts.snapshot;
  if (!snapshot) {
    return {
      kind: 'blocked',
      reason: 'SnapshotNotFound',
      message: `EtcdSnapshot ${ns}/${name} does not exist; nothing was changed. Run kubectl etcdfn restore again with a Complete EtcdSnapshot of this namespace`,
    };
  }
  const phase = snapshot.status?.phase ?? 'Pending';
  if (phase !== 'Complete') {
    return {
      kind: 'blocked',
      reason: 'SnapshotNotComplete',
      message: `EtcdSnapshot ${name} is ${phase}, not Complete; nothing was changed${phase === 'Failed' ? '. Run kubectl etcdfn restore again with another snapshot' : ': the restore starts once it completes'}`,
    };
  }
  const resolved = fromSnapshot(name, ns, snapshot, undefined);
  if (resolved.kind === 'blocked') return resolved;
  return (
    secretBlock(resolved.restore, ns, facts.secretKeys) ??
    claimBlock(resolved.restore, ns, facts.claimFound) ?? {
      kind: 'ready',
      restore: resolved.restore,
      sourceName: `EtcdSnapshot ${name} (${sourceNameOf(resolved.restore)})`,
    }
  );
}

/** The token of the restored cluster: new per request, so no member of the old cluster can join it. */
export function restoredToken(cluster: EtcdCluster, requestID: string): string {
  const { namespace, name, uid } = cluster.metadata;
  return clusterToken(namespace ?? '', name ?? '', `${uid ?? ''}-restore-${requestID}`);
}

/**
 * The in-place restore's step, or undefined when it has nothing to decide (no request; or the
 * Restoring step, which the ordinary bootstrap and scaling path carries out).
 */
export function planInPlaceRestore(state: ClusterState, complete: boolean): ClusterPlan | undefined {
  const current = state.cluster.status ?? {};
  const record = activeRestore(state.cluster);
  if (record?.step === 'Stopping') return planStopping(state, record);
  if (record?.step === 'Restoring') {
    if (!current.clusterID || !complete) return undefined;
    const done: InPlaceRestoreStatus = { ...record, step: 'Done', finishedAt: state.now.toISOString() };
    const message = `restored EtcdSnapshot ${record.snapshot} in place (request ${record.requestID}): etcd cluster ${current.clusterID}${record.previousClusterID ? ` replaces ${record.previousClusterID}` : ''}`;
    return {
      action: { kind: 'none' },
      status: computeStatus(
        state,
        { ...current, inPlaceRestore: done },
        { active: false, reason: 'Reconciled', message },
      ),
      events: [{ type: 'Normal', reason: 'Restored', message }],
    };
  }
  if (!record && !pendingRequest(state.cluster)) return undefined;
  return accept(state);
}

/** A new request: accepted once the cluster has formed, is idle and the snapshot resolves. */
function accept(state: ClusterState): ClusterPlan | undefined {
  const current = state.cluster.status ?? {};
  const request = pendingRequest(state.cluster);
  const resolution = state.inPlaceRestore;
  // Not yet: the condition (inPlaceRestoreCondition) says why; the ordinary plan goes on.
  if (!request || !resolution || resolution.kind !== 'ready') return undefined;
  if (!current.clusterID || current.operation || (current.observed?.replicas ?? 0) === 0) return undefined;
  const members = state.members.map(m => m.metadata.name ?? '').sort();
  const record: InPlaceRestoreStatus = {
    requestID: request.requestID,
    snapshot: request.snapshotRef.name,
    step: 'Stopping',
    source: resolution.restore,
    members,
    previousClusterID: current.clusterID,
    startedAt: state.now.toISOString(),
  };
  const message = `restoring ${resolution.sourceName} in place (request ${request.requestID}): stopping ${members.join(', ')}; their data is discarded`;
  const base: EtcdClusterStatus = { ...current, inPlaceRestore: record };
  return {
    action: { kind: 'none' },
    status: computeStatus(state, base, working('RestoringInPlace', message)),
    events: [{ type: 'Warning', reason: 'RestoreStarted', message }],
  };
}

function planStopping(state: ClusterState, record: InPlaceRestoreStatus): ClusterPlan {
  const current = state.cluster.status ?? {};
  const old = state.members.filter(m => record.members.includes(m.metadata.name ?? ''));
  const standing = old.filter(m => !isDeleting(m)).map(m => m.metadata.name ?? '');
  const source = `EtcdSnapshot ${record.snapshot}`;
  if (standing.length > 0) {
    const message = `restoring ${source} in place: stopping ${standing.join(', ')}; their data is discarded`;
    return {
      action: { kind: 'delete-members', members: standing },
      status: computeStatus(state, current, working('RestoringInPlace', message)),
      events: [],
    };
  }
  // Their Pods were deleted with them; only the members' own deletion brings an event here.
  if (old.length > 0) {
    const message = `restoring ${source} in place: waiting for ${old.map(m => m.metadata.name).join(', ')} to go`;
    return {
      action: { kind: 'wait', reason: message },
      status: computeStatus(state, current, working('RestoringInPlace', message)),
      events: [],
    };
  }
  // Every old member and Pod is gone: the cluster starts again from the snapshot under a new token.
  const base: EtcdClusterStatus = {
    ...current,
    clusterToken: restoredToken(state.cluster, record.requestID),
    inPlaceRestore: { ...record, step: 'Restoring' },
    progressDeadline: deadlineFrom(state.cluster, state.now),
  };
  delete base.clusterID;
  delete base.replacement;
  delete base.operation;
  const message = `restoring ${source} in place: the old members are gone; a new seed member restores the snapshot`;
  return {
    action: { kind: 'none' },
    status: computeStatus(state, base, working('RestoringInPlace', message)),
    events: [],
  };
}
