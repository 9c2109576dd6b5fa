// The part of a roll-out that etcd's downgrade procedure adds (etcd 3.6+ "Downgrading etcd
// clusters"): before the first member goes back one minor, `downgrade validate` and `downgrade
// enable` (etcd then sets the cluster version to the target and each member rewrites its storage
// in the older format); a member goes back only once its own storage is in that format, since
// the older release refuses newer storage. The members are then replaced one at a time, leader
// last, as in an upgrade (plan/upgrade/upgrade.ts); etcd ends the downgrade itself when all run it.
import type { EtcdMember } from '../../api/etcd-member.ts';
import type { ClusterState } from '../cluster/types.ts';
import { working, type MembershipStep } from '../cluster/step.ts';
import { activeMembers, membershipOf } from '../cluster/members.ts';
import { minorName, minorNumber } from './version-moves.ts';

/** Whether some member runs a newer minor than the locked target: etcd's downgrade facts are needed. */
export function downgradeInPlay(state: ClusterState): boolean {
  const target = minorNumber(state.cluster.status?.observed?.version);
  if (target === undefined) return false;
  return activeMembers(state).some(m => (minorNumber(m.status?.version) ?? 0) > target);
}

/**
 * For the member about to be rolled to `target`: undefined when nothing stands in the way (not a
 * downgrade, or its storage is already in the target's format); else enabling the downgrade, or
 * waiting for etcd to rewrite the member's storage.
 */
export function downgradeStep(
  state: ClusterState,
  victim: EtcdMember,
  target: string,
  tally: string,
): MembershipStep | undefined {
  const running = minorNumber(victim.status?.version);
  const wanted = minorNumber(target);
  if (running === undefined || wanted === undefined || running <= wanted) return undefined;
  const name = victim.metadata.name ?? '';
  const minor = minorName(target);
  const wait = (why: string): MembershipStep => ({
    action: { kind: 'wait', reason: why },
    progress: working('Downgrading', `${why} (${tally})`),
  });
  const etcd = state.etcd?.reachable ? state.etcd : undefined;
  const facts = etcd?.downgrade;
  const id = etcd ? membershipOf(state.cluster, victim, etcd.members)?.id : undefined;
  const storage = id ? facts?.storage[id] : undefined;
  if (!facts || storage === undefined) {
    return wait(`waiting to read member ${name}'s storage version from etcd before it goes back to ${minor}`);
  }
  if ((minorNumber(`${storage}`) ?? wanted) <= wanted) return undefined;
  if (!facts.enabled) {
    const why = `enabling etcd's downgrade to ${minor} (downgrade validate, downgrade enable) before member ${name} goes back from ${victim.status?.version}`;
    return {
      action: { kind: 'enable-downgrade', version: target },
      progress: working('Downgrading', `${why} (${tally})`),
      events: [{ type: 'Normal', reason: 'DowngradeEnabled', message: why }],
    };
  }
  return wait(
    `waiting for etcd to rewrite member ${name}'s storage (now ${storage}) in the ${minor} format before it goes back`,
  );
}
