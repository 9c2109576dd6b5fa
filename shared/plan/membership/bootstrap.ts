// reconcile-cluster's decision before etcd has a cluster ID. A new cluster (no member; empty, or
// restoring a snapshot from S3) is bootstrapped statically: every initial member is created at once
// with the whole list as --initial-cluster (state new), so they start in parallel as etcd does by
// hand. A restore from a PVC starts one seed that the others join as learners. Then wait for etcd to
// answer with every initial member and record the cluster it formed.
import type { EtcdClusterStatus } from '../../api/etcd-cluster.ts';
import type { EtcdMember } from '../../api/etcd-member.ts';
import type { ClusterState } from '../cluster/types.ts';
import { activeMembers, isMemberReady, memberName, memberUrls } from '../cluster/members.ts';
import { podTrouble, working, type ClusterPlan, type PlanFn } from '../cluster/step.ts';
import type { AddMemberOperation } from '../../api/cluster-operation.ts';

export function planBootstrap(state: ClusterState, plan: PlanFn): ClusterPlan {
  const current = state.cluster.status ?? {};
  const desired = current.observed!.replicas;
  if (desired === 0)
    return plan({ kind: 'none' }, { active: false, reason: 'Paused', message: 'paused before bootstrap' });
  const seeds = activeMembers(state).filter(m => m.spec.bootstrap === true);
  const seed = seeds[0];
  if (!seed && state.restore?.kind === 'blocked') {
    // Nothing is created until the restore's source can work: no member runs on a partial restore.
    const why = `cannot restore yet: ${state.restore.message}`;
    return plan({ kind: 'wait', reason: why }, working('RestoreBlocked', why));
  }
  if (!seed) {
    const claim = staticBootstrap(state, desired)
      ? newStaticClaim(state, desired)
      : newMemberClaim(state, true);
    return plan(
      { kind: 'claim', operation: claim.operation },
      working('Bootstrapping', claim.why),
      claim.base,
    );
  }
  const name = seed.metadata.name ?? '';
  const etcd = state.etcd;
  if (etcd?.reachable && formedWith(state, seeds, etcd.members)) {
    const base = { ...current, clusterID: etcd.clusterId };
    const names = seeds.map(m => m.metadata.name ?? '').join(', ');
    const message =
      seeds.length === 1
        ? `etcd cluster ${etcd.clusterId} formed with seed member ${name}`
        : `etcd cluster ${etcd.clusterId} formed with initial members ${names}`;
    return plan({ kind: 'none' }, working('Bootstrapped', message), base, [
      { type: 'Normal', reason: 'ClusterFormed', message },
    ]);
  }
  const waiting = seeds.find(m => !isMemberReady(state, m));
  if (seeds.length > 1) {
    const why = waiting
      ? `waiting for initial member ${waiting.metadata.name} to start${podTrouble(state, waiting)}`
      : `waiting for the initial members to answer: ${etcd && !etcd.reachable ? etcd.error : 'no answer yet'}`;
    return plan({ kind: 'wait', reason: why }, working('WaitingForSeed', why));
  }
  const why = !isMemberReady(state, seed)
    ? `waiting for the seed member ${name} to start${podTrouble(state, seed)}`
    : `waiting for the seed member ${name} to answer: ${etcd && !etcd.reachable ? etcd.error : 'no answer yet'}`;
  return plan({ kind: 'wait', reason: why }, working('WaitingForSeed', why));
}

/**
 * Static bootstrap only for a cluster that holds nothing yet: no member object at all (not even one
 * being deleted), more than one member wanted (one member is its own seed), no restore in place.
 * A restore at creation from S3 is static too: every initial member fetches and restores the same
 * snapshot under the same new token, as etcd's own multi-member restore does, and no member waits
 * for another to be promoted. A restore from a file on a PVC keeps the one-seed path: a
 * ReadWriteOnce claim can be mounted by the Pods of one node only, so only one member reads it.
 */
export function staticBootstrap(state: ClusterState, desired: number): boolean {
  const cluster = state.cluster;
  if (desired <= 1 || state.members.length > 0 || cluster.status?.inPlaceRestore !== undefined) return false;
  if (cluster.spec.bootstrap?.restore === undefined) return state.restore === undefined;
  return state.restore?.kind === 'ready' && state.restore.restore.source.s3 !== undefined;
}

/** etcd answers with exactly the initial members (by name or peer URL): the cluster they formed. */
function formedWith(
  state: ClusterState,
  seeds: EtcdMember[],
  members: { name: string; peerURLs: string[] }[],
): boolean {
  if (members.length !== seeds.length) return false;
  return seeds.every(seed => {
    const name = seed.metadata.name ?? '';
    const peer = memberUrls(state.cluster, name).peer;
    return members.some(m => m.name === name || m.peerURLs.includes(peer));
  });
}

/** All initial members claimed in one status write: their names come from the ordinal counter. */
export function newStaticClaim(
  state: ClusterState,
  desired: number,
): { operation: AddMemberOperation; base: EtcdClusterStatus; why: string } {
  const current = state.cluster.status ?? {};
  const first = current.nextMemberOrdinal ?? 0;
  const cluster = state.cluster.metadata.name ?? '';
  const names = Array.from({ length: desired }, (_, i) => memberName(cluster, first + i));
  const operation: AddMemberOperation = {
    type: 'add-member',
    member: names[0],
    bootstrap: true,
    initialMembers: names,
    startedAt: state.now.toISOString(),
  };
  const base: EtcdClusterStatus = {
    ...current,
    nextMemberOrdinal: first + desired,
    operation,
  };
  return { operation, base, why: `creating the initial members ${names.join(', ')} together` };
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
    operation,
  };
  const why = bootstrap
    ? `creating the seed member ${operation.member}`
    : `adding member ${operation.member}`;
  return { operation, base, why };
}
