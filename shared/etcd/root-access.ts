// The auth half of a cluster's access, for the access seam (shared/etcd/access.ts on s/tls-access,
// whose access-auth.ts delegates here): once status.authEnabled is set, every etcd call logs in as
// root with the password etcd has, which is the operator's applied copy, not the user's Secret (that
// one may already hold the next password, before the rotation has happened).
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import type { EtcdAuthOptions } from './connection.ts';
import { appliedRootSecretName, ROOT_USER } from '../names.ts';

/** One Secret's data, decoded; undefined when the Secret does not exist (as the seam reads them). */
type SecretData = Readonly<Record<string, Buffer>> | undefined;

interface AccessProblem {
  secret: string;
  key?: string;
  message: string;
}

/** The Secret holding the credentials every etcd call uses; undefined while auth is off. */
export function rootAuthSecretName(cluster: EtcdCluster): string | undefined {
  if (cluster.status?.authEnabled !== true) return undefined;
  return appliedRootSecretName(cluster.metadata.name ?? '');
}

/** root's credentials from the applied copy; {} while auth is off (calls go without credentials). */
export function rootAuthAccess(
  cluster: EtcdCluster,
  read: (name: string) => SecretData,
): { auth?: EtcdAuthOptions } | { problem: AccessProblem } {
  const secret = rootAuthSecretName(cluster);
  if (secret === undefined) return {};
  const data = read(secret);
  const userSecret =
    cluster.spec.auth?.rootCredentialsSecretRef?.name ?? 'named by spec.auth.rootCredentialsSecretRef';
  if (data === undefined) {
    return {
      problem: {
        secret,
        message:
          `Secret ${secret} (etcdfn's copy of the root password etcd has) not found: recreate it as a ` +
          `kubernetes.io/basic-auth Secret holding that password, e.g. a copy of Secret ${userSecret} if it was not changed since`,
      },
    };
  }
  const password = data.password;
  if (!password || password.length === 0) {
    return {
      problem: {
        secret,
        key: 'password',
        message: `Secret ${secret} has no password: put the root password etcd has under that key`,
      },
    };
  }
  return { auth: { username: ROOT_USER, password: password.toString('utf8') } };
}
