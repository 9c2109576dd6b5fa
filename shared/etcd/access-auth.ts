// The auth half of a cluster's access (shared/etcd/access.ts): which Secret holds the operator's
// etcd credentials, and the credentials from its contents.
// AUTH HELPER: fill these two in (spec.auth is still refused by the CRD, so today no cluster gets here).
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import type { EtcdAuthOptions } from './connection.ts';
import type { AccessProblem, SecretData } from './access.ts';

/** The Secret to read for credentials; undefined when the cluster does not use auth. */
export function authSecretName(cluster: EtcdCluster): string | undefined {
  void cluster;
  return undefined;
}

/** Credentials from that Secret's data (read fresh for each event). */
export function authAccess(
  cluster: EtcdCluster,
  read: (name: string) => SecretData,
): { auth?: EtcdAuthOptions } | { problem: AccessProblem } {
  void cluster;
  void read;
  return {};
}
