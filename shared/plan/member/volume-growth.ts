// reconcile-member's part in growing a volume. reconcile-cluster raises the member's
// spec.storage.size (plan/space/volume-growth.ts); this member then asks its PVC for the new size (one merge
// patch), and the storage side takes it from there: Resizing, FileSystemResizePending, then the new
// capacity, online, while etcd keeps running (no Pod restart, the member keeps its ID).
// The member's status mirrors its PVC (status.volume) and, once a growth has started, says where it
// is in condition VolumeExpanded. When the API server refuses (the StorageClass does not allow
// expansion) the refusal is recorded with its time: the same size is asked again only 10 minutes
// later (on the periodic resync), so a refusal never loops, and it never holds up the Pod's steps.
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { EtcdMember, EtcdMemberStatus, MemberVolumeStatus } from '../../api/etcd-member.ts';
import { isMemoryMedium, storageSize } from '../../builders/storage.ts';
import { setCondition, toKubeTime, type ConditionInput } from '../../conditions.ts';
import { pvcName } from '../../names.ts';
import { compareQuantities, parseQuantity } from '../../quantity.ts';
import { isBeingDeleted, ownershipOf } from './pod.ts';
import { statusDiffers } from './status.ts';
import type { MemberEvent, MemberPlan, MemberState } from './step.ts';

export const VOLUME_CONDITION = 'VolumeExpanded';
export const REFUSED_REASON = 'VolumeExpansionRefused';
/** How long a refused size waits before it is asked again. */
export const RESIZE_RETRY_MS = 10 * 60_000;

/** a < b as quantities; false when either is missing or does not parse. */
export function smaller(a: string | number | undefined, b: string | number | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  try {
    return compareQuantities(parseQuantity(String(a)), parseQuantity(String(b))) < 0;
  } catch {
    return false;
  }
}

/** The member's own PVC, not being deleted (the volume plan handles every other case). */
function ownPvc(state: MemberState): V1PersistentVolumeClaim | undefined {
  const pvc = state.pvc;
  return pvc && !isBeingDeleted(pvc) && ownershipOf(pvc, state.member) === 'ours' ? pvc : undefined;
}

/** status.volume: the PVC as it reports itself; kept as recorded while the PVC is not observed. */
export function volumeStatus(state: MemberState): MemberVolumeStatus | undefined {
  const { member } = state;
  if (isMemoryMedium(member.spec.storage)) return undefined;
  const current = member.status?.volume;
  const pvc = ownPvc(state);
  if (!pvc) return current;
  const volume: MemberVolumeStatus = {};
  const requested = pvc.spec?.resources?.requests?.storage;
  if (requested !== undefined) volume.requested = String(requested);
  const capacity = pvc.status?.capacity?.storage;
  if (capacity !== undefined) volume.capacity = String(capacity);
  if (volume.requested === undefined && volume.capacity === undefined) return current;
  const active = (pvc.status?.conditions ?? []).filter(c => c.status === 'True').map(c => c.type);
  const resizing = ['FileSystemResizePending', 'Resizing'].find(t => active.includes(t));
  if (resizing) volume.resizing = resizing;
  // A refusal holds while the PVC still asks for less than the size refused.
  const refused = current?.refused;
  if (refused && smaller(volume.requested, refused.size)) volume.refused = refused;
  return volume;
}

/** VolumeExpanded, once a growth has started (a member that never grew has none). */
export function volumeCondition(
  member: EtcdMember,
  volume: MemberVolumeStatus | undefined,
): ConditionInput | undefined {
  if (!volume) return undefined;
  const claim = pvcName(member.metadata.name ?? '');
  const desired = storageSize(member.spec.storage);
  const had = member.status?.conditions?.some(c => c.type === VOLUME_CONDITION) === true;
  if (volume.refused)
    return {
      type: VOLUME_CONDITION,
      status: 'False',
      reason: REFUSED_REASON,
      message: volume.refused.message,
    };
  if (volume.capacity === undefined) return undefined;
  if (!smaller(volume.capacity, desired)) {
    if (!had) return undefined;
    const message = `PVC ${claim} has ${volume.capacity}`;
    return { type: VOLUME_CONDITION, status: 'True', reason: 'Expanded', message };
  }
  const step =
    volume.resizing === 'FileSystemResizePending'
      ? ": the volume is larger; its file system grows while the member's Pod runs"
      : volume.resizing === 'Resizing'
        ? ': the storage provider is expanding the volume'
        : '';
  return {
    type: VOLUME_CONDITION,
    status: 'False',
    reason: volume.resizing ?? 'Growing',
    message: `growing PVC ${claim} from ${volume.capacity} to ${desired}${step}`,
  };
}

