// reconcile-cluster's concerns, in the order they are asked: each is a small pure check that returns
// its step (the Progressing reason and message are in the step's status) or nothing, and the first
// that returns a step wins (cert-manager's policy chain). The order is the decision: an earlier
// concern pre-empts every later one, so it is pinned by test/unit/plan-cluster-concerns.test.ts and
// a change to it is a deliberate one.
import { planBootstrap } from '../membership/bootstrap.ts';
import { planBootstrapRetry, startBootstrapRetry } from '../membership/bootstrap-retry.ts';
import { planMembership } from '../membership/scaling.ts';
import { networkPolicyChanges } from '../owned/network-policy.ts';
import { pdbChanges } from '../owned/pdb.ts';
import { servicesChanges } from '../owned/services.ts';
import { planForceNewCluster } from '../recovery/force-new-cluster.ts';
import { planRestoreRecovery } from '../recovery/restore-latest.ts';
import { planInPlaceRestore } from '../restore/in-place.ts';
import {
  defragAbandoned,
  defragOperation,
  planDefrag,
  releasedDefragClaim,
  withoutDefragClaim,
} from '../space/defrag.ts';
import { planSpaceRecovery } from '../space/nospace-alarm.ts';
import { planVolumeGrowth } from '../space/volume-growth.ts';
import { upgradeStalledOnPull } from '../upgrade/upgrade.ts';
import { versionRefusal } from '../upgrade/version-moves.ts';
import { legacyRaftEntries, raftSnapshotWait } from '../upgrade/wal-guard.ts';
import { isComplete } from './complete.ts';
import { isDeleting, runningMembers } from './members.ts';
import { computeStatus } from './status.ts';
import { targetMessage, working, type ClusterPlan, type PlanFn, type Progress } from './step.ts';
import {
  adoptSpec,
  deadlineExceeded,
  initialTarget,
  refuseTarget,
  waitForRaftSnapshots,
} from './target-steps.ts';
import { deadlinePassed, specDiffersFromObserved } from './target.ts';
import type { ClusterState } from './types.ts';

export interface ClusterConcern {
  /** The concern as the order test and a reader name it. */
  name: string;
  /** Its step, when it has one now; undefined hands the decision to the next concern. */
  check: (state: ClusterState) => ClusterPlan | undefined;
}

/** The step of the first concern that has one, and that concern's name. */
export function firstStep(
  concerns: readonly ClusterConcern[],
  state: ClusterState,
): { concern: string; plan: ClusterPlan } {
  for (const concern of concerns) {
    const plan = concern.check(state);
    if (plan) return { concern: concern.name, plan };
  }
  // The last concern ('reconciled') always has a step; reaching here is a bug in the list.
  throw new Error('no cluster concern returned a step');
}

/** A plan whose status is computed from `progress` over `base` (the current status by default). */
const plannedFor =
  (state: ClusterState): PlanFn =>
  (action, progress, base = state.cluster.status ?? {}, events = []) => ({
    action,
    status: computeStatus(state, base, progress),
    events,
  });

/** The locked target reached (or paused): what Progressing says once there is nothing to do. */
function reached(state: ClusterState): Progress {
  const observed = state.cluster.status!.observed!;
  const desired = observed.replicas;
  return {
    active: false,
    reason: desired === 0 ? 'Paused' : 'Reconciled',
    message: desired === 0 ? 'paused' : `${targetMessage(desired, observed.version)}: reached`,
  };
}

/** A cluster being deleted keeps its status as it is; finalize-member lets its members go. */
function deleting(state: ClusterState): ClusterPlan | undefined {
  if (!isDeleting(state.cluster)) return undefined;
  return { action: { kind: 'none' }, status: state.cluster.status ?? {}, events: [] };
}

const inPlaceRestore = (state: ClusterState): ClusterPlan | undefined =>
  state.cluster.status?.observed ? planInPlaceRestore(state, isComplete(state)) : undefined;

const restoreLatestSnapshot = (state: ClusterState): ClusterPlan | undefined =>
  state.cluster.status?.observed ? planRestoreRecovery(state) : undefined;

function lockTarget(state: ClusterState): ClusterPlan | undefined {
  const current = state.cluster.status ?? {};
  return !current.clusterToken || !current.observed ? initialTarget(state) : undefined;
}

/** A member is being defragmented: wait for it, take it over, or drop the claim and plan on. */
function defragmentationClaim(state: ClusterState): ClusterPlan | undefined {
  const current = state.cluster.status ?? {};
  if (!defragOperation(current)) return undefined;
  const free = withoutDefragClaim(state);
  const held = planDefrag(state, isComplete(free));
  if (!held) {
    // Every concern is asked again, from the top, as if the claim had never been written.
    const next = firstStep(CLUSTER_CONCERNS, releasedDefragClaim(state, isComplete(free))).plan;
    const abandoned = defragAbandoned(state, isComplete(free));
    return abandoned ? { ...next, events: [abandoned, ...next.events] } : next;
  }
  return {
    action: held.action,
    status: computeStatus(state, held.base ?? current, held.progress),
    events: [],
  };
}

function addMemberOperation(state: ClusterState): ClusterPlan | undefined {
  const operation = state.cluster.status?.operation;
  if (operation?.type !== 'add-member') return undefined;
  const message = operation.initialMembers
    ? `creating the initial members ${operation.initialMembers.join(', ')} together`
    : `adding member ${operation.member}`;
  const progress = { active: true, reason: 'AddingMember', message };
  return plannedFor(state)({ kind: 'resume', operation }, progress);
}

