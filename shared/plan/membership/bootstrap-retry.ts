// reconcile-cluster's decision when a static bootstrap did not form a cluster by its deadline. The
// attempt is given up and the next one starts clean: the attempt and what went wrong are recorded
// first (one status write), then the failed attempt's members are deleted with their data, and only
// once every one of them is gone does the next attempt get its own cluster token and a new deadline,
// after which the ordinary bootstrap claims new members (new names, so new PVCs). Two attempts never
// mix: no member of the new attempt exists while one of the old still does, and their tokens differ.
//
// Never once etcd has formed: a latched cluster ID, a Ready member (its /health needs a leader) or an
// answer from etcd all mean the cluster exists, and wiping a member of it would let it start empty
// under an ID the others know. Restores and one-member clusters keep the one-seed path and its
// BootstrapFailed report: a retry there would only repeat the same restore.
import type { EtcdCluster, EtcdClusterStatus } from '../../api/etcd-cluster.ts';
import type { EtcdMember } from '../../api/etcd-member.ts';
import { clusterToken } from '../../names.ts';
import type { ClusterState } from '../cluster/types.ts';
import { computeStatus } from '../cluster/status.ts';
import { podTrouble, working, type ClusterPlan } from '../cluster/step.ts';
import { isDeleting, isMemberReady } from '../cluster/members.ts';
import { deadlineFrom } from '../cluster/target.ts';

export const BOOTSTRAP_RETRYING = 'BootstrapRetrying';

/** The cluster token of bootstrap attempt `attempt`: the first keeps the plain UID-derived token. */
export function attemptToken(cluster: EtcdCluster, attempt: number): string {
  const { namespace, name, uid } = cluster.metadata;
  const incarnation = attempt <= 1 ? (uid ?? '') : `${uid ?? ''}-attempt-${attempt}`;
  return clusterToken(namespace ?? '', name ?? '', incarnation);
}

/** Members of a static bootstrap: created with the whole initial list, nothing restored. */
export function staticInitialMembers(state: ClusterState): EtcdMember[] {
  return state.members.filter(
    m => m.spec.bootstrap === true && !m.spec.restore && (m.spec.initialCluster ?? '').includes(','),
  );
}

/**
 * At the deadline, with no cluster formed: give the static bootstrap up and record the next attempt.
 * Undefined when this is not a static bootstrap or etcd may have formed (then the deadline's own
 * report, or the latch, applies).
 */
export function startBootstrapRetry(state: ClusterState): ClusterPlan | undefined {
  const current = state.cluster.status ?? {};
  if (current.clusterID || current.operation || state.etcd?.reachable) return undefined;
  if (state.restore !== undefined || current.inPlaceRestore !== undefined) return undefined;
  const initial = staticInitialMembers(state);
  if (initial.length === 0 || initial.length !== state.members.length) return undefined;
  if (initial.some(m => isMemberReady(state, m))) return undefined;
  const attempt = (current.bootstrapRetry?.attempt ?? 1) + 1;
  const names = initial.map(m => m.metadata.name ?? '').sort();
  const seconds = state.cluster.spec.progressDeadlineSeconds ?? 600;
  const trouble = initial
    .map(m => podTrouble(state, m))
    .find(t => t !== '')
    ?.replace(/^: /, '');
  const reason = `bootstrap attempt ${attempt - 1} (${names.join(', ')}) did not form a cluster within ${seconds}s${trouble ? `; ${trouble}` : ': no quorum of its members became Ready'}`;
  const message = `${reason}; deleting those members and their data, then attempt ${attempt} starts with new members and a new cluster token. If attempts keep failing, look at the members' Pods and logs, fix the cause (or raise spec.progressDeadlineSeconds), or delete the cluster`;
  const base: EtcdClusterStatus = {
    ...current,
    bootstrapRetry: { attempt, discarding: names, reason, startedAt: state.now.toISOString() },
  };
  return {
    action: { kind: 'none' },
    status: computeStatus(state, base, working(BOOTSTRAP_RETRYING, message)),
    events: [{ type: 'Warning', reason: BOOTSTRAP_RETRYING, message }],
  };
}

/** A recorded retry whose old members are not all gone yet: delete them, wait, then start the attempt. */
export function planBootstrapRetry(state: ClusterState): ClusterPlan | undefined {
  const current = state.cluster.status ?? {};
  const retry = current.bootstrapRetry;
  if (!retry?.discarding) return undefined;
  const old = state.members.filter(m => retry.discarding!.includes(m.metadata.name ?? ''));
  const standing = old.filter(m => !isDeleting(m)).map(m => m.metadata.name ?? '');
  const status = (message: string, base: EtcdClusterStatus = current) =>
    computeStatus(state, base, working(BOOTSTRAP_RETRYING, message));
  if (standing.length > 0) {
    const message = `${retry.reason}; deleting ${standing.join(', ')} and their data before attempt ${retry.attempt}`;
    return { action: { kind: 'delete-members', members: standing }, status: status(message), events: [] };
  }
  if (old.length > 0) {
    const message = `${retry.reason}; waiting for ${old.map(m => m.metadata.name).join(', ')} to go before attempt ${retry.attempt}`;
    return { action: { kind: 'wait', reason: message }, status: status(message), events: [] };
  }
  // Every old member (and with it its PVC) is gone: the new attempt gets its own token and deadline.
  const base: EtcdClusterStatus = {
    ...current,
    clusterToken: attemptToken(state.cluster, retry.attempt),
    bootstrapRetry: { attempt: retry.attempt, reason: retry.reason, startedAt: retry.startedAt },
    progressDeadline: deadlineFrom(state.cluster, state.now),
  };
  delete base.operation;
  const message = `${retry.reason}; the old members are gone: starting attempt ${retry.attempt}`;
  return { action: { kind: 'none' }, status: status(message, base), events: [] };
}
