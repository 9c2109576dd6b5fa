// reconcile-cluster's decision about a member whose data is lost (reconcile-member recorded the
// evidence in its status), or that crash-loops with start settings the cluster no longer asks for
// (the user fixed the option that broke it; the member keeps the spec it was made with, so only a
// new member gets the fix): replace it with a new member, one at a time, only while the voters that
// stay are healthy and keep quorum. The lost member is deleted (finalize-member removes its ID
// from etcd, garbage collection its Pod and PVC); the normal scale-up path then adds a fresh
// learner with a new ID and promotes it. The MemberReplacement condition follows each step.
import { isDeepStrictEqual } from 'node:util';
import type { EtcdClusterStatus } from '../../api/etcd-cluster.ts';
import type { EtcdMember } from '../../api/etcd-member.ts';
import type { ConditionInput } from '../../conditions.ts';
import { toKubeTime } from '../../conditions.ts';
import type { ClusterState } from '../cluster/types.ts';
import { working, type MembershipStep } from '../cluster/step.ts';
import { isMemberReady, membershipOf, runningMembers } from '../cluster/members.ts';

export const MEMBER_REPLACEMENT = 'MemberReplacement';

/** A member's spec fields, copied from the cluster's target, that can keep etcd from starting. */
const START_FIELDS = ['options', 'resources', 'imagePullSecrets'] as const;

/**
 * Why a crash-looping member is to be replaced: it runs with start settings the cluster's target
 * no longer has. Undefined when it does not crash-loop, or its settings are still the target's
 * (a new member would fail the same way).
 */
export function staleCrashLoop(state: ClusterState, member: EtcdMember): string | undefined {
  const ready = member.status?.conditions?.find(c => c.type === 'Ready');
  const observed = state.cluster.status?.observed;
  if (ready?.reason !== 'CrashLooping' || !observed) return undefined;
  const changed = START_FIELDS.filter(f => !isDeepStrictEqual(member.spec[f] ?? null, observed[f] ?? null));
  if (changed.length === 0) return undefined;
  return `it crash-loops with spec.${changed.join(', spec.')} the cluster no longer asks for, and a member keeps the spec it was made with`;
}

export function planReplacement(state: ClusterState): MembershipStep | undefined {
  const current = state.cluster.status ?? {};
  const running = runningMembers(state);
  const dataLost = running.find(m => m.status?.dataLoss !== undefined);
  const looping = dataLost ? undefined : running.find(m => staleCrashLoop(state, m) !== undefined);
  const lost = dataLost ?? looping;
  if (!lost) return undefined;
  const name = lost.metadata.name ?? '';
  const evidence = lost.status?.dataLoss?.message ?? staleCrashLoop(state, lost) ?? 'data lost';
  const inFlight = current.replacement;
  if (inFlight && inFlight.member !== name) {
    const why = `member ${name} ${dataLost ? 'lost its data' : 'crash-loops'} too; it is replaced once the replacement of ${inFlight.member} is done (one at a time)`;
    return { action: { kind: 'wait', reason: why }, progress: working('ReplacingMember', why) };
  }
  const blocked = replacementRisk(state, lost, running);
  if (blocked) {
    const why = `cannot replace member ${name} yet (${evidence}): ${blocked}`;
    return { action: { kind: 'wait', reason: why }, progress: working('ReplacementBlocked', why) };
  }
  const oldID = lost.status?.memberID ?? etcdIdOf(state, lost);
  const replacement = {
    member: name,
    ...(oldID && { oldID }),
    reason: evidence,
    ...(!dataLost && { cause: 'CrashLoop' as const }),
    ...(dataLost?.status?.dataLoss?.reason === 'NodeLost' && { cause: 'NodeLost' as const }),
    startedAt: toKubeTime(state.now),
  };
  const why = `replacing member ${name}${oldID ? ` (ID ${oldID})` : ''}: ${replacement.reason}; removing it from etcd, then adding a new member`;
  if (!inFlight) {
    // Claim before acting: the replacement is recorded first (a compare-and-swap status write that
    // one invocation wins); that write brings the next event, which deletes the member. A crash
    // after the deletion then still finds what was replaced, and why.
    return {
      action: { kind: 'none' },
      progress: working('ReplacingMember', why),
      base: { ...current, replacement },
      events: [{ type: 'Warning', reason: 'ReplacingMember', message: why }],
    };
  }
  return {
    action: { kind: 'delete-member', member: name },
    progress: working('ReplacingMember', why),
    base: current,
  };
}

