// reconcile-cluster's auth run (shared/reconcile/cluster-auth-run.ts over cluster-auth.ts) against
// one real etcd 3.5 member on loopback, with the Kubernetes side an in-memory fake
// (test/support/store-kube.ts): the steps one run takes and says (create the root Secret, turn auth
// on, record the applied copy; rotate the password), what etcd then accepts, the Secrets written,
// status.authEnabled's value, and what a failed or stuck step answers. No API server: etcd's logins
// are what these tests look at (the whole flow on a real API server: reconcile-auth.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Secret } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import { probeAuth } from '../../shared/etcd/auth.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { runAuth } from '../../shared/reconcile/cluster-auth-run.ts';
import { observeAuth } from '../../shared/reconcile/cluster-auth.ts';
import { etcdCluster } from '../support/etcd-objects.ts';
import { EtcdTestCluster } from '../support/etcd-process.ts';
import { StoreKube, storeContext } from '../support/store-kube.ts';

type Secret = V1Secret & KubeObject;
const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString();
const rootSecret = (password: string, type = 'kubernetes.io/basic-auth'): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Secret',
    type,
    metadata: { name: 'demo-root', namespace: 'prod' },
    data: { username: b64('root'), password: b64(password) },
  }) as KubeObject;
const writes = (kube: StoreKube) => kube.lines.filter(l => !l.startsWith('get '));

