// The auth concern end to end below reconcile-cluster: the sandbox API server holds the Secrets,
// real etcd (every supported minor) is turned to auth; each pass observes afresh, as a new event
// would, so stopping after any step and starting again is what a crash does.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import type { V1Secret } from '@kubernetes/client-node';
import { API_VERSION } from '../../shared/api/group.ts';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import { probeAuth } from '../../shared/etcd/index.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { reconcileAuth, type AuthWorld } from '../../shared/reconcile/cluster-auth.ts';
import { ETCD_MINORS } from '../support/etcd-binaries.ts';
import { EtcdTestCluster } from '../support/etcd-process.ts';
import { startApiServer } from '../support/api-server.ts';

const secretRef = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', namespace: 'default', name });
const passwordOf = (s: V1Secret | undefined) => Buffer.from(s?.data?.password ?? '', 'base64').toString();

for (const minor of ETCD_MINORS) {
  describe(`auth reconcile against etcd ${minor}`, { timeout: 180_000 }, () => {
    let server: Awaited<ReturnType<typeof startApiServer>>;
    let kube: KubeObjects;
    let etcd: EtcdTestCluster;
    let cluster: EtcdCluster;
    let world: AuthWorld;

    /** Runs passes until the plan says none (or `stopAfter` ran); returns the steps taken. */
    async function drive(stopAfter?: string): Promise<string[]> {
      const steps: string[] = [];
      for (let i = 0; i < 10; i++) {
        const outcome = await reconcileAuth(cluster, true, world);
        assert.equal(outcome.kind, 'done', JSON.stringify(outcome));
        cluster = { ...cluster, status: { ...cluster.status, authEnabled: outcome.authEnabled } };
        if (outcome.step.kind === 'none') return steps;
        steps.push(outcome.step.kind);
        if (outcome.step.kind === stopAfter) return steps;
      }
      assert.fail(`no rest after ${steps.join(', ')}`);
    }

    before(async () => {
      server = await startApiServer();
      kube = new KubeObjects(server.kc);
      // The API server refuses spec.auth for now: store the cluster without it (for its uid).
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdCluster',
        metadata: { name: 'db', namespace: 'default' },
        spec: { version: '3.5.16' },
      } as KubeObject);
      assert.equal(created.kind, 'created');
      const stored = (created as unknown as { object: EtcdCluster }).object;
      cluster = {
        ...stored,
        spec: { ...stored.spec, auth: { enabled: true, rootCredentialsSecretRef: { name: 'db-root' } } },
      };
      etcd = await EtcdTestCluster.start({ minor, size: 3 });
      world = { kube, endpoints: etcd.endpoints };
    });

    after(async () => {
      await etcd?.cleanup();
      await server?.close();
    });

    it('generates the Secret, turns auth on and records it, in that order', async () => {
      assert.deepEqual(await drive(), ['create-secret', 'enable-auth', 'record-applied']);
      assert.equal(cluster.status?.authEnabled, true);
      const secret = await kube.find<V1Secret & KubeObject>(secretRef('db-root'));
      assert.equal(secret?.type, 'kubernetes.io/basic-auth');
      assert.deepEqual(
        secret?.metadata.ownerReferences?.map(r => r.uid),
        [cluster.metadata.uid],
      );
      const password = passwordOf(secret);
      assert.ok(password.length >= 40);
      const applied = await kube.find<V1Secret & KubeObject>(secretRef('db-etcd-root-applied'));
      assert.equal(passwordOf(applied), password);

      const anonymous = new Etcd3({ hosts: etcd.endpoints });
      try {
        await assert.rejects(anonymous.put('k').value('v').exec(), /user name is empty|permission denied/i);
      } finally {
        anonymous.close();
      }
      assert.equal((await probeAuth(etcd.endpoints, { username: 'root', password })).kind, 'enabled');
    });

    it('rotates the password the user puts in the Secret, also when stopped right after the change', async () => {
      const secret = (await kube.find<V1Secret & KubeObject>(secretRef('db-root')))!;
      const old = passwordOf(secret);
      const next = 'rotated-password-1';
      const written = await kube.replace({
        ...secret,
        data: { ...secret.data, password: Buffer.from(next).toString('base64') },
      });
      assert.equal(written.kind, 'written');

      // The change reaches etcd, then the operator "crashes" before recording it.
      assert.deepEqual(await drive('rotate-password'), ['rotate-password']);
      assert.equal((await probeAuth(etcd.endpoints, { username: 'root', password: next })).kind, 'enabled');
      assert.equal(
        (await probeAuth(etcd.endpoints, { username: 'root', password: old })).kind,
        'auth-failed',
      );
      // A fresh start: etcd already has the new password, so it is only recorded.
      assert.deepEqual(await drive(), ['record-applied']);
      const applied = await kube.find<V1Secret & KubeObject>(secretRef('db-etcd-root-applied'));
      assert.equal(passwordOf(applied), next);
      assert.deepEqual(await drive(), []);
    });
  });
}
