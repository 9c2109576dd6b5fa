// reconcile-cluster's decision for a member deleted while it held the cluster's only data (a paused
// cluster's dormant member, or the last running one). finalize-member holds that deletion, so the
// data survives; this file decides what happens next:
// - paused (target 0): nothing; the status says the deletion is held and how to get the data back;
// - a target above 0: the held member runs again as the seed (its own data, its own member ID), the
//   other members join it one at a time, and once as many as the target have joined and are voters
//   the seed is released: finalize-member then moves leadership off it and removes it from etcd,
//   as for any deleted member. The cluster never starts a member with empty data under its ID.
import type { ClusterState } from '../cluster/types.ts';
import { heldWhilePaused } from '../cluster/status.ts';
import { working, type MembershipStep } from '../cluster/step.ts';
import { heldMember, isMemberReady, membershipOf, resumeSeed, runningMembers } from '../cluster/members.ts';

/**
 * The step for a held member or a resume seed, or undefined when there is neither (or the seed has
 * nothing to wait for yet: scaling toward `desired` plus the seed goes on as usual).
 */
export function planHeldMember(state: ClusterState, desired: number): MembershipStep | undefined {
  const held = heldMember(state);
  if (held) {
    const name = held.metadata.name ?? '';
    if (desired === 0) {
      return {
        action: { kind: 'wait', reason: heldWhilePaused(name) },
        progress: { active: false, reason: 'Paused', message: heldWhilePaused(name) },
      };
    }
    const why = `resuming from member ${name}, deleted while it held the cluster's only data: it runs again on its kept data as the seed, the ${desired} member${desired === 1 ? '' : 's'} asked for join it, then ${name} is removed`;
    return {
      action: { kind: 'set-dormant', member: name, dormant: false, seed: true },
      progress: working('Resuming', why),
      events: [{ type: 'Normal', reason: 'Resuming', message: why }],
    };
  }
  return undefined;
}

/** The member count to scale toward: the target, plus the seed while there is one to release. */
export function scaleTarget(state: ClusterState, desired: number): number {
  return desired > 0 && resumeSeed(state) ? desired + 1 : desired;
}

/**
 * With as many members besides the seed as the target, all ready and voters in etcd: release the
 * seed (its deletion then finishes). Undefined when there is no seed or the count is not reached.
 */
export function planSeedRelease(state: ClusterState, desired: number): MembershipStep | undefined {
  const seed = resumeSeed(state);
  if (!seed || desired === 0) return undefined;
  const running = runningMembers(state);
  if (running.length !== desired + 1 || seed.spec.dormant === true) return undefined;
  const name = seed.metadata.name ?? '';
  const others = running.filter(m => m !== seed);
  const etcd = state.etcd?.reachable ? state.etcd : undefined;
  const joined = others.every(m => {
    const e = etcd && membershipOf(state.cluster, m, etcd.members);
    return isMemberReady(state, m) && e !== undefined && !e.isLearner && e.started;
  });
  if (!joined) {
    const why = `waiting for ${others.map(m => m.metadata.name).join(', ')} to be ready voters before removing the seed ${name}`;
    return { action: { kind: 'wait', reason: why }, progress: working('Resuming', why) };
  }
  const why = `${others.length} member${others.length === 1 ? '' : 's'} joined the seed ${name}: letting its deletion finish (leadership moves off it, then it leaves etcd)`;
  return {
    action: { kind: 'release-seed', member: name },
    progress: working('Resuming', why),
    events: [{ type: 'Normal', reason: 'SeedReleased', message: why }],
  };
}