describe('auth run against real etcd 3.5', { timeout: 120_000 }, () => {
  let etcd: EtcdTestCluster;
  let kube: StoreKube;
  let cluster: EtcdCluster;
  const run = (c: EtcdCluster = cluster) => runAuth(storeContext(kube, {}), c, etcd.endpoints);
  const withStatus = (authEnabled: boolean): EtcdCluster => ({
    ...cluster,
    status: { ...cluster.status, authEnabled },
  });

  before(async () => {
    etcd = await EtcdTestCluster.start({ minor: '3.5', size: 1 });
    cluster = etcdCluster({
      spec: { auth: { enabled: true, rootCredentialsSecretRef: { name: 'demo-root' } } },
    });
  });
  after(async () => {
    await etcd?.cleanup();
  });

  it('nothing to do unless spec.auth.enabled', async () => {
    kube = new StoreKube();
    assert.equal(await run(etcdCluster()), undefined);
    assert.equal(await run(etcdCluster({ spec: { auth: { enabled: false } } })), undefined);
    assert.deepEqual(kube.calls, []);
  });

  it('a failed step answers failed, naming the step, with status.authEnabled as recorded', async () => {
    kube = new StoreKube();
    kube.script('create', { kind: 'invalid', message: 'Secret demo-root: data too long' });
    assert.deepEqual(await run(), {
      kind: 'failed',
      authEnabled: false,
      reason: 'auth: create-secret: Secret demo-root: data too long',
    });
    assert.equal(
      (
        await (async () => {
          kube = new StoreKube();
          kube.script('create', { kind: 'invalid', message: 'x' });
          return run(withStatus(true));
        })()
      )?.kind,
      'ok',
      'recorded on and the Secret gone: stuck, not create-secret',
    );
  });

  it('a Secret of the wrong type is stuck on the user: a Warning, and etcd is left as it is', async () => {
    kube = new StoreKube([rootSecret('pw', 'Opaque')]);
    const result = await run();
    const message = 'Secret demo-root is of type Opaque, not kubernetes.io/basic-auth; fix the Secret';
    assert.deepEqual(result, {
      kind: 'ok',
      authEnabled: false,
      summary: `auth: in sync (${message})`,
      event: { type: 'Warning', reason: 'RootSecretInvalid', message },
    });
    assert.deepEqual(writes(kube), []);
  });

  it('first run: the root Secret generated, auth turned on in etcd, the applied copy recorded', async () => {
    kube = new StoreKube();
    const result = await run();
    assert.deepEqual(result, {
      kind: 'ok',
      authEnabled: true,
      summary: 'auth: create-secret → enable-auth → record-applied',
    });
    const desired = kube.stored<Secret>('Secret', 'prod', 'demo-root');
    const applied = kube.stored<Secret>('Secret', 'prod', 'demo-etcd-root-applied');
    const password = unb64(desired?.data?.password);
    assert.ok(password.length >= 16);
    assert.equal(unb64(applied?.data?.password), password);
    assert.equal((await probeAuth(etcd.endpoints, { username: 'root', password })).kind, 'enabled');
    assert.equal(
      (await probeAuth(etcd.endpoints, { username: 'root', password: 'wrong' })).kind,
      'auth-failed',
    );
    etcd.credentials = { username: 'root', password };

    // Once recorded, a run only reads: in sync, 0 writes.
    kube.calls = [];
    assert.deepEqual(await run(withStatus(true)), {
      kind: 'ok',
      authEnabled: true,
      summary: 'auth: in sync',
    });
    assert.deepEqual(writes(kube), []);
    const seen = await observeAuth(withStatus(true), true, {
      kube: kube as never,
      endpoints: etcd.endpoints,
    });
    assert.deepEqual(seen.facts.loginDesired, 'enabled');
    assert.equal(
      seen.facts.loginApplied,
      undefined,
      'the applied password is tried only when the desired one is refused',
    );
  });

  it('a new password in the Secret: root’s password changed in etcd, then the applied copy rewritten', async () => {
    const desired = kube.stored<Secret>('Secret', 'prod', 'demo-root');
    if (desired?.data) desired.data.password = b64('the-new-password-1');
    kube.calls = [];
    const result = await run(withStatus(true));
    assert.deepEqual(result, {
      kind: 'ok',
      authEnabled: true,
      summary: 'auth: rotate-password → record-applied',
    });
    assert.deepEqual(writes(kube), ['replace Secret demo-etcd-root-applied']);
    assert.equal(
      unb64(kube.stored<Secret>('Secret', 'prod', 'demo-etcd-root-applied')?.data?.password),
      'the-new-password-1',
    );
    const login = await probeAuth(etcd.endpoints, { username: 'root', password: 'the-new-password-1' });
    assert.equal(login.kind, 'enabled');
    etcd.credentials = { username: 'root', password: 'the-new-password-1' };
  });

  it('the applied copy cannot be written: failed, saying why; etcd already has the new password', async () => {
    const desired = kube.stored<Secret>('Secret', 'prod', 'demo-root');
    if (desired?.data) desired.data.password = b64('third-password-33');
    kube.script('replace', { kind: 'conflict', message: 'modified' });
    const result = await run(withStatus(true));
    assert.deepEqual(result, {
      kind: 'failed',
      authEnabled: true,
      reason: 'auth: record-applied: writing the applied copy: conflict',
    });
    assert.equal(
      (await probeAuth(etcd.endpoints, { username: 'root', password: 'third-password-33' })).kind,
      'enabled',
    );
    etcd.credentials = { username: 'root', password: 'third-password-33' };
    // The next run sees etcd accept the desired password and records it.
    assert.deepEqual(await run(withStatus(true)), {
      kind: 'ok',
      authEnabled: true,
      summary: 'auth: record-applied',
    });
  });

  it('the applied copy missing while etcd has the password: created anew; one that appears meanwhile is said', async () => {
    kube.objects.delete('Secret/prod/demo-etcd-root-applied');
    kube.script('create', { kind: 'already-exists' });
    assert.deepEqual(await run(withStatus(true)), {
      kind: 'failed',
      authEnabled: true,
      reason: 'auth: record-applied: the applied copy appeared meanwhile; deciding again',
    });
    kube.script('create', { kind: 'invalid', message: 'bad Secret' });
    assert.deepEqual(await run(withStatus(true)), {
      kind: 'failed',
      authEnabled: true,
      reason: 'auth: record-applied: bad Secret',
    });
    assert.deepEqual(await run(withStatus(true)), {
      kind: 'ok',
      authEnabled: true,
      summary: 'auth: record-applied',
    });
    assert.ok(kube.stored('Secret', 'prod', 'demo-etcd-root-applied'));
  });

  it('the root Secret deleted once auth is on: stuck (RootSecretMissing); etcd keeps its password', async () => {
    kube.objects.delete('Secret/prod/demo-root');
    const result = await run(withStatus(true));
    assert.equal(result?.kind, 'ok');
    assert.equal(result?.kind === 'ok' && result.event?.reason, 'RootSecretMissing');
    assert.equal(result?.kind === 'ok' && result.authEnabled, true);
    assert.equal(
      (await probeAuth(etcd.endpoints, { username: 'root', password: 'third-password-33' })).kind,
      'enabled',
    );
  });
});
