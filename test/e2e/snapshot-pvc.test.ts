// Snapshots to a PVC on the sandbox: a real 1-member etcd 3.5.16 cluster, the real functions and
// event bridge, kube-controller-manager's Job controller and our kubelet running the operator
// image's agent in a Job that mounts the claim (a directory that outlives Pods). The test reads the
// file from the claim's directory itself: its SHA-256 must be the one the status records, and it
// must restore.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { DiskFaults } from '../sandbox/kubelet/disk-faults.ts';
import { etcdBinaries } from '../support/etcd-binaries.ts';
import { EtcdTestCluster } from '../support/etcd-process.ts';
import { sha256 } from '../support/s3rver.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'default';
const CLUSTER = 'pvcdemo';
const CLAIM = 'backups';
const KEYS = 200;
type Cluster = EtcdCluster & KubeObject;
type Snapshot = EtcdSnapshot & KubeObject;
interface PodLike extends KubeObject {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}
interface EventLike extends KubeObject {
  involvedObject?: { name?: string };
  reason?: string;
  message?: string;
}

describe(
  'EtcdSnapshots to a PVC, written by a Job (etcd 3.5.16 on the sandbox)',
  { timeout: 900_000 },
  () => {
    let sandbox: FullSandbox;
    let kube: KubeObjects;

    before(async () => {
      process.env.ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS = '2';
      sandbox = await startFullSandbox({ tickSeconds: 2, startTimeoutMs: 300_000 });
      kube = new KubeObjects(sandbox.kc);
    });
    after(async () => {
      await sandbox?.stop();
    });

    const getSnapshot = async (name: string) => {
      const read = await kube.get<Snapshot>({
        apiVersion: API_VERSION,
        kind: 'EtcdSnapshot',
        namespace: NS,
        name,
      });
      return read.kind === 'found' ? read.object : undefined;
    };
    const describeWorld = (name: string) => async () => {
      const jobs = await kube.list('batch/v1', 'Job', NS);
      return `snapshot: ${JSON.stringify((await getSnapshot(name))?.status)}\njobs: ${JSON.stringify(jobs.map(j => [j.metadata.name, (j as { status?: unknown }).status]))}\n${sandbox.output().slice(-4000)}`;
    };
    async function finished(name: string): Promise<Snapshot> {
      return waitFor(
        `EtcdSnapshot ${name} Complete or Failed`,
        async () => {
          const s = await getSnapshot(name);
          return s?.status?.phase === 'Complete' || s?.status?.phase === 'Failed' ? s : false;
        },
        { timeoutMs: 300_000, intervalMs: 500 },
        describeWorld(name),
      );
    }
    const condition = (s: Snapshot, type: string) => s.status?.conditions?.find(c => c.type === type);

    it('a 1-member cluster with keys is Ready', async () => {
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdCluster',
        metadata: { name: CLUSTER, namespace: NS },
        spec: { replicas: 1, version: '3.5.16' },
      });
      assert.equal(created.kind, 'created');
      const ref = { apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name: CLUSTER };
      await waitFor(
        'the cluster Ready 1/1',
        async () => {
          const read = await kube.get<Cluster>(ref);
          const s = read.kind === 'found' ? read.object.status : undefined;
          return s?.ready === '1/1' && s.phase === 'Running';
        },
        { timeoutMs: 300_000, intervalMs: 500 },
        () => sandbox.output().slice(-4000),
      );
      const pods = await kube.list<PodLike>('v1', 'Pod', NS, `etcdfn.io/cluster=${CLUSTER}`);
      const ip = pods.find(p => p.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True'))
        ?.status?.podIP;
      assert.ok(ip);
      const client = new Etcd3({ hosts: `http://${ip}:2379` });
      try {
        await Promise.all(
          Array.from({ length: KEYS }, (_, n) =>
            client
              .put(`pvc/${String(n).padStart(4, '0')}`)
              .value(`value-${n}`)
              .exec(),
          ),
        );
      } finally {
        client.close();
      }
    });

    it('a snapshot to a PVC completes and is verified; the file on the claim has the recorded SHA-256 and restores', async () => {
      const claim = await kube.create({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: CLAIM, namespace: NS },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      });
      assert.equal(claim.kind, 'created');
      const claimUid = claim.kind === 'created' ? (claim.object.metadata as { uid?: string }).uid : '';
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdSnapshot',
        metadata: { name: 'to-pvc', namespace: NS },
        spec: {
          clusterRef: { name: CLUSTER },
          destination: { pvc: { claimName: CLAIM, subPath: 'etcd/daily' } },
        },
      });
      assert.equal(created.kind, 'created', JSON.stringify(created));
      const done = await finished('to-pvc');
      const status = done.status ?? {};
      assert.equal(status.phase, 'Complete', JSON.stringify(status));
      const uid8 = (done.metadata.uid ?? '').slice(0, 8);
      const file = `to-pvc-${uid8}.db`;
      assert.equal(status.artifact?.uri, `pvc://${CLAIM}/etcd/daily/${file}`);
      assert.match(status.artifact?.checksum ?? '', /^sha256:[0-9a-f]{64}$/);
      assert.ok((status.artifact?.revision ?? 0) > KEYS);
      const verified = condition(done, 'Verified');
      assert.equal(verified?.status, 'True', JSON.stringify(verified));
      assert.match(
        verified?.message ?? '',
        /read \d+ bytes back from the volume: size and sha256:[0-9a-f]{64} match/,
      );
      assert.match(
        condition(done, 'Ready')?.message ?? '',
        /stored at pvc:\/\/backups\/etcd\/daily\/to-pvc-[0-9a-f]{8}\.db, taken from member pvcdemo-/,
      );

      // The file, read by the test from the claim's directory on the sandbox.
      const claimDir = join(sandbox.dir, 'kubelet', 'pvcs', NS, `${CLAIM}-${claimUid}`);
      const path = join(claimDir, 'etcd', 'daily', file);
      assert.ok(existsSync(path), `${path} exists`);
      const bytes = readFileSync(path);
      assert.equal(bytes.length, status.artifact?.sizeBytes);
      assert.equal(`sha256:${sha256(bytes)}`, status.artifact?.checksum);
      assert.equal(
        readFileSync(`${path}.etcdfn-owner`, 'utf8').trim(),
        done.metadata.uid,
        'the owner file names this snapshot',
      );
      assert.deepEqual(readdirSync(join(claimDir, 'etcd', 'daily')).sort(), [file, `${file}.etcdfn-owner`]);
      // The key count and revision in Verified are what etcd's own tool reports on the same file.
      const etcdutl = JSON.parse(
        execFileSync(etcdBinaries('3.5').etcdutl ?? 'etcdutl', ['snapshot', 'status', path, '-w', 'json'], {
          encoding: 'utf8',
        }),
      ) as { revision: number; totalKey: number };
      assert.match(
        verified?.message ?? '',
        new RegExp(`holds ${etcdutl.totalKey} keys at revision ${etcdutl.revision} `),
      );
      assert.equal(status.artifact?.revision, etcdutl.revision);
      assert.ok(etcdutl.totalKey > KEYS);

      // Its Job is deleted once the result is recorded (its Pod goes with it).
      await waitFor(
        'the snapshot Job to be deleted',
        async () => (await kube.list('batch/v1', 'Job', NS, `etcdfn.io/cluster=${CLUSTER}`)).length === 0,
        { timeoutMs: 120_000, intervalMs: 500 },
        describeWorld('to-pvc'),
      );
      const events = await kube.list<EventLike>('v1', 'Event', NS);
      assert.ok(events.some(e => e.involvedObject?.name === 'to-pvc' && e.reason === 'SnapshotComplete'));

      // A working etcd snapshot: restored into a new etcd, every key is there.
      const scratch = await EtcdTestCluster.start({ minor: '3.5', size: 1 });
      try {
        const slot = await scratch.reserve('restored');
        const dataDir = await scratch.restoreSnapshot(path, slot);
        const restored = await scratch.startMember(slot, {
          state: 'new',
          initialCluster: `${slot.name}=${slot.peerURL}`,
          dataDir,
        });
        const reader = new Etcd3({ hosts: restored.clientURL });
        try {
          assert.equal(await reader.getAll().prefix('pvc/').count(), KEYS);
        } finally {
          reader.close();
        }
      } finally {
        await scratch.cleanup();
      }
    });

    it('a snapshot to a PVC that does not exist ends Failed ClaimNotFound, and no Job is made', async () => {
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdSnapshot',
        metadata: { name: 'no-claim', namespace: NS },
        spec: { clusterRef: { name: CLUSTER }, destination: { pvc: { claimName: 'missing-claim' } } },
      });
      assert.equal(created.kind, 'created');
      const done = await finished('no-claim');
      assert.equal(done.status?.phase, 'Failed');
      const ready = condition(done, 'Ready');
      assert.equal(ready?.reason, 'ClaimNotFound');
      assert.match(
        ready?.message ?? '',
        /PersistentVolumeClaim missing-claim .*not found in namespace default; create it/,
      );
      assert.equal(done.status?.artifact, undefined);
      const jobs = await kube.list('batch/v1', 'Job', NS);
      assert.ok(!jobs.some(j => j.metadata.ownerReferences?.some(o => o.uid === done.metadata.uid)));
    });

    it('a schedule to a PVC: each run is verified on the claim; retention removes the older file by a Job, and only its own', async () => {
      const claim = await kube.get<KubeObject>({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: NS,
        name: CLAIM,
      });
      assert.equal(claim.kind, 'found');
      const claimUid = claim.kind === 'found' ? claim.object.metadata.uid : '';
      const dir = join(sandbox.dir, 'kubelet', 'pvcs', NS, `${CLAIM}-${claimUid}`, 'etcd', 'sched');
      // A file someone else put where the schedule writes: retention must never touch it.
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'minutely-000000000000-aaaaaaaa.db'), 'not ours');
      writeFileSync(join(dir, 'minutely-000000000000-aaaaaaaa.db.etcdfn-owner'), 'aaaaaaaa-other\n');
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdSnapshotSchedule',
        metadata: { name: 'minutely', namespace: NS },
        spec: {
          clusterRef: { name: CLUSTER },
          schedule: '* * * * *',
          retention: { keepLast: 1 },
          destination: { pvc: { claimName: CLAIM, subPath: 'etcd/sched' } },
        },
      });
      assert.equal(created.kind, 'created', JSON.stringify(created));
      const scheduleUid =
        created.kind === 'created' ? (created.object.metadata as KubeObject['metadata']).uid : '';
      const owned = async () =>
        (await kube.list<Snapshot>(API_VERSION, 'EtcdSnapshot', NS)).filter(s =>
          s.metadata.ownerReferences?.some(o => o.uid === scheduleUid),
        );
      const verified = (s: Snapshot) =>
        s.status?.phase === 'Complete' && condition(s, 'Verified')?.status === 'True';
      // The first verified run, then a later one: by then retention (keepLast 1) removes the first.
      const first = await waitFor(
        'the first scheduled run Complete and Verified on the claim',
        async () => (await owned()).find(verified) ?? false,
        { timeoutMs: 200_000, intervalMs: 1000 },
        describeWorld('minutely'),
      );
      const firstFile = join(dir, `${first.metadata.name}-${(first.metadata.uid ?? '').slice(0, 8)}.db`);
      assert.equal(`sha256:${sha256(readFileSync(firstFile))}`, first.status?.artifact?.checksum);
      const second = await waitFor(
        'a later run verified, and the first run pruned (its EtcdSnapshot and its file)',
        async () => {
          const all = await owned();
          const later = all.find(s => verified(s) && s.metadata.uid !== first.metadata.uid);
          const firstLeft = all.some(s => s.metadata.uid === first.metadata.uid);
          return later && !firstLeft && !existsSync(firstFile) ? later : false;
        },
        { timeoutMs: 200_000, intervalMs: 1000 },
        describeWorld('minutely'),
      );
      // No more runs while the test looks at the claim.
      const current = await kube.get<KubeObject & { spec: Record<string, unknown> }>({
        apiVersion: API_VERSION,
        kind: 'EtcdSnapshotSchedule',
        namespace: NS,
        name: 'minutely',
      });
      if (current.kind === 'found') {
        await kube.replace({ ...current.object, spec: { ...current.object.spec, suspend: true } });
      }
      const secondFile = join(dir, `${second.metadata.name}-${(second.metadata.uid ?? '').slice(0, 8)}.db`);
      assert.equal(`sha256:${sha256(readFileSync(secondFile))}`, second.status?.artifact?.checksum);
      assert.equal(existsSync(`${firstFile}.etcdfn-owner`), false, 'the owner file went with it');
      assert.equal(readFileSync(join(dir, 'minutely-000000000000-aaaaaaaa.db'), 'utf8'), 'not ours');
      const events = await kube.list<EventLike>('v1', 'Event', NS);
      const pruned = events.find(e => e.involvedObject?.name === 'minutely' && e.reason === 'SnapshotPruned');
      assert.match(
        pruned?.message ?? '',
        new RegExp(`deleted EtcdSnapshot ${first.metadata.name} and pvc://${CLAIM}: deleted etcd/sched/`),
      );
    });

    it('a claim the Job Pod cannot mount (its StorageClass does not exist, so it stays Pending) ends Failed ClaimNotMountable, and the Job goes', async () => {
      const claim = await kube.create({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'unbound', namespace: NS },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'no-such-class',
          resources: { requests: { storage: '1Gi' } },
        },
      });
      assert.equal(claim.kind, 'created');
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdSnapshot',
        metadata: { name: 'to-unbound', namespace: NS },
        spec: { clusterRef: { name: CLUSTER }, destination: { pvc: { claimName: 'unbound' } } },
      });
      assert.equal(created.kind, 'created');
      const done = await finished('to-unbound');
      assert.equal(done.status?.phase, 'Failed', JSON.stringify(done.status));
      const ready = condition(done, 'Ready');
      assert.equal(ready?.reason, 'ClaimNotMountable', JSON.stringify(ready));
      assert.match(
        ready?.message ?? '',
        /^the Pod of Job to-unbound-[0-9a-f]{8}-[0-9a-z]+ was not scheduled for \d+ s: 0\/1 nodes are available: pod has unbound immediate PersistentVolumeClaims\.; PersistentVolumeClaim unbound must be Bound and mountable next to the members \(kubectl describe pvc unbound\); then create a new EtcdSnapshot$/,
      );
      assert.equal(done.status?.artifact, undefined);
      await waitFor(
        'the Job of the attempt deleted',
        async () =>
          !(await kube.list('batch/v1', 'Job', NS)).some(j =>
            j.metadata.ownerReferences?.some(o => o.uid === done.metadata.uid),
          ),
        { timeoutMs: 60_000, intervalMs: 500 },
        describeWorld('to-unbound'),
      );
    });

    for (const [fault, reason, words] of [
      [
        'full',
        'VolumeFull',
        /^the volume has no space left for the snapshot in \S+; grow the PVC or free space; then create a new EtcdSnapshot$/,
      ],
      [
        'read-only',
        'VolumeReadOnly',
        /^cannot write to \S+ \(EROFS\): the volume is read-only or not writable by the Job's user; then create a new EtcdSnapshot$/,
      ],
    ] as const) {
      it(`a claim whose disk is ${fault} ends Failed ${reason}, and leaves no partial file`, async t => {
        if (!DiskFaults.supported()) {
          t.skip('this machine does not let the sandbox mount');
          return;
        }
        const name = `disk-${fault}`;
        const claim = await kube.create({
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name, namespace: NS },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        });
        assert.equal(claim.kind, 'created');
        await waitFor('the claim bound', async () => {
          const read = await kube.get<KubeObject & { status?: { phase?: string } }>({
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            namespace: NS,
            name,
          });
          return read.kind === 'found' && read.object.status?.phase === 'Bound';
        });
        // The etcd/ directory exists before the disk turns read-only (only the file is refused).
        const { path } =
          fault === 'full'
            ? await sandbox.faults.fillPvc({ namespace: NS, claim: name, bytes: 16 * 1024 })
            : await (async () => {
                const dirOf = await sandbox.faults.wipePvc({ namespace: NS, claim: name });
                mkdirSync(join(dirOf.path, 'etcd'), { recursive: true });
                return sandbox.faults.readOnlyPvc({ namespace: NS, claim: name });
              })();
        try {
          const created = await kube.create({
            apiVersion: API_VERSION,
            kind: 'EtcdSnapshot',
            metadata: { name: `to-${name}`, namespace: NS },
            spec: {
              clusterRef: { name: CLUSTER },
              destination: { pvc: { claimName: name, subPath: 'etcd' } },
            },
          });
          assert.equal(created.kind, 'created');
          const done = await finished(`to-${name}`);
          assert.equal(done.status?.phase, 'Failed', JSON.stringify(done.status));
          const ready = condition(done, 'Ready');
          assert.equal(ready?.reason, reason, JSON.stringify(ready));
          assert.match(ready?.message ?? '', words);
          assert.equal(done.status?.artifact, undefined);
          const left = existsSync(join(path, 'etcd')) ? readdirSync(join(path, 'etcd')) : [];
          assert.ok(!left.some(f => f.endsWith('.db') || f.endsWith('.partial')), left.join());
        } finally {
          await sandbox.faults.releasePvc({ namespace: NS, claim: name });
        }
      });
    }

    it('deletionPolicy Delete with a PVC destination is refused by the API server', async () => {
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdSnapshot',
        metadata: { name: 'pvc-delete', namespace: NS },
        spec: {
          clusterRef: { name: CLUSTER },
          deletionPolicy: 'Delete',
          destination: { pvc: { claimName: CLAIM } },
        },
      });
      assert.equal(created.kind, 'invalid', JSON.stringify(created));
      if (created.kind === 'invalid')
        assert.match(created.message, /deletionPolicy Delete is supported for destination\.s3 only/);
    });
  },
);
