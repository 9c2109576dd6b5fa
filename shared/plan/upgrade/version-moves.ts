// Which version moves etcd allows, checked against what the members run (the CRD checks the spec
// edit alone; two edits in a row, or an edit made while a roll-out is under way, pass it).
// Pure: used by reconcile-cluster before it adopts a new target.
import { MINIMUM_PATCH_BEFORE, NEWEST_PATCH } from '../../api/defaults.ts';
import type { ClusterState } from '../cluster/types.ts';
import { activeMembers } from '../cluster/members.ts';

/** "3.5.16" → [3, 5, 16]; undefined for anything else. */
export function versionParts(version: string | undefined): [number, number, number] | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(version ?? '');
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** 3.5.16 → 3005: a number whose difference counts minor releases (within one major). */
export function minorNumber(version: string | undefined): number | undefined {
  const p = versionParts(version);
  return p ? p[0] * 1000 + p[1] : undefined;
}

/** "3.5.16" → "3.5". */
export const minorName = (version: string): string => version.split('.').slice(0, 2).join('.');

/** Whether going from `from` to `to` is a downgrade to the previous minor. */
export function isMinorDowngrade(from: string | undefined, to: string | undefined): boolean {
  const a = minorNumber(from);
  const b = minorNumber(to);
  return a !== undefined && b !== undefined && b === a - 1;
}

export interface VersionRefusal {
  reason: 'VersionSkipsMinor' | 'UpgradeNeedsNewerPatch';
  message: string;
}

/**
 * Why spec.version cannot be adopted given what each member (running or paused) is set to and
 * reports running, or undefined: a minor release skipped forward or back, or an upgrade to the next
 * minor from a patch below the one etcd's upgrade guide asks for.
 */
export function versionRefusal(state: ClusterState): VersionRefusal | undefined {
  const wanted = state.cluster.spec.version;
  const target = minorNumber(wanted);
  if (target === undefined) return undefined;
  const held = activeMembers(state).flatMap(member =>
    [member.spec.version, member.status?.version]
      .filter((v): v is string => minorNumber(v) !== undefined)
      .map(version => ({
        version,
        have: minorNumber(version)!,
        who: `member ${member.metadata.name}, which runs etcd ${version}`,
      })),
  );
  // A skipped minor first: it is the refusal that holds whatever patch the members are on.
  for (const { have, who } of held) {
    if (target > have + 1) {
      return {
        reason: 'VersionSkipsMinor',
        message: `spec.version ${wanted} is more than one minor release ahead of ${who}; etcd upgrades one minor release at a time: set spec.version to a release of the next minor first`,
      };
    }
    if (target < have - 1) {
      return {
        reason: 'VersionSkipsMinor',
        message: `spec.version ${wanted} is more than one minor release behind ${who}; etcd downgrades one minor release at a time: set spec.version to a release of the previous minor first`,
      };
    }
  }
  const minimum = MINIMUM_PATCH_BEFORE[minorName(wanted)];
  for (const { version, have, who } of held) {
    if (target === have + 1 && minimum && olderPatch(version, minimum)) {
      const newest = NEWEST_PATCH[minorName(version)] ?? minimum;
      return {
        reason: 'UpgradeNeedsNewerPatch',
        message: `spec.version ${wanted} needs every member on etcd ${minimum} or later first (etcd's upgrade guide) and ${who}: set spec.version to ${newest} (the newest ${minorName(version)}), let it roll out, then set ${wanted}`,
      };
    }
  }
  return undefined;
}

function olderPatch(version: string, minimum: string): boolean {
  const a = versionParts(version);
  const b = versionParts(minimum);
  if (!a || !b) return false;
  return a[0] === b[0] && a[1] === b[1] && a[2] < b[2];
}
