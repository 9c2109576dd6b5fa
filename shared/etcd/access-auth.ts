// The auth half of a cluster's access (shared/etcd/access.ts): which Secret holds the operator's
// etcd credentials, and the credentials from its contents. The logic lives in root-access.ts:
// no credentials until status.authEnabled, then root with the operator's applied copy of the
// password etcd has (spec.auth is still refused by the CRD, so today no cluster gets there).
export { rootAuthAccess as authAccess, rootAuthSecretName as authSecretName } from './root-access.ts';
