// status.certificates and the TLSCertificates condition, from what the certificate Secrets hold.
// Pure: shared/reconcile/certificates.ts reads the Secrets.
import type { ClusterCertificateStatus, EtcdClusterStatus } from '../../api/etcd-cluster.ts';
import { removeCondition, setCondition, toKubeTime } from '../../conditions.ts';
import { renewalTime } from './auto-tls.ts';
import type { ObservedCertificateSecret } from './types.ts';

export const CERTIFICATES_CONDITION = 'TLSCertificates';

export function certificateStatuses(observed: ObservedCertificateSecret[]): ClusterCertificateStatus[] {
  return observed.map(o => {
    const entry: ClusterCertificateStatus = { secret: o.secret, role: o.role };
    if (o.facts) {
      entry.notAfter = toKubeTime(o.facts.notAfter);
      if (o.issuedByOperator) entry.renewAfter = toKubeTime(renewalTime(o.facts));
    }
    return entry;
  });
}

/**
 * The status with the certificates written in; `problem` (what is wrong and what to do) sets the
 * TLSCertificates condition to False, and its absence removes the condition.
 */
export function withCertificates(
  status: EtcdClusterStatus,
  observed: ObservedCertificateSecret[],
  problem: { reason: string; message: string } | undefined,
  now: Date,
): EtcdClusterStatus {
  const next: EtcdClusterStatus = { ...status };
  if (observed.length) next.certificates = certificateStatuses(observed);
  else delete next.certificates;
  const conditions = problem
    ? setCondition(
        status.conditions,
        {
          type: CERTIFICATES_CONDITION,
          status: 'False',
          reason: problem.reason,
          message: problem.message,
        },
        now,
      )
    : removeCondition(status.conditions, CERTIFICATES_CONDITION);
  if (conditions.length) next.conditions = conditions;
  else delete next.conditions;
  return next;
}