/**
 * The spec differs from the locked target, and the target is reached, stalled on an image pull, or
 * past its deadline: the spec is refused, waited for, or adopted.
 */
function newTarget(state: ClusterState): ClusterPlan | undefined {
  const cluster = state.cluster;
  const complete = isComplete(state);
  const stalled = upgradeStalledOnPull(state, runningMembers(state));
  if (!specDiffersFromObserved(cluster) || !(complete || stalled || deadlinePassed(cluster, state.now)))
    return undefined;
  const refused = versionRefusal(state);
  if (refused) return refuseTarget(state, refused.reason, refused.message);
  const wait = raftSnapshotWait(state, legacyRaftEntries(state));
  if (wait) return waitForRaftSnapshots(state, wait);
  return adoptSpec(state, complete || stalled ? 'NewTarget' : 'RetryAfterDeadline');
}

/** The target missed its deadline: a static bootstrap starts over, a late formation is latched, or it failed. */
function deadline(state: ClusterState): ClusterPlan | undefined {
  if (isComplete(state) || !deadlinePassed(state.cluster, state.now)) return undefined;
  return startBootstrapRetry(state) ?? lateFormation(state) ?? deadlineExceeded(state);
}

/** etcd formed after the deadline (a slow start): its cluster ID is latched rather than reported failed. */
function lateFormation(state: ClusterState): ClusterPlan | undefined {
  if (state.cluster.status?.clusterID || !state.etcd?.reachable) return undefined;
  const onward = firstStep(TOWARD_TARGET, state).plan;
  return onward.status.clusterID ? onward : undefined;
}

// Owned objects carry their changes in the plan: the act layer applies them as they are.
function services(state: ClusterState): ClusterPlan | undefined {
  const changes = servicesChanges(state);
  if (!changes) return undefined;
  const progress = isComplete(state) ? reached(state) : working('CreatingServices', 'creating Services');
  return { ...plannedFor(state)({ kind: 'ensure-services' }, progress), owned: changes };
}

function networkPolicy(state: ClusterState): ClusterPlan | undefined {
  const changes = networkPolicyChanges(state);
  if (!changes) return undefined;
  const progress = isComplete(state)
    ? reached(state)
    : working('CreatingNetworkPolicy', 'creating the NetworkPolicy');
  return { ...plannedFor(state)({ kind: 'ensure-network-policy' }, progress), owned: changes };
}

/** Until etcd's cluster ID is latched, bootstrap decides alone: nothing below runs on an unformed cluster. */
const bootstrap = (state: ClusterState): ClusterPlan | undefined =>
  state.cluster.status?.clusterID ? undefined : planBootstrap(state, plannedFor(state));

function nospaceAlarm(state: ClusterState): ClusterPlan | undefined {
  const space = planSpaceRecovery(state);
  return space && plannedFor(state)(space.action, space.progress, undefined, space.events);
}

function membership(state: ClusterState): ClusterPlan | undefined {
  const step = planMembership(state, state.cluster.status!.observed!.replicas);
  return step && plannedFor(state)(step.action, step.progress, step.base, step.events);
}

function volumeGrowth(state: ClusterState): ClusterPlan | undefined {
  const volumes = planVolumeGrowth(state);
  return volumes && plannedFor(state)(volumes.action, volumes.progress, undefined, volumes.events);
}

function pdb(state: ClusterState): ClusterPlan | undefined {
  const changes = pdbChanges(state);
  return changes && { ...plannedFor(state)({ kind: 'ensure-pdb' }, reached(state)), owned: changes };
}

function defragmentation(state: ClusterState): ClusterPlan | undefined {
  const complete = isComplete(state);
  const defrag = complete ? planDefrag(state, complete) : undefined;
  return defrag && plannedFor(state)(defrag.action, defrag.progress, defrag.base);
}

const reconciled = (state: ClusterState): ClusterPlan => plannedFor(state)({ kind: 'none' }, reached(state));

/** Toward the locked target, once nothing above has claimed the decision (late formation walks these too). */
const TOWARD_TARGET: readonly ClusterConcern[] = [
  { name: 'services', check: services },
  { name: 'network-policy', check: networkPolicy },
  { name: 'bootstrap', check: bootstrap },
  { name: 'nospace-alarm', check: nospaceAlarm },
  { name: 'membership', check: membership },
  { name: 'volume-growth', check: volumeGrowth },
  { name: 'pdb', check: pdb },
  { name: 'defragmentation', check: defragmentation },
  { name: 'reconciled', check: reconciled },
];

/** Every concern of reconcile-cluster, first asked first. */
export const CLUSTER_CONCERNS: readonly ClusterConcern[] = [
  { name: 'deleting', check: deleting },
  { name: 'in-place-restore', check: inPlaceRestore },
  { name: 'restore-latest-snapshot', check: restoreLatestSnapshot },
  { name: 'lock-target', check: lockTarget },
  { name: 'bootstrap-retry', check: planBootstrapRetry },
  { name: 'force-new-cluster', check: state => planForceNewCluster(state, isComplete(state)) },
  { name: 'defragmentation-claim', check: defragmentationClaim },
  { name: 'add-member-operation', check: addMemberOperation },
  { name: 'new-target', check: newTarget },
  { name: 'deadline', check: deadline },
  ...TOWARD_TARGET,
];