/**
 * Why removing `lost` now could cost quorum, or undefined: etcd must answer, every other running
 * member must be ready and started in etcd, and the voters that stay must be a majority of the
 * voters there are now (etcd needs that majority to commit the removal, and they hold every
 * acknowledged write).
 */
function replacementRisk(state: ClusterState, lost: EtcdMember, running: EtcdMember[]): string | undefined {
  const etcd = state.etcd;
  if (!etcd?.reachable)
    return `etcd does not answer (${etcd ? etcd.error : 'no ready member to ask'}); quorum may be lost`;
  const others = running.filter(m => m !== lost);
  const down = others.filter(
    m => !isMemberReady(state, m) || !membershipOf(state.cluster, m, etcd.members)?.started,
  );
  if (down.length > 0) {
    return `member${down.length === 1 ? '' : 's'} ${down.map(m => m.metadata.name).join(', ')} ${down.length === 1 ? 'is' : 'are'} not healthy, so removing another could cost the cluster its quorum`;
  }
  const voters = etcd.members.filter(e => !e.isLearner);
  const lostEntry = membershipOf(state.cluster, lost, etcd.members);
  const staying = voters.filter(
    e => e !== lostEntry && others.some(m => membershipOf(state.cluster, m, [e])),
  );
  const quorum = Math.floor(voters.length / 2) + 1;
  if (staying.length < quorum) {
    return `only ${staying.length} of ${voters.length} voters would stay healthy, fewer than the ${quorum} a quorum needs`;
  }
  return undefined;
}

function etcdIdOf(state: ClusterState, member: EtcdMember): string | undefined {
  const etcd = state.etcd?.reachable ? state.etcd : undefined;
  return etcd ? membershipOf(state.cluster, member, etcd.members)?.id : undefined;
}

/**
 * The MemberReplacement condition for the status about to be written, and the replacement record
 * once it is done (the new member is a started voter and ready): cleared, with the condition
 * keeping the names and IDs.
 */
export function replacementProgress(
  state: ClusterState,
  status: EtcdClusterStatus,
): { condition?: ConditionInput; done: boolean } {
  const r = status.replacement;
  if (!r) return { done: false };
  const old = `${r.member}${r.oldID ? ` (ID ${r.oldID})` : ''}`;
  const why =
    r.cause === 'CrashLoop'
      ? `which crash-looped (${r.reason})`
      : r.cause === 'NodeLost'
        ? `whose node is gone (${r.reason})`
        : `whose data was lost (${r.reason})`;
  const etcd = state.etcd?.reachable ? state.etcd : undefined;
  const fresh = r.newMember ? state.members.find(m => m.metadata.name === r.newMember) : undefined;
  const entry = fresh && etcd ? membershipOf(state.cluster, fresh, etcd.members) : undefined;
  const newPart = r.newMember ? `new member ${r.newMember}${entry ? ` (ID ${entry.id})` : ''}` : '';
  if (fresh && entry && !entry.isLearner && entry.started && isMemberReady(state, fresh)) {
    return {
      done: true,
      condition: {
        type: MEMBER_REPLACEMENT,
        status: 'False',
        reason: 'Replaced',
        message: `replaced member ${old}, ${why}, with ${newPart}`,
      },
    };
  }
  const step = !r.newMember
    ? 'removing it from etcd'
    : entry?.isLearner || !entry
      ? `${newPart} joining as a learner`
      : `${newPart} promoted, waiting for it to be ready`;
  return {
    done: false,
    condition: {
      type: MEMBER_REPLACEMENT,
      status: 'True',
      reason: 'Replacing',
      message: `replacing member ${old}, ${why}: ${step}`,
    },
  };
}
