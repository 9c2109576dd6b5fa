// reconcile-cluster's decision: given everything observed, the single next step toward the locked
// target, and the status that describes the world after deciding it. Pure: no I/O, no clock (the
// time is part of the state), so every branch is a row in a table test. The step is the first one
// an ordered list of concerns returns (./concerns.ts); the status then gains what holds whatever
// the step: the etcd 3.5 entries record, the defragmentation schedule and the certificates.
import type { EtcdClusterStatus } from '../../api/etcd-cluster.ts';
import { withDefragSchedule } from '../space/defrag-schedule-status.ts';
import { withCertificates } from '../tls/certificate-status.ts';
import { legacyRaftEntries } from '../upgrade/wal-guard.ts';
import { isComplete } from './complete.ts';
import { CLUSTER_CONCERNS, firstStep } from './concerns.ts';
import { isDeleting } from './members.ts';
import type { ClusterPlan } from './step.ts';
import type { ClusterState } from './types.ts';

export type { ClusterAction, ClusterEvent, ClusterPlan } from './step.ts';
export type { AddMemberOperation } from '../../api/cluster-operation.ts';
export { isComplete } from './complete.ts';

export function planCluster(state: ClusterState): ClusterPlan {
  const plan = withLegacyRaftEntries(state, firstStep(CLUSTER_CONCERNS, state).plan);
  const scheduled =
    state.cluster.status?.observed && !isDeleting(state.cluster)
      ? withDefragSchedule(
          state,
          plan,
          isComplete({ ...state, cluster: { ...state.cluster, status: plan.status } }),
        )
      : plan;
  return withCertificateStatus(state, scheduled);
}

/** status.legacyRaftEntries brought up to date (see ../upgrade/wal-guard.ts). */
function withLegacyRaftEntries(state: ClusterState, plan: ClusterPlan): ClusterPlan {
  if (isDeleting(state.cluster)) return plan;
  const formsNow = plan.status.clusterID !== undefined && !state.cluster.status?.clusterID;
  const record = legacyRaftEntries(state, formsNow);
  const { legacyRaftEntries: _, ...rest } = plan.status;
  return { ...plan, status: record ? { ...rest, legacyRaftEntries: record } : rest };
}

/**
 * status.certificates and the TLSCertificates condition, from the certificates observed before
 * planning (a cluster being deleted included). Untouched when none were observed and status has
 * none, or when nobody observed them (state.certificates unset).
 */
function withCertificateStatus(state: ClusterState, plan: ClusterPlan): ClusterPlan {
  const certificates = state.certificates;
  if (!certificates || (!certificates.observed.length && !state.cluster.status?.certificates)) return plan;
  const status: EtcdClusterStatus = withCertificates(
    plan.status,
    certificates.observed,
    certificates.problem,
    state.now,
  );
  return { ...plan, status };
}
