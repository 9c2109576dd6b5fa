// Crash tests for run-snapshot on the sandbox, with a real etcd 3.5.16 member and s3rver: for every
// side effect of a snapshot (claim, streaming, upload, result, finalizer, object deletion) and of a
// schedule (run claimed, snapshot created, object pruned), run-snapshot is killed (SIGKILL, through
// shared/runtime/crash.ts) just after it and started again on the same port. Only normal events
// follow (the bridge's retries, the tick). Every snapshot must end Complete and verified with exactly
// one object under its key, holding the bytes status records (sha256 and etcd's integrity hash
// recomputed here from the store); a partial object left at the key is never marked Complete.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { SNAPSHOT_CRASH_POINTS, type CrashPoint } from '../../shared/runtime/crash.ts';
import { OWNER_METADATA } from '../../shared/s3/location.ts';
import { SnapshotDigest } from '../../shared/snapshot-file/verify.ts';
import { CrashPoints } from '../support/crash-points.ts';
import { s3rverSecret, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { beforeCreation, converged } from '../support/converge.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'default';
const CLUSTER = 'crashsnap';
const BUCKET = 'crash-backups';
const SECRET = 'crash-s3';
const PREFIX = 'crash/';
const FN = 'run-snapshot';
const STEP_TIMEOUT = 180_000;
type Snapshot = EtcdSnapshot & KubeObject;
interface PodLike extends KubeObject {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}

describe(
  'run-snapshot: a crash after every side effect converges (etcd 3.5.16, s3rver)',
  { timeout: 1_200_000 },
  () => {
    let sandbox: FullSandbox;
    let s3: TestS3;
    let kube: KubeObjects;
    let crashPoints: CrashPoints;
    const covered = new Set<CrashPoint>();

    before(async () => {
      // A crashed attempt is retaken once its claim is older than attempt timeout + grace: keep both
      // short here (production: 540 s + 60 s), and long enough for an attempt on a loaded machine.
      process.env.ETCDFN_SNAPSHOT_ATTEMPT_TIMEOUT_SECONDS = '40';
      process.env.ETCDFN_SNAPSHOT_STALE_GRACE_SECONDS = '2';
      process.env.ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS = '2';
      crashPoints = CrashPoints.inTempDir('etcdfn-crash-snapshot-', () => sandbox.restarts());
      s3 = await startS3rver([BUCKET]);
      sandbox = await startFullSandbox({ tickSeconds: 2, crashDir: crashPoints.dir });
      kube = new KubeObjects(sandbox.kc);
      assert.equal((await kube.create(s3rverSecret(SECRET, NS))).kind, 'created');
    });
    after(async () => {
      await sandbox?.stop();
      await s3?.stop();
      crashPoints?.remove();
    });

    const get = async <T extends KubeObject>(kind: string, name: string) => {
      const read = await kube.get<T>({ apiVersion: API_VERSION, kind, namespace: NS, name });
      return read.kind === 'found' ? read.object : undefined;
    };
    const destination = () => ({
      s3: { endpoint: s3.endpoint, bucket: BUCKET, key: PREFIX, credentialsSecretRef: { name: SECRET } },
    });
    const world = (name: string) => async () =>
      `snapshot: ${JSON.stringify((await get<Snapshot>('EtcdSnapshot', name))?.status)}\n` +
      `restarts: ${JSON.stringify(sandbox.restarts())}\n${sandbox.output().slice(-3000)}`;

    /** Objects whose key starts with the snapshot's own `<prefix><ns>/<cluster>/<name>-`. */
    async function objectsOf(name: string): Promise<string[]> {
      const listed = await s3.client.send(
        new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${PREFIX}${NS}/${CLUSTER}/${name}-` }),
      );
      return (listed.Contents ?? []).map(o => o.Key ?? '');
    }

    /** Arms `point`, runs `drive`, and waits until run-snapshot died there and was started again. */
    async function crashAt(
      point: CrashPoint,
      drive: () => Promise<void>,
      name: string,
      timeoutMs = STEP_TIMEOUT,
    ): Promise<void> {
      await crashPoints.crashThrough(point, drive, { fn: FN, timeoutMs, describe: world(name) });
      covered.add(point);
    }

    async function createSnapshot(name: string, deletionPolicy?: 'Delete'): Promise<void> {
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdSnapshot',
        metadata: { name, namespace: NS },
        spec: {
          clusterRef: { name: CLUSTER },
          destination: destination(),
          ...(deletionPolicy && { deletionPolicy }),
        },
      });
      assert.equal(created.kind, 'created', JSON.stringify(created));
    }

    /**
     * The snapshot ended Complete and Verified, with exactly one object under its key, owned by it,
     * whose bytes (read here from the store) have the recorded size and sha256 and pass etcd's hash.
     */
    async function completeWithOneGoodObject(name: string): Promise<Snapshot> {
      const done = await waitFor(
        `EtcdSnapshot ${name} finished`,
        async () => {
          const s = await get<Snapshot>('EtcdSnapshot', name);
          return s?.status?.phase === 'Complete' || s?.status?.phase === 'Failed' ? s : false;
        },
        { timeoutMs: STEP_TIMEOUT, intervalMs: 500 },
        world(name),
      );
      assert.equal(done.status?.phase, 'Complete', JSON.stringify(done.status));
      assert.equal(done.status?.conditions?.find(c => c.type === 'Verified')?.status, 'True');
      const uid = done.metadata.uid ?? '';
      const key = `${PREFIX}${NS}/${CLUSTER}/${name}-${uid.slice(0, 8)}.db`;
      assert.equal(done.status?.artifact?.uri, `s3://${BUCKET}/${key}`);
      assert.deepEqual(await objectsOf(name), [key], 'one object for one snapshot');
      const head = await s3.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
      assert.equal(head.Metadata?.[OWNER_METADATA], uid);
      assert.equal(head.ETag, done.status?.artifact?.etag);
      const digest = new SnapshotDigest();
      digest.update(await s3.download(BUCKET, key));
      const stored = digest.digest();
      assert.equal(stored.sizeBytes, done.status?.artifact?.sizeBytes);
      assert.equal(`sha256:${stored.sha256}`, done.status?.artifact?.checksum);
      assert.equal(stored.integrity, 'ok', "etcd's integrity hash over the stored bytes");
      return done;
    }

    it('a 1-member cluster with keys is Ready', async () => {
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdCluster',
        metadata: { name: CLUSTER, namespace: NS },
        spec: { replicas: 1, version: '3.5.16' },
      });
      assert.equal(created.kind, 'created');
      await converged(
        { kube, namespace: NS, name: CLUSTER },
        {
          replicas: 1,
          since: beforeCreation(),
          timeoutMs: 240_000,
          describe: () => sandbox.output().slice(-4000),
        },
      );
      const pods = await kube.list<PodLike>('v1', 'Pod', NS, `etcdfn.io/cluster=${CLUSTER}`);
      const ip = pods.find(p => p.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True'))
        ?.status?.podIP;
      assert.ok(ip);
      const client = new Etcd3({ hosts: `http://${ip}:2379` });
      try {
        for (let i = 0; i < 200; i++) await client.put(`crash/${i}`).value('x'.repeat(1000));
      } finally {
        client.close();
      }
    });

    for (const point of ['snapshot:claimed', 'snapshot:uploaded', 'snapshot:result-written'] as const) {
      it(`a crash at ${point}: the snapshot is retaken or finished, Complete with one verified object`, async () => {
        const name = `at-${point.split(':')[1]}`;
        await crashAt(point, () => createSnapshot(name), name);
        await completeWithOneGoodObject(name);
      });
    }

    it('a crash mid-stream (snapshot:streaming) leaving a partial object at the key: retaken, the partial object never Complete', async () => {
      const name = 'at-streaming';
      await crashAt('snapshot:streaming', () => createSnapshot(name), name);
      // What a store that kept a cut-off upload would hold: a truncated object owned by this snapshot.
      const cut = await get<Snapshot>('EtcdSnapshot', name);
      assert.equal(cut?.status?.phase, 'Started', 'the crashed attempt is still claimed');
      const uid = cut?.metadata.uid ?? '';
      const key = `${PREFIX}${NS}/${CLUSTER}/${name}-${uid.slice(0, 8)}.db`;
      await s3.client.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: key,
          Body: Buffer.alloc(1000, 7),
          Metadata: { [OWNER_METADATA]: uid },
        }),
      );
      const done = await completeWithOneGoodObject(name);
      assert.ok((done.status?.artifact?.sizeBytes ?? 0) > 100_000, 'the whole snapshot, not the partial one');
      assert.equal(done.status?.conditions?.find(c => c.type === 'Ready')?.reason, 'Complete');
    });

    it('deletionPolicy Delete: crashes after the finalizer and after the object deletion still delete the object, then the snapshot', async () => {
      const name = 'at-finalizer';
      await crashAt('snapshot:finalizer-added', () => createSnapshot(name, 'Delete'), name);
      const done = await completeWithOneGoodObject(name);
      assert.deepEqual(done.metadata.finalizers, ['etcdfn.io/snapshot-object']);
      await crashAt(
        'snapshot:object-deleted',
        async () => {
          const deleted = await kube.delete({
            apiVersion: API_VERSION,
            kind: 'EtcdSnapshot',
            namespace: NS,
            name,
          });
          assert.equal(deleted.kind, 'deleted');
        },
        name,
      );
      await waitFor(
        `EtcdSnapshot ${name} gone`,
        async () => (await get<Snapshot>('EtcdSnapshot', name)) === undefined,
        { timeoutMs: STEP_TIMEOUT, intervalMs: 500 },
        world(name),
      );
      assert.deepEqual(await objectsOf(name), [], 'its object deleted');
    });

    it('a schedule: crashes after the run claim, after the snapshot is created and after pruning converge on one verified snapshot per run', async () => {
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdSnapshotSchedule',
        metadata: { name: 'every', namespace: NS },
        spec: {
          clusterRef: { name: CLUSTER },
          schedule: '@every 1m',
          retention: { keepLast: 1 },
          destination: destination(),
        },
      });
      assert.equal(created.kind, 'created');
      const owned = async () =>
        (await kube.list<Snapshot>(API_VERSION, 'EtcdSnapshot', NS)).filter(s =>
          s.metadata.ownerReferences?.some(o => o.name === 'every'),
        );
      const nothing = async () => {};
      // Each run falls due on the minute; the armed point fires on the next one.
      await crashAt('schedule:claimed', nothing, 'every');
      await crashAt('schedule:snapshot-created', nothing, 'every');
      await crashAt('schedule:object-pruned', nothing, 'every');
      const left = await waitFor(
        'one verified snapshot of the schedule left, its run finished',
        async () => {
          const all = await owned();
          return all.length === 1 && all[0].status?.phase === 'Complete' ? all : false;
        },
        { timeoutMs: STEP_TIMEOUT, intervalMs: 1000 },
        world('every'),
      );
      await completeWithOneGoodObject(left[0].metadata.name ?? '');
      // Every object under the schedule's snapshots' keys belongs to the one left: pruned ones are gone.
      const listed = await s3.client.send(
        new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${PREFIX}${NS}/${CLUSTER}/every-` }),
      );
      assert.equal(listed.KeyCount, 1, JSON.stringify(listed.Contents?.map(o => o.Key)));
    });

    it('a schedule to a PVC: a crash after its file is pruned converges, the pruned snapshot and its file gone, the newest kept', async () => {
      const claim = await kube.create({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'crash-backups', namespace: NS },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      });
      assert.equal(claim.kind, 'created');
      const claimUid = claim.kind === 'created' ? (claim.object.metadata as KubeObject['metadata']).uid : '';
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdSnapshotSchedule',
        metadata: { name: 'to-claim', namespace: NS },
        spec: {
          clusterRef: { name: CLUSTER },
          schedule: '@every 1m',
          retention: { keepLast: 1 },
          destination: { pvc: { claimName: 'crash-backups', subPath: 'sched' } },
        },
      });
      assert.equal(created.kind, 'created');
      // The second run's retention removes the first run's file through a Job, then crashes.
      await crashAt('schedule:file-pruned', async () => {}, 'to-claim', 360_000);
      const dir = join(sandbox.dir, 'kubelet', 'pvcs', NS, `crash-backups-${claimUid}`, 'sched');
      const left = await waitFor(
        'one verified snapshot of the schedule, and only its file on the claim',
        async () => {
          const all = (await kube.list<Snapshot>(API_VERSION, 'EtcdSnapshot', NS)).filter(s =>
            s.metadata.ownerReferences?.some(o => o.name === 'to-claim'),
          );
          const done = all.filter(s => s.status?.phase === 'Complete');
          if (all.length !== 1 || done.length !== 1) return false;
          const own = `${done[0].metadata.name}-${(done[0].metadata.uid ?? '').slice(0, 8)}.db`;
          const files = existsSync(dir) ? readdirSync(dir).sort() : [];
          return files.join() === [own, `${own}.etcdfn-owner`].join() ? done[0] : false;
        },
        { timeoutMs: STEP_TIMEOUT, intervalMs: 1000 },
        world('to-claim'),
      );
      await kube.mergePatch(
        { apiVersion: API_VERSION, kind: 'EtcdSnapshotSchedule', namespace: NS, name: 'to-claim' },
        { spec: { suspend: true } },
      );
      assert.equal(left.status?.conditions?.find(c => c.type === 'Verified')?.status, 'True');
    });

    it('every run-snapshot crash point was crashed through', () => {
      assert.deepEqual(
        SNAPSHOT_CRASH_POINTS.filter(p => !covered.has(p)),
        [],
      );
    });
  },
);
