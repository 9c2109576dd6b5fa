// reconcile-cluster's decision before etcd has a cluster ID: create the seed member, then wait for
// it to answer and record the cluster it formed.
import type { EtcdClusterStatus } from '../api/etcd-cluster.ts';
import type { ClusterState } from './cluster-state.ts';
import { activeMembers, isMemberReady, memberName, memberUrls } from './members.ts';
import {
  podTrouble,
  working,
  type AddMemberOperation,
  type ClusterPlan,
  type PlanFn,
} from './cluster-step.ts';

export function planBootstrap(state: ClusterState, plan: PlanFn): ClusterPlan {
  const current = state.cluster.status ?? {};
  const desired = current.observed!.replicas;
  if (desired === 0)
    return plan({ kind: 'none' }, { active: false, reason: 'Paused', message: 'paused before bootstrap' });
  const seed = activeMembers(state).find(m => m.spec.bootstrap === true);
  if (!seed && state.restore?.kind === 'blocked') {
    // Nothing is created until the restore's source can work: no member runs on a partial restore.
    const why = `cannot restore yet: ${state.restore.message}`;
    return plan({ kind: 'wait', reason: why }, working('RestoreBlocked', why));
  }
  if (!seed) {
    const claim = newMemberClaim(state, true);
    return plan(
      { kind: 'claim', operation: claim.operation },
      working('Bootstrapping', claim.why),
      claim.base,
    );
  }
  const name = seed.metadata.name ?? '';
  const etcd = state.etcd;
  if (etcd?.reachable) {
    const only = etcd.members.length === 1 ? etcd.members[0] : undefined;
    if (only && (only.name === name || only.peerURLs.includes(memberUrls(state.cluster, name).peer))) {
      const base = { ...current, clusterID: etcd.clusterId };
      const message = `etcd cluster ${etcd.clusterId} formed with seed member ${name}`;
      return plan({ kind: 'none' }, working('Bootstrapped', message), base, [
        { type: 'Normal', reason: 'ClusterFormed', message },
      ]);
    }
  }
  const why = !isMemberReady(state, seed)
    ? `waiting for the seed member ${name} to start${podTrouble(state, seed)}`
    : `waiting for the seed member ${name} to answer: ${etcd && !etcd.reachable ? etcd.error : 'no answer yet'}`;
  return plan({ kind: 'wait', reason: why }, working('WaitingForSeed', why));
}

/** The next member's name comes from a counter in status, so a name is never used twice. */
export function newMemberClaim(
  state: ClusterState,
  bootstrap: boolean,
): { operation: AddMemberOperation; base: EtcdClusterStatus; why: string } {
  const current = state.cluster.status ?? {};
  const ordinal = current.nextMemberOrdinal ?? 0;
  const operation: AddMemberOperation = {
    type: 'add-member',
    member: memberName(state.cluster.metadata.name ?? '', ordinal),
    bootstrap,
    startedAt: state.now.toISOString(),
  };
  const base: EtcdClusterStatus = {
    ...current,
    nextMemberOrdinal: ordinal + 1,
    operation: operation as unknown as Record<string, unknown>,
  };
  const why = bootstrap
    ? `creating the seed member ${operation.member}`
    : `adding member ${operation.member}`;
  return { operation, base, why };
}
