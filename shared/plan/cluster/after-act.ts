// What only the step's own I/O can tell, and the status it leaves: reconcile-cluster calls these
// with the outcome and writes what they return, so the status is still shaped here, never edited in
// the adapter. They cannot be planned with the step: auth talks to etcd, and whether a step
// finished is known only once it ran.
import type { EtcdClusterStatus } from '../../api/etcd-cluster.ts';
import { setCondition } from '../../conditions.ts';
import type { ClusterPlan } from './step.ts';

/**
 * Whether the auth steps run after this step: only once the cluster plan has nothing left to do
 * (formed, every member ready, Available). Auth is decided from etcd's answers to logins
 * (./auth.ts), which a cluster still forming or changing cannot give, so it comes after the plan.
 */
export function authDue(plan: ClusterPlan): boolean {
  const available = plan.status.conditions?.some(c => c.type === 'Available' && c.status === 'True');
  return plan.action.kind === 'none' && available === true;
}

export interface ActOutcome {
  /** status.authEnabled as the auth run left it; unset when auth did not run. */
  authEnabled?: boolean;
  /** Why the step (or the auth run) is to be retried; unset when it finished. */
  retrying?: string;
}

/** The planned status once the step ran: auth's record, and a step that must be retried says why. */
export function statusAfterAct(
  planned: EtcdClusterStatus,
  outcome: ActOutcome,
  now: Date,
): EtcdClusterStatus {
  const status =
    outcome.authEnabled === undefined ? planned : { ...planned, authEnabled: outcome.authEnabled };
  return outcome.retrying === undefined ? status : withRetrying(status, outcome.retrying, now);
}

/** A step that could not finish says so in Progressing, with what the operator is waiting for. */
export function withRetrying(status: EtcdClusterStatus, reason: string, now: Date): EtcdClusterStatus {
  const progressing = status.conditions?.find(c => c.type === 'Progressing');
  if (!progressing) return status;
  const conditions = setCondition(
    status.conditions,
    { ...progressing, message: `${progressing.message}; retrying: ${reason}` },
    now,
  );
  return { ...status, conditions };
}
