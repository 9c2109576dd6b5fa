// reconcile-member's part of a ForceNewCluster recovery (shared/plan/recovery/force-new-cluster.ts
// decides it): the member's Pod must start etcd with --force-new-cluster exactly while
// spec.forceNewCluster is set, and never after. A Pod's command cannot change, so a Pod whose flag
// differs from the spec is replaced (by uid): once to start with the flag, once more to drop it as
// soon as reconcile-cluster has seen the forced start and unset the field. A Pod left with the flag
// would force a new cluster again at its next restart, on data that has moved on (members added
// since would be thrown out).
import type { V1Pod } from '@kubernetes/client-node';
import { FORCE_NEW_CLUSTER_FLAG } from '../../builders/etcd-flags.ts';
import { ETCD_CONTAINER } from '../../builders/pod.ts';
import { notReady, plan, type MemberAction, type MemberPlan, type MemberState } from './step.ts';

/** Whether the Pod's etcd container starts with --force-new-cluster. */
export function podForcesNewCluster(pod: V1Pod): boolean {
  const etcd = pod.spec?.containers.find(c => c.name === ETCD_CONTAINER);
  return [...(etcd?.command ?? []), ...(etcd?.args ?? [])].includes(FORCE_NEW_CLUSTER_FLAG);
}

/** The Pod replacement that brings the flag in line with the spec, or undefined when it is. */
export function planForcedStart(state: MemberState, pod: V1Pod): MemberPlan | undefined {
  const { member } = state;
  const wanted = member.spec.forceNewCluster === true;
  if (podForcesNewCluster(pod) === wanted) return undefined;
  const name = member.metadata.name ?? '';
  const message = wanted
    ? `quorum-loss recovery: restarting ${name} alone with ${FORCE_NEW_CLUSTER_FLAG} on its data, keeping its member ID`
    : `quorum-loss recovery: ${name} started as a one-member cluster; restarting it without ${FORCE_NEW_CLUSTER_FLAG}`;
  const action: MemberAction = { kind: 'delete-pod', name, uid: pod.metadata?.uid ?? '', reason: message };
  return plan(state, action, { pod, ready: notReady(wanted ? 'ForcingNewCluster' : 'Restarting', message) }, [
    {
      type: wanted ? 'Warning' : 'Normal',
      reason: wanted ? 'ForcingNewCluster' : 'RestartingUnforced',
      message,
    },
  ]);
}
