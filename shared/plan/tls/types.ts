// What reconcile-cluster observes of a cluster's certificates before it plans: each certificate
// Secret's contents and, when the operator cannot issue, why. The plan turns it into
// status.certificates and the TLSCertificates condition (./certificate-status.ts).
import type { ClusterCertificateStatus } from '../../api/etcd-cluster.ts';
import type { CertificateFacts } from '../../tls/read.ts';

export interface ObservedCertificateSecret {
  secret: string;
  role: ClusterCertificateStatus['role'];
  /** The operator issues it (auto TLS), so it has a renewal time. */
  issuedByOperator: boolean;
  facts?: CertificateFacts;
}

export interface CertificateObservation {
  observed: ObservedCertificateSecret[];
  /** What is wrong and what to do, when the operator cannot issue (the TLSCertificates condition). */
  problem?: { reason: string; message: string };
}
