// reconcile-member's decision about a running member's Pod: create it, replace it when it cannot
// run or runs an older release, label it with the role etcd gives it.
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdMemberStatus } from '../../api/etcd-member.ts';
import {
  guardedJoin,
  hasDataGuard,
  INITIAL_CLUSTER_ANNOTATION,
  INITIAL_CLUSTER_STATE_ANNOTATION,
} from '../../builders/etcd-flags.ts';
import { buildMemberPod } from '../../builders/pod.ts';
import type { ConditionInput } from '../../conditions.ts';
import { ROLE_LABEL } from '../../names.ts';
import {
  isBeingDeleted,
  isPodReady,
  isPodTerminal,
  joinsFromAnnotations,
  ownershipOf,
  podJoinSettings,
  podNotReadyMessage,
  type Ownership,
} from './pod.ts';
import { desiredRole, READY } from './status.ts';
import { startFailure } from './failure.ts';
import { planForcedStart } from './force-new-cluster.ts';
import { planPodUpgrade } from './upgrade.ts';
import {
  notReady,
  plan,
  type MemberAction,
  type MemberEvent,
  type MemberPlan,
  type MemberState,
} from './step.ts';

const CRASH_LOOPING = 'CrashLooping';

export function planPod(state: MemberState): MemberPlan {
  const { member, pod } = state;
  const name = member.metadata.name ?? '';
  if (!pod) return createPod(state);
  const owner = ownershipOf(pod, member);
  if (owner !== 'ours') return otherPod(state, pod, owner);
  if (isBeingDeleted(pod)) {
    const message = `Pod ${name} is being deleted; it is recreated once it is gone`;
    return plan(
      state,
      { kind: 'wait', reason: message, retry: false },
      { pod, ready: notReady('PodNotReady', message) },
    );
  }
  if (isPodTerminal(pod)) {
    const message = `${podNotReadyMessage(pod)}; a kubelet does not restart it, so it is replaced`;
    const action: MemberAction = { kind: 'delete-pod', name, uid: pod.metadata?.uid ?? '', reason: message };
    return plan(state, action, { pod, ready: notReady('PodNotReady', message) }, [
      { type: 'Normal', reason: 'ReplacingPod', message },
    ]);
  }
  const forced = planForcedStart(state, pod);
  if (forced) return forced;
  const upgrade = planPodUpgrade(state, pod);
  if (upgrade) return upgrade;
  const loop = isPodReady(pod) ? undefined : startFailure(member, pod);
  const ready: ConditionInput = isPodReady(pod)
    ? { type: READY, status: 'True', reason: 'PodReady', message: 'etcd member is ready' }
    : loop?.kind === 'crash-loop'
      ? notReady(CRASH_LOOPING, loop.message)
      : notReady('PodNotReady', podNotReadyMessage(pod));
  // Reported once (Warning Event) and in Ready; never replaced: a new member would fail the same way.
  const wasLooping = member.status?.conditions?.some(c => c.type === READY && c.reason === CRASH_LOOPING);
  const events: MemberEvent[] =
    loop?.kind === 'crash-loop' && !wasLooping
      ? [{ type: 'Warning', reason: 'MemberCrashLooping', message: loop.message }]
      : [];
  const base = plan(state, { kind: 'none', reason: `${name}: nothing to do` }, { pod, ready }, events);
  const patch = metadataPatch(state, pod, base.status);
  if (patch) return { ...base, action: patch };
  if (isPodReady(pod) && !base.status.memberID) {
    // Nothing this function receives an event for will bring the ID: ask again later.
    const reason = `${name} is ready but etcd did not report its member ID yet`;
    return { ...base, action: { kind: 'wait', reason, retry: true } };
  }
  if (!isPodReady(pod))
    return { ...base, action: { kind: 'none', reason: `${name}: waiting for its Pod to be ready` } };
  return base;
}

/**
 * What the Pod's metadata lacks: the role label etcd gives the member, and — once the member has
 * run — the empty-data guard in the join settings its next in-place restart reads.
 */
