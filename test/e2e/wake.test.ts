// Waits that no event of ours ends are ended within a minute by the waiting object's own wake-up
// PingSource (shared/plan/wake/wake.ts), not at the resync tick, which is an hour here: a snapshot created
// before its cluster exists (no event reaches run-snapshot when the cluster turns up), and a restore
// waiting for its credentials Secret (a user's Secret is not watched). Each wake-up exists only
// while its object waits: an idle system gets only the tick.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { beforeCreation, converged } from '../support/converge.ts';
import { etcdBinaries } from '../support/etcd-binaries.ts';
import { EtcdTestCluster } from '../support/etcd-process.ts';
import { s3rverSecret, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';
import { condition, podIPs, type Cluster } from './restore-support.ts';

const NS = 'default';
const CLUSTER = 'late';
const SNAPSHOT = 'early';
const BUCKET = 'etcd-backups';
const SECRET = 'backup-s3';
const RESTORED = 'from-backup';
const LATE_SECRET = 'late-creds';
const run = promisify(execFile);
const WAKE = {
  apiVersion: 'sources.knative.dev/v1',
  kind: 'PingSource',
  namespace: NS,
  name: `etcdfn-wake-${SNAPSHOT}`,
};
type Snapshot = EtcdSnapshot & KubeObject;

describe('waits end within a minute, not at the resync tick (1 hour here)', { timeout: 900_000 }, () => {
  let sandbox: FullSandbox;
  let s3: TestS3;
  let kube: KubeObjects;

  before(async () => {
    // Not 127.0.0.1: a Pod's 127.0.0.1 is the Pod itself on the sandbox (as on a real node).
    s3 = await startS3rver([BUCKET], undefined, '127.0.0.2');
    sandbox = await startFullSandbox({ tickSeconds: 3600 });
    kube = new KubeObjects(sandbox.kc);
    assert.equal((await kube.create(s3rverSecret(SECRET, NS))).kind, 'created');
  });
  after(async () => {
    await sandbox?.stop();
    await s3?.stop();
  });

  const getSnapshot = async () => {
    const read = await kube.get<Snapshot>({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshot',
      namespace: NS,
      name: SNAPSHOT,
    });
    return read.kind === 'found' ? read.object : undefined;
  };
  const world = async () =>
    `snapshot: ${JSON.stringify((await getSnapshot())?.status)}\n${sandbox.output().slice(-3000)}`;

  it('created before its cluster: Pending (ClusterNotFound) with a wake-up owned by it', async () => {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshot',
      metadata: { name: SNAPSHOT, namespace: NS },
      spec: {
        clusterRef: { name: CLUSTER },
        destination: {
          s3: { endpoint: s3.endpoint, bucket: BUCKET, key: 'wake/', credentialsSecretRef: { name: SECRET } },
        },
      },
    });
    assert.equal(created.kind, 'created');
    const snapshot = await waitFor(
      'the snapshot waiting for its cluster',
      async () => {
        const s = await getSnapshot();
        const ready = s?.status?.conditions?.find(c => c.type === 'Ready');
        return ready?.reason === 'ClusterNotFound' ? s : false;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
      world,
    );
    assert.equal(snapshot.status?.phase ?? 'Pending', 'Pending');
    const wake = await waitFor(
      'the wake-up PingSource',
      async () => (await kube.find<KubeObject & { spec?: { schedule?: string } }>(WAKE)) ?? false,
      {
        timeoutMs: 60_000,
        intervalMs: 250,
      },
      world,
    );
    assert.equal(wake.spec?.schedule, '* * * * *');
    assert.deepEqual(
      wake.metadata.ownerReferences?.map(o => [o.kind, o.name, o.uid]),
      [['EtcdSnapshot', SNAPSHOT, snapshot.metadata.uid]],
    );
  });

  it('once the cluster exists, the snapshot is taken within minutes (not at the hourly tick) and its wake-up is gone', async () => {
    assert.equal(
      (
        await kube.create({
          apiVersion: API_VERSION,
          kind: 'EtcdCluster',
          metadata: { name: CLUSTER, namespace: NS },
          spec: { replicas: 1, version: '3.5.16' },
        })
      ).kind,
      'created',
    );
    await converged(
      { kube, namespace: NS, name: CLUSTER },
      { replicas: 1, since: beforeCreation(), timeoutMs: 180_000, describe: world },
    );
    // Well under the hour: only the wake-up (every minute) can bring it here.
    const done = await waitFor(
      'the snapshot Complete',
      async () => {
        const s = await getSnapshot();
        return s?.status?.phase === 'Complete' ? s : false;
      },
      { timeoutMs: 300_000, intervalMs: 500 },
      world,
    );
    assert.equal(done.status?.conditions?.find(c => c.type === 'Verified')?.status, 'True');
    const key = /^s3:\/\/[^/]+\/(.+)$/.exec(done.status?.artifact?.uri ?? '')?.[1];
    assert.ok(key, `artifact ${done.status?.artifact?.uri}`);
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    assert.equal(head.ContentLength, done.status?.artifact?.sizeBytes);
    await waitFor(
      'the wake-up PingSource deleted',
      async () => (await kube.find(WAKE)) === undefined,
      { timeoutMs: 120_000, intervalMs: 250 },
      world,
    );
  });
  it('a restore waiting for its credentials Secret: Restored=False SecretNotFound, with a wake-up owned by the cluster', async () => {
    // A real etcd 3.5 snapshot holding one key, in the store at restore/snap.db.
    const dir = mkdtempSync(join(tmpdir(), 'wake-restore-'));
    try {
      const source = await EtcdTestCluster.start({ minor: '3.5', size: 1 });
      try {
        const client = new Etcd3({ hosts: source.endpoints[0] });
        await client.put('greeting').value('from the snapshot');
        client.close();
        await run(etcdBinaries('3.5').etcdctl, [
          `--endpoints=${source.endpoints[0]}`,
          'snapshot',
          'save',
          join(dir, 'snap.db'),
        ]);
      } finally {
        await source.cleanup();
      }
      await s3.client.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: 'restore/snap.db',
          Body: readFileSync(join(dir, 'snap.db')),
        }),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: RESTORED, namespace: NS },
      spec: {
        replicas: 1,
        version: '3.5.16',
        bootstrap: {
          restore: {
            source: {
              s3: {
                endpoint: s3.endpoint,
                bucket: BUCKET,
                key: 'restore/snap.db',
                credentialsSecretRef: { name: LATE_SECRET },
              },
            },
          },
        },
      },
    });
    assert.equal(created.kind, 'created');
    const cluster = await waitFor(
      'Restored=False SecretNotFound',
      async () => {
        const read = await kube.get<Cluster>({
          apiVersion: API_VERSION,
          kind: 'EtcdCluster',
          namespace: NS,
          name: RESTORED,
        });
        const found = read.kind === 'found' ? read.object : undefined;
        return condition(found, 'Restored')?.reason === 'SecretNotFound' ? found : false;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
      world,
    );
    const wake = await waitFor(
      'the cluster wake-up PingSource',
      async () =>
        (await kube.find<KubeObject>({ ...WAKE, name: `${RESTORED}-etcdfn-cluster-wake` })) ?? false,
      { timeoutMs: 60_000, intervalMs: 250 },
      world,
    );
    assert.deepEqual(
      wake.metadata.ownerReferences?.map(o => [o.kind, o.name, o.uid]),
      [['EtcdCluster', RESTORED, cluster.metadata.uid]],
    );
  });

  it('once the Secret exists, the restore runs within minutes (not at the hourly tick), and the wake-up is gone', async () => {
    assert.equal((await kube.create(s3rverSecret(LATE_SECRET, NS))).kind, 'created');
    await converged(
      { kube, namespace: NS, name: RESTORED },
      { replicas: 1, since: beforeCreation(), timeoutMs: 300_000, describe: world },
    );
    const [ip] = await podIPs(kube, NS, RESTORED);
    const client = new Etcd3({ hosts: `http://${ip}:2379` });
    try {
      assert.equal(await client.get('greeting').string(), 'from the snapshot');
    } finally {
      client.close();
    }
    await waitFor(
      'the cluster wake-up deleted',
      async () => (await kube.find({ ...WAKE, name: `${RESTORED}-etcdfn-cluster-wake` })) === undefined,
      { timeoutMs: 120_000, intervalMs: 250 },
      world,
    );
  });
});
