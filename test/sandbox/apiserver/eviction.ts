// Eviction (POST pods/<name>/eviction, what `kubectl drain` sends) as the real API server decides
// it: a Pod covered by a PodDisruptionBudget goes only if the budget allows one more disruption;
// otherwise 429 TooManyRequests, and the caller (drain) retries later.
//
// The real server reads the budget's status, kept by the disruption controller. The sandbox's
// disruption controller (the kubelet's, kubelet/disruption.ts) writes that status too, but it may
// trail the Pods, so the same figures (../disruption.ts: budgetOf) are computed here from the Pods
// at the moment of the request — equivalent for Pods without a controller scale, which is what
// etcdfn's Pods are, and works with the API server alone.
// A Pod that is not Ready may go while the budget is met (the default IfHealthyBudget policy) or
// always (AlwaysAllow). Pods that are Pending, finished or already being deleted ignore budgets.
import { ApiError } from './errors.ts';
import type { KObject } from './types.ts';
import {
  budgetOf,
  isFinished,
  isHealthy,
  pdbMatches,
  type Budget,
  type PdbLike,
  type PodLike,
} from '../disruption.ts';

/** Why the eviction of `pod` must be refused now; undefined when it may go. */
export function evictionRefusal(
  pod: KObject,
  pdbs: KObject[],
  podsInNamespace: KObject[],
): ApiError | undefined {
  const target = pod as PodLike;
  if (ignoresBudgets(target)) return undefined;
  const covering = (pdbs as PdbLike[]).filter(pdb => pdbMatches(pdb, target));
  if (covering.length === 0) return undefined;
  if (covering.length > 1) {
    return new ApiError(
      500,
      'InternalError',
      'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    );
  }
  const pdb = covering[0];
  const budget = budgetOf(pdb, podsInNamespace);
  if (!isHealthy(target)) {
    const always = pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow';
    return always || budget.healthy >= budget.desired ? undefined : tooManyRequests(budget);
  }
  return budget.allowed > 0 ? undefined : tooManyRequests(budget);
}

function tooManyRequests(budget: Budget): ApiError {
  return new ApiError(
    429,
    'TooManyRequests',
    "Cannot evict pod as it would violate the pod's disruption budget.",
    {
      causes: [
        {
          reason: 'DisruptionBudget',
          message: `The disruption budget ${budget.name} needs ${budget.desired} healthy pods and has ${budget.healthy} currently`,
        },
      ],
    },
  );
}

function ignoresBudgets(pod: PodLike): boolean {
  const phase = pod.status?.phase ?? 'Pending';
  return Boolean(pod.metadata.deletionTimestamp) || phase === 'Pending' || isFinished(pod);
}
