// In-place restore with the operator crashing at every step (sandbox, real etcd 3.5.16, s3rver):
// the functions die (SIGKILL, no answer) right after each side effect of the restore: each step
// write (accepted/Stopping, Restoring, Done), each old member's deletion, the finalizer removal of a
// discarded member, the new seed's claim and creation, the new cluster ID's recording and the seed
// Pod's creation. The sandbox starts each function again and redelivers; the restore must still end
// as one without crashes does: keys of the snapshot on every member, later keys gone, a new cluster
// ID, 3/3 converged, the request done once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { RESTORE_CRASH_POINTS, type CrashPoint } from '../../shared/runtime/crash.ts';
import { CrashPoints } from '../support/crash-points.ts';
import { beforeCreation, converged, mark } from '../support/converge.ts';
import { s3rverSecret, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';
import { clusterIdOf, podIPs, type Cluster } from './restore-support.ts';

const NS = 'default';
const NAME = 'crashy';
const BUCKET = 'etcd-backups';
const SECRET = 'restore-s3';

/** How often each point fires: every step write and every old member's deletion; the rest once. */
const ARMED: [CrashPoint, number][] = [
  ['cluster:restore-step-written', 3],
  ['cluster:restore-member-deleted', 3],
  ['finalize:finalizer-removed', 1],
  ['cluster:claimed', 1],
  ['cluster:member-created', 1],
  ['cluster:cluster-id-latched', 1],
  ['member:pod-created', 1],
];

type Snapshot = EtcdSnapshot & KubeObject;

describe(
  'in-place restore: a crash after every side effect converges (etcd 3.5.16)',
  { timeout: 1_200_000 },
  () => {
    let sandbox: FullSandbox;
    let s3: TestS3;
    let kube: KubeObjects;
    let crashPoints: CrashPoints;
    const clusterRef = () => ({ kube, namespace: NS, name: NAME });
    const ref = (kind: string, name: string) => ({ apiVersion: API_VERSION, kind, namespace: NS, name });
    const getCluster = async (): Promise<Cluster> => {
      const read = await kube.get<Cluster>(ref('EtcdCluster', NAME));
      assert.equal(read.kind, 'found');
      return read.object;
    };
    const describeWorld = async () =>
      `cluster: ${JSON.stringify((await getCluster()).status)}\nrestarts: ${JSON.stringify(sandbox.restarts())}\n${sandbox.output().slice(-4000)}`;

    async function put(ip: string, prefix: string, count: number): Promise<void> {
      const client = new Etcd3({ hosts: `http://${ip}:2379` });
      try {
        const ops = [];
        for (let k = 0; k < count; k++) ops.push(client.put(`${prefix}${k}`).value(`v${k}`));
        await client
          .if(`${prefix}0`, 'Create', '>', -1)
          .then(...ops)
          .commit();
      } finally {
        client.close();
      }
    }

    before(async () => {
      crashPoints = CrashPoints.inTempDir('etcdfn-crash-restore-', () => sandbox.restarts());
      s3 = await startS3rver([BUCKET], undefined, '127.0.0.2');
      sandbox = await startFullSandbox({
        tickSeconds: 5,
        startTimeoutMs: 300_000,
        crashDir: crashPoints.dir,
      });
      kube = new KubeObjects(sandbox.kc);
      assert.equal((await kube.create(s3rverSecret(SECRET, NS))).kind, 'created');
    });
    after(async () => {
      await sandbox?.stop();
      await s3?.stop();
      crashPoints?.remove();
    });

    it('a 3-member cluster restored in place while crashing at every step ends restored, once', async t => {
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdCluster',
        metadata: { name: NAME, namespace: NS },
        spec: { replicas: 3, version: '3.5.16' },
      });
      assert.equal(created.kind, 'created');
      await converged(clusterRef(), {
        replicas: 3,
        since: beforeCreation(),
        timeoutMs: 400_000,
        describe: describeWorld,
      });
      const [ip] = await podIPs(kube, NS, NAME);
      assert.ok(ip);
      await put(ip, 'a/', 100);
      const oldId = await clusterIdOf(ip);
      assert.equal(
        (
          await kube.create({
            apiVersion: API_VERSION,
            kind: 'EtcdSnapshot',
            metadata: { name: 'snap', namespace: NS },
            spec: {
              clusterRef: { name: NAME },
              destination: {
                s3: {
                  endpoint: s3.endpoint,
                  bucket: BUCKET,
                  key: 'crash/',
                  credentialsSecretRef: { name: SECRET },
                },
              },
            },
          })
        ).kind,
        'created',
      );
      await waitFor(
        'EtcdSnapshot snap Complete',
        async () => {
          const read = await kube.get<Snapshot>(ref('EtcdSnapshot', 'snap'));
          return read.kind === 'found' && read.object.status?.phase === 'Complete';
        },
        { timeoutMs: 180_000, intervalMs: 500 },
      );
      await put(ip, 'b/', 50);

      // Arm every point; re-arm the repeating ones each time one fires.
      const { fired, left, stop: stopRearming } = crashPoints.rearming(ARMED);
      const restartsBefore = crashPoints.totalRestarts();
      const since = await mark(clusterRef());
      const requestID = 'r-crash-1';
      const patched = await kube.mergePatch(ref('EtcdCluster', NAME), {
        spec: { inPlaceRestore: { requestID, snapshotRef: { name: 'snap' } } },
      });
      assert.equal(patched.kind, 'written');
      try {
        await converged(clusterRef(), {
          replicas: 3,
          since,
          timeoutMs: 900_000,
          describe: async () => `fired: ${JSON.stringify([...fired])}\n${await describeWorld()}`,
          also: async c => {
            const record = c.status?.inPlaceRestore;
            if (record?.requestID !== requestID) return 'request not recorded yet';
            if (record.step !== 'Done') return `step ${record.step}`;
            const pending = [...left].filter(([, n]) => n > 0).map(([p, n]) => `${p}×${n}`);
            return pending.length > 0 ? `crash points not passed yet: ${pending.join(', ')}` : undefined;
          },
        });
      } finally {
        await stopRearming();
      }
      t.diagnostic(
        `crashes: ${JSON.stringify(Object.fromEntries(fired))}; restarts ${JSON.stringify(sandbox.restarts())}`,
      );
      for (const [point, count] of ARMED) assert.equal(fired.get(point), count, `${point} fired ${count}×`);
      // Every crash killed a function; the last one (after the Done write) may still be restarting.
      const total = ARMED.reduce((sum, [, n]) => sum + n, 0);
      const restarts = () => crashPoints.totalRestarts() - restartsBefore;
      await waitFor(`${total} function restarts, one per crash`, async () => restarts() >= total, {
        timeoutMs: 120_000,
        intervalMs: 250,
      });
      assert.deepEqual(
        [...RESTORE_CRASH_POINTS].filter(p => !fired.has(p)),
        [],
        'every in-place restore crash point was crashed through',
      );

      const cluster = await getCluster();
      const ips = await podIPs(kube, NS, NAME);
      assert.equal(ips.length, 3);
      const newId = await clusterIdOf(ips[0]);
      assert.notEqual(newId, oldId);
      for (const memberIp of ips) {
        const client = new Etcd3({ hosts: `http://${memberIp}:2379` });
        try {
          assert.equal(await client.getAll().prefix('a/').serializable(true).count(), 100, memberIp);
          assert.equal(await client.getAll().prefix('b/').serializable(true).count(), 0, memberIp);
        } finally {
          client.close();
        }
        assert.equal(await clusterIdOf(memberIp), newId);
      }
      assert.deepEqual(
        (cluster.status?.members ?? []).map(m => m.name).sort(),
        [`${NAME}-3`, `${NAME}-4`, `${NAME}-5`],
        'exactly one new member per slot: no duplicate seed, no lost member',
      );
      const members = await kube.list<KubeObject>(API_VERSION, 'EtcdMember', NS, `etcdfn.io/cluster=${NAME}`);
      assert.deepEqual(members.map(m => m.metadata.name).sort(), [`${NAME}-3`, `${NAME}-4`, `${NAME}-5`]);
      assert.equal(cluster.status?.conditions?.find(c => c.type === 'Restored')?.status, 'True');
    });
  },
);
