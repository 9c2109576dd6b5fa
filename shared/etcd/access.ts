// What the operator needs to dial one cluster's etcd: client TLS material and, when auth is on,
// credentials. Built from the cluster's Secrets, read fresh for every event (shared/runtime/cluster-etcd.ts),
// so a rotated certificate is used from the next event on. Pure: Secret contents in, access out.
import type { EtcdAuthOptions, EtcdTlsOptions } from './connection.ts';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import { tlsSecretNames, type TlsSecretNames } from '../tls/secret-names.ts';
import { authAccess, authSecretName } from './access-auth.ts';

/** The per-cluster part of the connection options; an empty object is plaintext without auth. */
export interface EtcdAccess {
  tls?: EtcdTlsOptions;
  auth?: EtcdAuthOptions;
}

/** One Secret's data, decoded; undefined when the Secret does not exist. */
export type SecretData = Readonly<Record<string, Buffer>> | undefined;

/** Why a cluster cannot be dialled: which Secret (and key) is wrong, and what to do about it. */
export interface AccessProblem {
  secret: string;
  key?: string;
  message: string;
}

export type AccessResolution =
  { kind: 'ok'; access: EtcdAccess } | { kind: 'unresolved'; problem: AccessProblem };

export const CA_KEY = 'ca.crt';
export const CERT_KEY = 'tls.crt';
export const KEY_KEY = 'tls.key';

/**
 * Client TLS from the server Secret's ca.crt (the CA that signed etcd's serving certificate) and,
 * for mTLS, the operator's client certificate (tls.crt/tls.key). Both cert-manager's layout and
 * kubernetes.io/tls Secrets with an added ca.crt have these keys.
 */
export function tlsAccess(
  names: TlsSecretNames,
  read: (name: string) => SecretData,
): { tls?: EtcdTlsOptions } | { problem: AccessProblem } {
  if (!names.clientServer) return {};
  const server = read(names.clientServer);
  const ca = need(names.clientServer, server, CA_KEY, 'the CA that signed the serving certificate');
  if ('problem' in ca) return ca;
  if (!names.operatorClient) return { tls: { ca: ca.value } };
  const client = read(names.operatorClient);
  const cert = need(names.operatorClient, client, CERT_KEY, "the operator's client certificate");
  if ('problem' in cert) return cert;
  const key = need(names.operatorClient, client, KEY_KEY, "the client certificate's private key");
  if ('problem' in key) return key;
  return { tls: { ca: ca.value, cert: cert.value, key: key.value } };
}

function need(
  secret: string,
  data: SecretData,
  key: string,
  what: string,
): { value: Buffer } | { problem: AccessProblem } {
  if (data === undefined) {
    return { problem: { secret, message: `Secret ${secret} not found: create it with ${key} (${what})` } };
  }
  const value = data[key];
  if (!value || value.length === 0) {
    return {
      problem: { secret, key, message: `Secret ${secret} has no ${key}: add ${what} under that key` },
    };
  }
  return { value };
}

/** Every Secret a cluster's access is built from (to read them all at once). */
export function accessSecretNames(cluster: EtcdCluster): string[] {
  const tls = tlsSecretNames(cluster);
  const names = [tls.clientServer, tls.operatorClient, authSecretName(cluster)];
  return [...new Set(names.filter((n): n is string => n !== undefined))];
}

/** The cluster's access from its Secrets' contents, or the first problem found. */
export function accessFor(cluster: EtcdCluster, read: (name: string) => SecretData): AccessResolution {
  const tls = tlsAccess(tlsSecretNames(cluster), read);
  if ('problem' in tls) return { kind: 'unresolved', problem: tls.problem };
  const auth = authAccess(cluster, read);
  if ('problem' in auth) return { kind: 'unresolved', problem: auth.problem };
  return { kind: 'ok', access: { ...tls, ...auth } };
}
