// Restore at first bootstrap with the operator crashing at every step (sandbox, real etcd 3.5.16,
// s3rver): a new 3-member EtcdCluster restores an S3 snapshot while its functions die (SIGKILL, no
// answer) right after each side effect of the path, a static bootstrap in which every member
// restores: the claim, every EtcdMember's and PVC's and Pod's creation, the claim's clearing and the
// new cluster ID's recording. The sandbox starts each function again and redelivers; the cluster
// must still end as one without crashes does: every
// key of the snapshot on every member, exactly 3 members (etcd's list equal to the EtcdMembers), a
// new cluster ID, and the restore done once: a key written afterwards survives the seed Pod's
// recreation and further reconciles.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { toHexId } from '../../shared/etcd/ids.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import type { CrashPoint } from '../../shared/runtime/crash.ts';
import { CrashPoints } from '../support/crash-points.ts';
import { beforeCreation, converged, mark } from '../support/converge.ts';
import { kubectl } from '../support/kubectl.ts';
import { s3rverSecret, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { openTickWindow } from '../support/ticks.ts';
import { waitFor } from '../support/wait.ts';
import {
  clusterIdOf,
  condition,
  keyName,
  keysOn,
  podIPs,
  writeKeys,
  type Cluster,
} from './restore-support.ts';

const NS = 'default';
const SOURCE = 'origin';
const NAME = 'restored';
const BUCKET = 'etcd-backups';
const SECRET = 'restore-s3';
const KEYS = 500;
const SAMPLE = keyName(321);

/**
 * How often each point fires on the way to 3 members restoring from S3, a static bootstrap: one
 * claim names all three, each member's object, PVC and Pod is created once, the claim is cleared
 * once and the new cluster ID latched once (no learner is added: every member restores). Each
 * point is armed again after it fires, up to its count. reconcile-cluster creates the members one
 * after another, but the three reconcile-member runs create their PVCs and Pods at the same time:
 * a crash kills every run in flight, and one that created its Pod between the crash and the
 * re-arming passes the point unharmed, so those points fire at least once and at most 3 times.
 */
const ARMED: [CrashPoint, { least: number; most: number }][] = [
  ['cluster:claimed', { least: 1, most: 1 }],
  ['cluster:member-created', { least: 3, most: 3 }],
  ['member:pvc-created', { least: 1, most: 3 }],
  ['member:pod-created', { least: 1, most: 3 }],
  ['cluster:operation-cleared', { least: 1, most: 1 }],
  ['cluster:cluster-id-latched', { least: 1, most: 1 }],
];

type Snapshot = EtcdSnapshot & KubeObject;
type Member = EtcdMember & KubeObject;

describe(
  'restore at first bootstrap: a crash after every side effect converges, restored once (etcd 3.5.16)',
  { timeout: 1_500_000 },
  () => {
    let sandbox: FullSandbox;
    let s3: TestS3;
    let kube: KubeObjects;
    let crashPoints: CrashPoints;
    let sourceId: string;
    let snapshotKey: string;
    let restoredId: string;
    const clusterRef = (name = NAME) => ({ kube, namespace: NS, name });
    const ref = (kind: string, name: string, apiVersion = API_VERSION) => ({
      apiVersion,
      kind,
      name,
      namespace: NS,
    });
    const store = (key: string) => ({
      endpoint: s3.endpoint,
      bucket: BUCKET,
      key,
      credentialsSecretRef: { name: SECRET },
    });
    const members = () => kube.list<Member>(API_VERSION, 'EtcdMember', NS, `etcdfn.io/cluster=${NAME}`);
    const describeWorld = async (name = NAME) => {
      const read = await kube.get<Cluster>(ref('EtcdCluster', name));
      const status = read.kind === 'found' ? JSON.stringify(read.object.status) : read.kind;
      return `cluster: ${status}\nrestarts: ${JSON.stringify(sandbox.restarts())}\n${sandbox.output().slice(-4000)}`;
    };
    async function create(kind: string, name: string, spec: Record<string, unknown>): Promise<void> {
      const object = { apiVersion: API_VERSION, kind, metadata: { name, namespace: NS }, spec };
      assert.equal((await kube.create(object)).kind, 'created');
    }

    before(async () => {
      crashPoints = CrashPoints.inTempDir('etcdfn-crash-bootstrap-restore-', () => sandbox.restarts());
      // Not 127.0.0.1: a Pod's 127.0.0.1 is the Pod itself on the sandbox (as on a real node).
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

    it(`${KEYS} keys in a 1-member cluster, snapshotted to S3, the cluster deleted`, async () => {
      await create('EtcdCluster', SOURCE, { replicas: 1, version: '3.5.16' });
      await converged(clusterRef(SOURCE), {
        replicas: 1,
        since: beforeCreation(),
        timeoutMs: 400_000,
        describe: () => describeWorld(SOURCE),
      });
      const [ip] = await podIPs(kube, NS, SOURCE);
      assert.ok(ip);
      await writeKeys(ip, KEYS);
      sourceId = await clusterIdOf(ip);
      await create('EtcdSnapshot', 'snap', {
        clusterRef: { name: SOURCE },
        destination: { s3: store('boot/') },
      });
      const done = await waitFor(
        'EtcdSnapshot snap Complete',
        async () => {
          const read = await kube.get<Snapshot>(ref('EtcdSnapshot', 'snap'));
          const s = read.kind === 'found' ? read.object : undefined;
          if (s?.status?.phase === 'Failed') throw new Error(`snapshot failed: ${JSON.stringify(s.status)}`);
          return s?.status?.phase === 'Complete' ? s : false;
        },
        { timeoutMs: 240_000, intervalMs: 500 },
      );
      snapshotKey = done.status!.artifact!.uri.replace(`s3://${BUCKET}/`, '');
      await kube.delete(ref('EtcdCluster', SOURCE));
      await waitFor(
        `EtcdCluster ${SOURCE} gone`,
        async () => (await kube.get(ref('EtcdCluster', SOURCE))).kind === 'not-found',
        { timeoutMs: 240_000, intervalMs: 500 },
      );
    });

    it('a 3-member cluster restoring from S3 while crashing at every step converges', async t => {
      // Arm every point; re-arm each one as it fires, until it has fired its count.
      const { fired, stop: stopRearming } = crashPoints.rearming(
        ARMED.map(([point, { most }]) => [point, most] as const),
      );
      const restartsBefore = crashPoints.totalRestarts();
      const source = { s3: store(snapshotKey) };
      await create('EtcdCluster', NAME, {
        replicas: 3,
        version: '3.5.16',
        bootstrap: { restore: { source } },
      });
      let cluster: Cluster;
      try {
        cluster = await converged(clusterRef(), {
          replicas: 3,
          since: beforeCreation(),
          timeoutMs: 900_000,
          describe: async () => `fired: ${JSON.stringify([...fired])}\n${await describeWorld()}`,
          also: async c => {
            if (condition(c, 'Restored')?.status !== 'True') return 'not Restored yet';
            const pending = ARMED.filter(([p, { least }]) => (fired.get(p) ?? 0) < least).map(
              ([p, { least }]) => `${p}×${least - (fired.get(p) ?? 0)}`,
            );
            return pending.length > 0 ? `crash points not passed yet: ${pending.join(', ')}` : undefined;
          },
        });
      } finally {
        await stopRearming();
      }
      t.diagnostic(
        `crashes: ${JSON.stringify(Object.fromEntries(fired))}; restarts ${JSON.stringify(sandbox.restarts())}`,
      );
      for (const [point, { least, most }] of ARMED) {
        const times = fired.get(point) ?? 0;
        assert.ok(times >= least && times <= most, `${point} fired ${times}×, not ${least}–${most}×`);
      }
      const total = [...fired.values()].reduce((sum, n) => sum + n, 0);
      const restarts = () => crashPoints.totalRestarts() - restartsBefore;
      await waitFor(`${total} function restarts, one per crash`, async () => restarts() >= total, {
        timeoutMs: 240_000,
        intervalMs: 250,
      });

      const all = await members();
      assert.equal(all.length, 3, `exactly 3 EtcdMembers: ${all.map(m => m.metadata.name).join(', ')}`);
      const ips = await podIPs(kube, NS, NAME);
      assert.equal(ips.length, 3);
      const client = new Etcd3({ hosts: `http://${ips[0]}:2379` });
      try {
        const list = await client.cluster.memberList({ linearizable: true });
        assert.deepEqual(
          list.members.map(m => toHexId(m.ID)).sort(),
          all.map(m => m.status?.memberID).sort(),
          "etcd's member list is the EtcdMembers, by ID",
        );
      } finally {
        client.close();
      }
      restoredId = await clusterIdOf(ips[0]);
      assert.notEqual(restoredId, sourceId, 'a new cluster ID');
      assert.equal(BigInt(`0x${restoredId}`), BigInt(`0x${cluster.status?.clusterID ?? ''}`));
      for (const ip of ips) {
        const seen = await keysOn(ip, SAMPLE);
        assert.equal(seen.count, KEYS, `every key of the snapshot on ${ip}`);
        assert.equal(seen.sample, 'value-321', ip);
        assert.equal(await clusterIdOf(ip), restoredId, ip);
      }
    });

    it('the restore ran once: a key written after it survives the seed Pod recreated and more reconciles', async () => {
      const seed = (await members()).find(m => m.spec.bootstrap === true)?.metadata.name;
      assert.ok(seed, 'a seed member');
      const [ip] = await podIPs(kube, NS, NAME);
      const client = new Etcd3({ hosts: `http://${ip}:2379` });
      try {
        await client.put('after-restore').value('kept');
      } finally {
        client.close();
      }
      const since = await mark(clusterRef());
      assert.equal((await kube.delete(ref('Pod', seed, 'v1'))).kind, 'deleted');
      // A new seed Pod ready before reconcile-cluster runs leaves its status as it was, which is
      // true; the fresh status evidence is the seed member's own record of its new Pod.
      await converged(clusterRef(), {
        replicas: 3,
        since,
        restarted: [seed],
        statusWritten: false,
        timeoutMs: 240_000,
        describe: () => describeWorld(),
        also: async () => {
          const read = await kube.get<KubeObject>(ref('Pod', seed, 'v1'));
          const podUID = read.kind === 'found' ? read.object.metadata.uid : read.kind;
          const member = (await members()).find(m => m.metadata.name === seed);
          return member?.status?.podUID === podUID
            ? undefined
            : `EtcdMember ${seed} records Pod ${member?.status?.podUID}, the Pod is ${podUID}`;
        },
      });
      // Reconciles after the seed is back: each function answers 3 more ticks.
      await openTickWindow(sandbox, ['reconcile-cluster', 'reconcile-member']).close(3);
      const ips = await podIPs(kube, NS, NAME);
      assert.equal(ips.length, 3);
      for (const memberIp of ips) {
        const seen = await keysOn(memberIp, 'after-restore');
        assert.equal(seen.sample, 'kept', `the key written after the restore, on ${memberIp}`);
        assert.equal(seen.count, KEYS, memberIp);
        assert.equal(await clusterIdOf(memberIp), restoredId, memberIp);
      }
      assert.equal((await members()).length, 3);
      const log = await kubectl(sandbox.kubeconfig, 'logs', seed, '-c', 'restore-fetch', '-n', NS);
      assert.match(log, /already restored/);
    });
  },
);
