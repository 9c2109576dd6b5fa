// Whether the locked target is reached. Several concerns ask (a restore or a defragmentation waits
// for it; a new spec is adopted once it holds), so it stands apart from the list that orders them.
import { outdatedMembers, upgradingMembers } from '../upgrade/upgrade.ts';
import { heldMember, isDeleting, isMemberReady, runningMembers } from './members.ts';
import type { ClusterState } from './types.ts';

/** The locked target is reached: the members etcd has are the members asked for, all ready. */
export function isComplete(state: ClusterState): boolean {
  const current = state.cluster.status ?? {};
  const desired = current.observed?.replicas ?? -1;
  const running = runningMembers(state);
  if (current.operation || running.length !== desired) return false;
  const held = heldMember(state);
  if (state.members.some(m => isDeleting(m) && m !== held)) return false;
  if (desired === 0) return true;
  if (!current.clusterID || !running.every(m => isMemberReady(state, m))) return false;
  const etcd = state.etcd;
  if (!etcd?.reachable) return false;
  if (outdatedMembers(state, running).length > 0 || upgradingMembers(state, running).length > 0) return false;
  return etcd.members.length === desired && etcd.members.every(e => !e.isLearner);
}