/** Adds status.volume and VolumeExpanded to the status of a plan made for this state. */
export function withVolume(state: MemberState, planned: MemberPlan): MemberPlan {
  const volume = volumeStatus(state);
  const status = { ...planned.status };
  if (volume) status.volume = volume;
  else delete status.volume;
  const condition = volumeCondition(state.member, volume);
  if (condition) status.conditions = setCondition(status.conditions, condition, state.now);
  return { ...planned, status, statusChanged: statusDiffers(state.member.status, status) };
}

/**
 * The Pod has nothing to do (`base` is its steady plan) and the bound PVC asks for less than the
 * member's size: grow it, unless this size was refused less than RESIZE_RETRY_MS ago.
 */
export function growVolume(state: MemberState, base: MemberPlan): MemberPlan {
  if (base.action.kind !== 'none') return base;
  const { member } = state;
  if (isMemoryMedium(member.spec.storage)) return base;
  const pvc = ownPvc(state);
  if (!pvc || pvc.status?.phase !== 'Bound') return base;
  const size = storageSize(member.spec.storage);
  const from = pvc.spec?.resources?.requests?.storage;
  if (from === undefined || !smaller(from, size)) return base;
  const refused = member.status?.volume?.refused;
  const sameSize = refused !== undefined && !smaller(refused.size, size) && !smaller(size, refused.size);
  if (sameSize && state.now.getTime() - Date.parse(refused.at) < RESIZE_RETRY_MS) return base;
  const claim = pvcName(member.metadata.name ?? '');
  const events: MemberEvent[] = [
    {
      type: 'Normal',
      reason: 'GrowingVolume',
      message: `growing PVC ${claim} from ${String(from)} to ${size}`,
    },
  ];
  return {
    ...base,
    action: { kind: 'resize-pvc', name: claim, from: String(from), size },
    events: [...base.events, ...events],
  };
}

export interface Refusal {
  claim: string;
  className: string | undefined;
  from: string;
  size: string;
  /** The API server's own words. */
  apiMessage: string;
  now: Date;
}

/** What the member says when the API server refused to grow its PVC, and what a person can do. */
export function refusalMessage(r: Refusal): string {
  const head = `the API server refused to grow PVC ${r.claim} from ${r.from} to ${r.size}: ${r.apiMessage}`;
  const keep = `the member keeps its ${r.from} volume and runs on as before; for larger volumes on another StorageClass, restore a snapshot into a new EtcdCluster`;
  if (!/resize|expanded/.test(r.apiMessage)) return `${head}; etcdfn tries again in 10 minutes`;
  if (!r.className)
    return `${head}. The PVC has no StorageClass (a statically provisioned volume), which cannot grow: ${keep}`;
  return (
    `${head}. StorageClass ${r.className} does not allow volume expansion: if its provisioner can grow volumes, ` +
    `set allowVolumeExpansion: true on it (kubectl patch storageclass ${r.className} -p '{"allowVolumeExpansion":true}') ` +
    `and etcdfn tries again within about 10 minutes (at its next resync); otherwise ${keep}`
  );
}

/** The member's status once the API server refused the growth (written by the adapter, CAS). */
export function refusedStatus(
  member: EtcdMember,
  r: Refusal,
): { status: EtcdMemberStatus; events: MemberEvent[] } {
  const current = member.status ?? {};
  const message = refusalMessage(r);
  const refused = { size: r.size, message, at: toKubeTime(r.now) };
  const volume: MemberVolumeStatus = { ...current.volume, refused };
  const condition: ConditionInput = {
    type: VOLUME_CONDITION,
    status: 'False',
    reason: REFUSED_REASON,
    message,
  };
  const status = { ...current, volume, conditions: setCondition(current.conditions, condition, r.now) };
  const known = current.volume?.refused?.size === r.size && current.volume.refused.message === message;
  return { status, events: known ? [] : [{ type: 'Warning', reason: REFUSED_REASON, message }] };
}
