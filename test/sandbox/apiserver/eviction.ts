// Eviction (POST pods/<name>/eviction, what `kubectl drain` sends) as the real API server decides
// it: a Pod covered by a PodDisruptionBudget goes only if the budget allows one more disruption;
// otherwise 429 TooManyRequests, and the caller (drain) retries later.
//
// The real server reads the budget's status, kept by the disruption controller. The sandbox has no
// such controller, so the same figures are computed here from the Pods at the moment of the
// request — equivalent for Pods without a controller scale, which is what etcdfn's Pods are:
//   expected = Pods the selector matches; healthy = those Ready and not being deleted;
//   desired  = minAvailable (a number, or a percentage of expected rounded up), or
//              expected - maxUnavailable (a percentage rounded up);
//   allowed  = healthy - desired.
// A Pod that is not Ready may go while the budget is met (the default IfHealthyBudget policy) or
// always (AlwaysAllow). Pods that are Pending, finished or already being deleted ignore budgets.
import { ApiError } from './errors.ts';
import type { KObject } from './types.ts';
import { matchLabels, parseLabelSelector, type LabelSelector } from './selectors.ts';

interface PodLike extends KObject {
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

interface PdbLike extends KObject {
  spec?: {
    selector?: LabelSelectorObject;
    minAvailable?: number | string;
    maxUnavailable?: number | string;
    unhealthyPodEvictionPolicy?: 'IfHealthyBudget' | 'AlwaysAllow';
  };
}

export interface Budget {
  name: string;
  expected: number;
  healthy: number;
  desired: number;
  allowed: number;
}

/** Why the eviction of `pod` must be refused now; undefined when it may go. */
export function evictionRefusal(
  pod: KObject,
  pdbs: KObject[],
  podsInNamespace: KObject[],
): ApiError | undefined {
  const target = pod as PodLike;
  if (ignoresBudgets(target)) return undefined;
  const covering = (pdbs as PdbLike[]).filter(pdb => matches(pdb, target));
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

/** The budget's figures now, as the disruption controller would report them. */
export function budgetOf(pdb: KObject, pods: KObject[]): Budget {
  const spec = (pdb as PdbLike).spec ?? {};
  const matched = (pods as PodLike[]).filter(p => matches(pdb as PdbLike, p) && !isFinished(p));
  const expected = matched.length;
  const healthy = matched.filter(isHealthy).length;
  let desired = 0;
  if (spec.minAvailable !== undefined) desired = scaled(spec.minAvailable, expected);
  else if (spec.maxUnavailable !== undefined)
    desired = Math.max(0, expected - scaled(spec.maxUnavailable, expected));
  return {
    name: pdb.metadata.name ?? '',
    expected,
    healthy,
    desired,
    allowed: Math.max(0, healthy - desired),
  };
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

function isFinished(pod: PodLike): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

function isHealthy(pod: PodLike): boolean {
  if (pod.metadata.deletionTimestamp) return false;
  return pod.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True') ?? false;
}

function matches(pdb: PdbLike, pod: KObject): boolean {
  if (pdb.metadata.namespace !== pod.metadata.namespace) return false;
  // policy/v1: an empty selector selects every Pod of the namespace.
  return matchLabels(selectorOf(pdb.spec?.selector), pod.metadata.labels);
}

function selectorOf(selector: LabelSelectorObject | undefined): LabelSelector {
  const parts = Object.entries(selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector?.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parseLabelSelector(parts.join(','));
}

/** An int-or-percent against a total, percentages rounded up (as the disruption controller does). */
function scaled(value: number | string, total: number): number {
  if (typeof value === 'number') return value;
  const percent = /^(\d+)%$/.exec(value);
  return percent ? Math.ceil((Number(percent[1]) * total) / 100) : Number(value) || 0;
}