function metadataPatch(state: MemberState, pod: V1Pod, status: EtcdMemberStatus): MemberAction | undefined {
  const name = state.member.metadata.name ?? '';
  const reasons: string[] = [];
  const role = desiredRole(status);
  const labels =
    role !== undefined && pod.metadata?.labels?.[ROLE_LABEL] !== role ? { [ROLE_LABEL]: role } : undefined;
  if (labels) reasons.push(`labelling Pod ${name} ${ROLE_LABEL}=${role}, as etcd counts it`);
  const annotations = guardAnnotations(state, pod, status);
  if (annotations) {
    reasons.push(
      `arming the empty-data guard of Pod ${name}: ${name} has run, so an in-place restart of its etcd ` +
        'on an empty data directory must refuse rather than rejoin under its member ID',
    );
  }
  if (!labels && !annotations) return undefined;
  return {
    kind: 'patch-pod-metadata',
    name,
    ...(labels && { labels }),
    ...(annotations && { annotations }),
    reason: reasons.join('; '),
  };
}

/**
 * The guard's join settings as annotations, when the member has run (hasDataGuard), its Pod reads
 * its join settings from its annotations, and they say something else (a member's first Pod).
 */
function guardAnnotations(
  state: MemberState,
  pod: V1Pod,
  status: EtcdMemberStatus,
): Record<string, string> | undefined {
  const { member } = state;
  if (!hasDataGuard({ ...member, status }) || !joinsFromAnnotations(pod)) return undefined;
  const guard = guardedJoin(member, member.metadata.namespace ?? '');
  const now = podJoinSettings(pod);
  if (now?.initialCluster === guard.initialCluster && now.state === guard.state) return undefined;
  return {
    [INITIAL_CLUSTER_ANNOTATION]: guard.initialCluster,
    [INITIAL_CLUSTER_STATE_ANNOTATION]: guard.state,
  };
}

function createPod(state: MemberState): MemberPlan {
  const { member, cluster } = state;
  const name = member.metadata.name ?? '';
  const clusterFormed = (cluster?.status?.clusterID ?? '') !== '';
  const ready = notReady('PodNotReady', `Pod ${name} not created yet`);
  const draft = plan(state, { kind: 'none', reason: '' }, { ready });
  const isVoter = draft.status.isVoter === true;
  let pod: V1Pod;
  try {
    // The Pod is built from the status this step holds, so a member ID etcd just reported is used.
    pod = buildMemberPod(
      { ...member, status: draft.status },
      {
        namespace: member.metadata.namespace ?? '',
        clusterFormed,
        isVoter,
        ...(state.etcdImageRepository && { etcdImageRepository: state.etcdImageRepository }),
        ...(state.etcdImageDigests && { etcdImageDigests: state.etcdImageDigests }),
        ...(state.operatorImage && { operatorImage: state.operatorImage }),
        ...(state.podIPFamily && { podIPFamily: state.podIPFamily }),
        ...(state.s3AllowedEndpoints && { s3AllowedEndpoints: state.s3AllowedEndpoints }),
        ...(state.s3DeniedRanges && { s3DeniedRanges: state.s3DeniedRanges }),
      },
    );
  } catch (err) {
    // Only a new member (a spec edit on the cluster) can fix this; retrying the same member cannot.
    const message = `cannot build Pod ${name}: ${err instanceof Error ? err.message : String(err)}`;
    return plan(
      state,
      { kind: 'wait', reason: message, retry: false },
      { ready: notReady('PodSpecInvalid', message) },
    );
  }
  return { ...draft, action: { kind: 'create-pod', pod, clusterFormed, isVoter } };
}

/** A Pod with the member's name that this member does not control. */
function otherPod(state: MemberState, pod: V1Pod, owner: Exclude<Ownership, 'ours'>): MemberPlan {
  const name = state.member.metadata.name ?? '';
  if (owner === 'foreign') {
    const message = `a Pod named ${name} exists and is not etcdfn's; delete or rename it to let the member start`;
    return plan(
      state,
      { kind: 'wait', reason: message, retry: true },
      { ready: notReady('PodConflict', message) },
    );
  }
  const message = `Pod ${name} belongs to an earlier member of the same name; it is replaced`;
  if (isBeingDeleted(pod)) {
    return plan(
      state,
      { kind: 'wait', reason: message, retry: false },
      { ready: notReady('PodConflict', message) },
    );
  }
  const action: MemberAction = { kind: 'delete-pod', name, uid: pod.metadata?.uid ?? '', reason: message };
  return plan(state, action, { ready: notReady('PodConflict', message) });
}
