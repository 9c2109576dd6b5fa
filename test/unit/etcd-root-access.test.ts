// The auth half of a cluster's access (shared/etcd/root-access.ts): no credentials until
// status.authEnabled, then root with the applied copy's password; a missing or empty copy is a
// problem naming the Secret, never the password.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import { rootAuthAccess, rootAuthSecretName } from '../../shared/etcd/root-access.ts';
import { accessFor, accessSecretNames } from '../../shared/etcd/access.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

/** Cluster db in ns asking for auth; status.authEnabled as given (no status when undefined). */
const clusterWithAuth = (authEnabled?: boolean): EtcdCluster =>
  etcdCluster({
    metadata: { name: 'db', namespace: 'ns', uid: 'u' },
    spec: { replicas: undefined, auth: { enabled: true, rootCredentialsSecretRef: { name: 'db-root' } } },
    ...(authEnabled !== undefined && { status: { authEnabled } }),
  });

describe('root access', () => {
  it('uses no credentials while auth is not on yet', () => {
    assert.equal(rootAuthSecretName(clusterWithAuth()), undefined);
    assert.deepEqual(
      rootAuthAccess(clusterWithAuth(false), () => assert.fail('no Secret is read')),
      {},
    );
  });

  it("logs in as root with the applied copy's password once auth is on", () => {
    const read = (name: string) =>
      name === 'db-etcd-root-applied' ? { password: Buffer.from('p1') } : undefined;
    assert.equal(rootAuthSecretName(clusterWithAuth(true)), 'db-etcd-root-applied');
    assert.deepEqual(rootAuthAccess(clusterWithAuth(true), read), {
      auth: { username: 'root', password: 'p1' },
    });
  });

  it('names the missing or empty Secret and what to do, without any password', () => {
    const missing = rootAuthAccess(clusterWithAuth(true), () => undefined);
    assert.ok(
      'problem' in missing && /db-etcd-root-applied.*not found.*db-root/.test(missing.problem.message),
    );
    const empty = rootAuthAccess(clusterWithAuth(true), () => ({ password: Buffer.alloc(0) }));
    assert.ok('problem' in empty && empty.problem.key === 'password', JSON.stringify(empty));
  });

  it('reaches every etcd call through the access seam: the applied Secret is read and its password used', () => {
    assert.deepEqual(accessSecretNames(clusterWithAuth(true)), ['db-etcd-root-applied']);
    assert.deepEqual(accessSecretNames(clusterWithAuth(false)), []);
    const read = (name: string) =>
      name === 'db-etcd-root-applied' ? { password: Buffer.from('p2') } : undefined;
    assert.deepEqual(accessFor(clusterWithAuth(true), read), {
      kind: 'ok',
      access: { auth: { username: 'root', password: 'p2' } },
    });
    const unresolved = accessFor(clusterWithAuth(true), () => undefined);
    assert.equal(unresolved.kind, 'unresolved');
  });
});
