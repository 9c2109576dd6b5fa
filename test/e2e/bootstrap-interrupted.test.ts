// A static bootstrap interrupted midway ends as one healthy cluster (sandbox, real etcd 3.5.16):
// - the operator killed after creating one member of three and after creating a Pod, and the one
//   member that started killed (SIGKILL) before the cluster formed (the other two held back by the
//   kubelet's delayed start): the same attempt completes, as the same three members;
// - a bootstrap that cannot form by its deadline (two of three members never start) is given up and
//   retried as a new attempt, through an operator crash while the old members are being deleted:
//   new members under a new token, the old ones and their PVCs gone, the retry reported.
// Each ends with one cluster ID on every member, 3/3 Ready, and a put readable through every member.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import type { CrashPoint } from '../../shared/runtime/crash.ts';
import { CrashPoints } from '../support/crash-points.ts';
import { beforeCreation, converged, mark, type Cluster } from '../support/converge.ts';
import { notOneCluster } from '../support/one-cluster.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'default';
const TIMEOUT = 180_000;
type Member = EtcdMember & KubeObject;
interface EventLike extends KubeObject {
  reason?: string;
  type?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string };
}

describe(
  'an interrupted static bootstrap ends as one healthy cluster (etcd 3.5.16)',
  { timeout: 900_000 },
  () => {
    let sandbox: FullSandbox;
    let kube: KubeObjects;
    let crashPoints: CrashPoints;

    before(async () => {
      crashPoints = CrashPoints.inTempDir('etcdfn-bootstrap-interrupted-', () => sandbox.restarts());
      sandbox = await startFullSandbox({ tickSeconds: 5, crashDir: crashPoints.dir });
      kube = new KubeObjects(sandbox.kc);
    });
    after(async () => {
      await sandbox?.stop();
      crashPoints?.remove();
    });

    const ref = (name: string) => ({ apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name });
    const read = async (name: string): Promise<Cluster> => {
      const got = await kube.get<Cluster>(ref(name));
      assert.equal(got.kind, 'found');
      return (got as { object: Cluster }).object;
    };
    const members = (name: string) =>
      kube.list<Member>(API_VERSION, 'EtcdMember', NS, `etcdfn.io/cluster=${name}`);
    const describeWorld = (name: string) => async () => {
      const c = await read(name).catch(() => undefined);
      const m = await members(name).catch(() => []);
      let log = '';
      try {
        log = readFileSync(join(sandbox.dir, 'logs', 'functions.log'), 'utf8').slice(-4000);
      } catch {
        // no log yet
      }
      return [
        `status: ${JSON.stringify(c?.status)}`,
        `members: ${m.map(x => `${x.metadata.name}${x.metadata.deletionTimestamp ? '(deleting)' : ''}`).join(', ')}`,
        `restarts: ${JSON.stringify(sandbox.restarts())}`,
        `functions.log (tail):\n${log}`,
      ].join('\n');
    };
    /** Arms `point` now; the function returned waits for its crash. */
    const arm = (point: CrashPoint) => {
      const armed = crashPoints.arm(point);
      return () => armed.crashed({ timeoutMs: TIMEOUT });
    };
    const create = async (name: string, progressDeadlineSeconds?: number) => {
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdCluster',
        metadata: { name, namespace: NS },
        spec: {
          replicas: 3,
          version: '3.5.16',
          storage: { size: '1Gi', medium: '' },
          ...(progressDeadlineSeconds && { progressDeadlineSeconds }),
        },
      });
      assert.equal(created.kind, 'created');
    };
    const oneCluster = async (name: string) => {
      const ok = await waitFor(
        `${name}: one etcd cluster, a put readable through every member`,
        async () => ((await notOneCluster(kube, NS, name)) === undefined ? 'ok' : undefined),
        { timeoutMs: 30_000, intervalMs: 500 },
        async () => (await notOneCluster(kube, NS, name)) ?? '',
      );
      assert.equal(ok, 'ok');
    };

    it('operator killed twice and the started member killed before the cluster formed: the same attempt completes', async () => {
      const name = 'intr';
      // Two of three held back, so no quorum can form until the first member has been killed.
      for (const pod of [`${name}-1`, `${name}-2`])
        await sandbox.faults.delayStart({ namespace: NS, pod, seconds: 30 });
      const crashes = [arm('cluster:member-created'), arm('member:pod-created')];
      await create(name);
      await Promise.all(crashes.map(crashed => crashed()));
      const running = await waitFor(
        `${name}-0's etcd running alone`,
        async () => {
          const pod = (await sandbox.faults.state()).pods.find(p => p.name === `${name}-0` && !p.deleting);
          return pod?.containers.some(c => c.pid !== undefined) ? pod : undefined;
        },
        { timeoutMs: TIMEOUT },
        describeWorld(name),
      );
      assert.ok(running);
      assert.equal((await read(name)).status?.clusterID, undefined, 'the cluster has not formed yet');
      const since = await mark({ kube, namespace: NS, name });
      const killed = await sandbox.faults.kill({ namespace: NS, pod: `${name}-0` });
      assert.ok(killed.killed.length > 0, `${name}-0's etcd was killed`);

      const c = await converged(
        { kube, namespace: NS, name },
        { replicas: 3, since, restarted: [`${name}-0`], timeoutMs: TIMEOUT, describe: describeWorld(name) },
      );
      assert.equal(c.status?.nextMemberOrdinal, 3, 'one claim of three names');
      assert.deepEqual(
        (await members(name)).map(m => m.metadata.name).sort(),
        [0, 1, 2].map(i => `${name}-${i}`),
      );
      assert.equal(c.status?.bootstrapRetry, undefined, 'no retry was needed');
      await oneCluster(name);
      assert.equal((await kube.delete(ref(name))).kind, 'deleted');
    });

    it('a bootstrap that cannot form by its deadline is retried as a new attempt, through an operator crash', async () => {
      const name = 'again';
      // Two of the first attempt's three never start: no quorum, no cluster, until the deadline.
      for (const pod of [`${name}-1`, `${name}-2`])
        await sandbox.faults.delayStart({ namespace: NS, pod, seconds: 3600 });
      const crashed = arm('cluster:restore-member-deleted');
      await create(name, 15);
      await crashed();

      const c = await converged(
        { kube, namespace: NS, name },
        { replicas: 3, since: beforeCreation(), timeoutMs: TIMEOUT, describe: describeWorld(name) },
      );
      assert.equal(c.status?.bootstrapRetry?.attempt, 2);
      assert.equal(c.status?.bootstrapRetry?.discarding, undefined);
      assert.equal(c.status?.clusterToken, `${NS}-${name}-${c.metadata.uid}-attempt-2`);
      assert.deepEqual(
        (await members(name)).map(m => m.metadata.name).sort(),
        [3, 4, 5].map(i => `${name}-${i}`),
        'new members: the old names (and PVCs) are never reused',
      );
      const claims = (await kube.list('v1', 'PersistentVolumeClaim', NS, `etcdfn.io/cluster=${name}`))
        .map(p => p.metadata.name)
        .sort();
      assert.deepEqual(
        claims,
        [3, 4, 5].map(i => `data-${name}-${i}`),
        "the first attempt's data is gone",
      );
      const warned = (await kube.list<EventLike>('v1', 'Event', NS)).filter(
        e => e.involvedObject?.name === name && e.reason === 'BootstrapRetrying',
      );
      assert.ok(warned.length > 0, 'the retry was reported as a Warning Event');
      assert.match(warned[0]?.message ?? '', /bootstrap attempt 1 .* did not form a cluster within 15s/);
      await oneCluster(name);
    });
  },
);
