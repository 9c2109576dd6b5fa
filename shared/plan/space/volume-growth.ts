// reconcile-cluster's part in growing volumes, and the per-member figures its status carries.
//
// Growing: once the locked target's storage.size is larger than a member's, every member's
// spec.storage.size is raised in one step (all at once: a PVC grows online, nothing restarts, so
// there is no quorum to guard); each member then grows its own PVC (plan/member/volume-growth.ts).
// Progressing says GrowingVolumes until every running member's PVC reports the new capacity, or
// VolumeExpansionRefused (not progressing, a Warning Event once) when the API server refused a
// member's growth. Memory-medium clusters have no PVC to grow.
//
// Figures: each member's PVC (requested, capacity) from its status, and etcd's dbSize and
// dbSizeInUse. Those two move with every write, so the status keeps the recorded figure until the
// fresh one differs by at least 1 MiB and 5 %: a steady cluster's status is not rewritten on every
// reconcile because its database grew by a page. A status written for another reason carries the
// fresh figures (freshFigures), since the write costs nothing more then.
import type { ClusterMemberStatus, EtcdClusterStatus } from '../../api/etcd-cluster.ts';
import type { EtcdMember } from '../../api/etcd-member.ts';
import { storageSize } from '../../builders/storage.ts';
import { pvcName } from '../../names.ts';
import type { ClusterState } from '../cluster/types.ts';
import { working, type MembershipStep } from '../cluster/step.ts';
import { REFUSED_REASON, smaller } from '../member/volume-growth.ts';
import { activeMembers, runningMembers } from '../cluster/members.ts';

export const GROWING_REASON = 'GrowingVolumes';

export function planVolumeGrowth(state: ClusterState): MembershipStep | undefined {
  const observed = state.cluster.status?.observed;
  if (!observed || observed.storage.medium === 'Memory') return undefined;
  const size = storageSize({ size: observed.storage.size });
  const behind = activeMembers(state).filter(m => smaller(storageSize(m.spec.storage), size));
  if (behind.length > 0) {
    const names = behind.map(m => m.metadata.name ?? '');
    const why = `growing the members' volumes to ${size}: setting the size of ${names.join(', ')}`;
    return {
      action: { kind: 'grow-volumes', members: names, size },
      progress: working(GROWING_REASON, why),
      events: [{ type: 'Normal', reason: GROWING_REASON, message: why }],
    };
  }
  const running = runningMembers(state);
  const refused = running.filter(
    m => m.status?.volume?.refused && !smaller(m.status.volume.refused.size, size),
  );
  if (refused.length > 0) {
    const first = refused[0];
    const others = refused.length > 1 ? ` (also refused for ${refused.slice(1).map(nameOf).join(', ')})` : '';
    const message = `${nameOf(first)}: ${first.status?.volume?.refused?.message ?? ''}${others}`;
    const already = state.cluster.status?.conditions?.some(
      c => c.type === 'Progressing' && c.reason === REFUSED_REASON && c.message === message,
    );
    return {
      action: { kind: 'none' },
      progress: { active: false, reason: REFUSED_REASON, message },
      events: already ? [] : [{ type: 'Warning', reason: REFUSED_REASON, message }],
    };
  }
  // A PVC not bound yet (a new member) is the member's business, not a growth.
  const short = running.filter(m => smaller(m.status?.volume?.capacity, size));
  if (short.length === 0) return undefined;
  const detail = short
    .map(m => {
      const v = m.status?.volume;
      return `${pvcName(nameOf(m))} at ${v?.capacity ?? ''}${v?.resizing ? ` (${v.resizing})` : ''}`;
    })
    .join(', ');
  const why = `growing the members' volumes to ${size}: waiting for ${detail}`;
  return { action: { kind: 'wait', reason: why }, progress: working(GROWING_REASON, why) };
}

const nameOf = (m: EtcdMember): string => m.metadata.name ?? '';

const MIB = 1024 * 1024;

/** The recorded figure, unless the fresh one moved by at least 1 MiB and 5 % of the recorded one. */
export function settled(recorded: number | undefined, fresh: number | undefined): number | undefined {
  if (fresh === undefined) return recorded;
  if (recorded === undefined) return fresh;
  const moved = Math.abs(fresh - recorded);
  return moved >= MIB && moved >= recorded * 0.05 ? fresh : recorded;
}

/** volume, dbSize and dbSizeInUse of one member's entry in the cluster's status.members. */
export function memberFigures(
  state: ClusterState,
  member: EtcdMember,
  previous: ClusterMemberStatus | undefined,
): Pick<ClusterMemberStatus, 'volume' | 'dbSize' | 'dbSizeInUse'> {
  const out: Pick<ClusterMemberStatus, 'volume' | 'dbSize' | 'dbSizeInUse'> = {};
  const volume = member.status?.volume;
  if (volume && (volume.requested !== undefined || volume.capacity !== undefined)) {
    out.volume = {
      ...(volume.requested !== undefined && { requested: volume.requested }),
      ...(volume.capacity !== undefined && { capacity: volume.capacity }),
    };
  }
  const fresh = state.dbSizes?.[nameOf(member)];
  const dbSize = settled(previous?.dbSize, fresh?.dbSize);
  const dbSizeInUse = settled(previous?.dbSizeInUse, fresh?.dbSizeInUse);
  if (dbSize !== undefined) out.dbSize = dbSize;
  if (dbSizeInUse !== undefined) out.dbSizeInUse = dbSizeInUse;
  return out;
}

/** `status` with each member's dbSize and dbSizeInUse as etcd just reported them, where it did. */
export function freshFigures(status: EtcdClusterStatus, dbSizes: ClusterState['dbSizes']): EtcdClusterStatus {
  if (!dbSizes || !status.members) return status;
  const members = status.members.map(m => {
    const fresh = dbSizes[m.name];
    return fresh ? { ...m, dbSize: fresh.dbSize, dbSizeInUse: fresh.dbSizeInUse } : m;
  });
  return { ...status, members };
}
