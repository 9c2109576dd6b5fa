// PodDisruptionBudget arithmetic shared by the two halves of the sandbox: the API server's eviction
// (apiserver/eviction.ts decides from the Pods at request time) and the kubelet's disruption
// controller (kubelet/disruption.ts writes the figures to the PDB's status, as
// kube-controller-manager's disruption controller does). For Pods without a controller scale
// (etcdfn's Pods) the figures are the real controller's:
//   expected = Pods the selector matches (not Succeeded/Failed);
//   healthy  = those Ready and not being deleted;
//   desired  = minAvailable (a number, or a percentage of expected rounded up), or
//              expected - maxUnavailable (a percentage rounded up);
//   allowed  = healthy - desired, at least 0.
// The real controller takes `expected` from the owners' scale for a percentage or maxUnavailable
// (and fails with SyncFailed for Pods without a controller); here it is always the Pod count.
import { matchLabels, type LabelSelector } from './apiserver/selectors.ts';
import type { KObject } from './apiserver/types.ts';

export interface PodLike extends KObject {
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export interface PdbCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface PdbStatus {
  observedGeneration?: number;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  disruptedPods?: Record<string, string>;
  conditions?: PdbCondition[];
}

export interface PdbLike extends KObject {
  spec?: {
    selector?: LabelSelectorObject;
    minAvailable?: number | string;
    maxUnavailable?: number | string;
    unhealthyPodEvictionPolicy?: 'IfHealthyBudget' | 'AlwaysAllow';
  };
  status?: Partial<PdbStatus>;
}

export interface Budget {
  name: string;
  expected: number;
  healthy: number;
  desired: number;
  allowed: number;
}

/** policy/v1: the condition the disruption controller sets, and its reasons. */
export const DISRUPTION_ALLOWED = 'DisruptionAllowed';
export const SUFFICIENT_PODS = 'SufficientPods';
export const INSUFFICIENT_PODS = 'InsufficientPods';

/** The budget's figures now, as the disruption controller would report them. */
export function budgetOf(pdb: KObject, pods: KObject[]): Budget {
  const spec = (pdb as PdbLike).spec ?? {};
  const matched = (pods as PodLike[]).filter(p => pdbMatches(pdb as PdbLike, p) && !isFinished(p));
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

/**
 * The status the disruption controller would write for `pdb` given the Pods (of any namespace):
 * the figures of budgetOf, observedGeneration, and the DisruptionAllowed condition (True with
 * SufficientPods when a disruption is allowed, else False with InsufficientPods; its
 * lastTransitionTime kept unless its status flips, then `now`). Other conditions and
 * disruptedPods are kept as they are.
 */
export function pdbStatus(pdb: KObject, pods: KObject[], now: string): PdbStatus {
  const current = (pdb as PdbLike).status ?? {};
  const budget = budgetOf(pdb, pods);
  const observedGeneration = pdb.metadata.generation;
  const allowed = budget.allowed > 0;
  const status: PdbCondition['status'] = allowed ? 'True' : 'False';
  const previous = current.conditions?.find(c => c.type === DISRUPTION_ALLOWED);
  const condition: PdbCondition = {
    type: DISRUPTION_ALLOWED,
    status,
    reason: allowed ? SUFFICIENT_PODS : INSUFFICIENT_PODS,
    message: '',
    lastTransitionTime:
      previous?.status === status && previous.lastTransitionTime ? previous.lastTransitionTime : now,
    ...(observedGeneration !== undefined && { observedGeneration }),
  };
  const conditions = (current.conditions ?? []).map(c => (c.type === DISRUPTION_ALLOWED ? condition : c));
  if (!previous) conditions.push(condition);
  return {
    ...(current.disruptedPods !== undefined && { disruptedPods: current.disruptedPods }),
    ...(observedGeneration !== undefined && { observedGeneration }),
    disruptionsAllowed: budget.allowed,
    currentHealthy: budget.healthy,
    desiredHealthy: budget.desired,
    expectedPods: budget.expected,
    conditions,
  };
}

/** True when `status` differs from what `pdb` carries (so it must be written). */
export function pdbStatusChanged(pdb: KObject, status: PdbStatus): boolean {
  const current = (pdb as PdbLike).status ?? {};
  const figures = [
    'observedGeneration',
    'disruptionsAllowed',
    'currentHealthy',
    'desiredHealthy',
    'expectedPods',
  ] as const;
  if (figures.some(key => current[key] !== status[key])) return true;
  const was = current.conditions ?? [];
  const now = status.conditions ?? [];
  if (was.length !== now.length) return true;
  const fields = ['type', 'status', 'reason', 'message', 'lastTransitionTime', 'observedGeneration'] as const;
  return now.some((c, i) => fields.some(key => was[i][key] !== c[key]));
}

/** Whether the PDB covers the Pod (same namespace; an empty selector selects every Pod there). */
export function pdbMatches(pdb: PdbLike, pod: KObject): boolean {
  if (pdb.metadata.namespace !== pod.metadata.namespace) return false;
  return matchLabels(selectorOf(pdb.spec?.selector), pod.metadata.labels);
}

export function isFinished(pod: PodLike): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** Ready and not being deleted. */
export function isHealthy(pod: PodLike): boolean {
  if (pod.metadata.deletionTimestamp) return false;
  return pod.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** A metav1.LabelSelector as the requirements the API server's selector matcher takes. */
function selectorOf(selector: LabelSelectorObject | undefined): LabelSelector {
  const requirements: LabelSelector = Object.entries(selector?.matchLabels ?? {}).map(([key, value]) => ({
    key,
    op: '=' as const,
    values: [value],
  }));
  for (const { key, operator, values = [] } of selector?.matchExpressions ?? []) {
    if (operator === 'In') requirements.push({ key, op: 'in', values });
    else if (operator === 'NotIn') requirements.push({ key, op: 'notin', values });
    else if (operator === 'Exists') requirements.push({ key, op: 'exists' });
    else if (operator === 'DoesNotExist') requirements.push({ key, op: '!' });
  }
  return requirements;
}

/** An int-or-percent against a total, percentages rounded up (as the disruption controller does). */
function scaled(value: number | string, total: number): number {
  if (typeof value === 'number') return value;
  const percent = /^(\d+)%$/.exec(value);
  return percent ? Math.ceil((Number(percent[1]) * total) / 100) : Number(value) || 0;
}
