// Condition helpers over metav1.Condition. lastTransitionTime moves only when the status flips,
// so a condition's age tells a person how long the cluster has been in that state.

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find(c => c.type === type);
}

/**
 * Returns a new list with `input` set. The old entry's lastTransitionTime is kept unless the
 * status changed; the list is returned unchanged (same array) when nothing differs, so callers
 * can skip a status write by comparing references.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  now: Date = new Date(),
): Condition[] {
  const list = conditions ?? [];
  const old = findCondition(list, input.type);
  if (old && sameCondition(old, input)) return list as Condition[];
  const lastTransitionTime = old && old.status === input.status ? old.lastTransitionTime : toKubeTime(now);
  const next: Condition = { ...input, lastTransitionTime };
  if (next.observedGeneration === undefined) delete next.observedGeneration;
  return old ? list.map(c => (c.type === input.type ? next : c)) : [...list, next];
}

export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  const list = conditions ?? [];
  return list.some(c => c.type === type) ? list.filter(c => c.type !== type) : (list as Condition[]);
}

function sameCondition(old: Condition, input: ConditionInput): boolean {
  return (
    old.status === input.status &&
    old.reason === input.reason &&
    old.message === input.message &&
    old.observedGeneration === input.observedGeneration
  );
}

/** Kubernetes serialises times to whole seconds (RFC 3339, UTC). */
export function toKubeTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
