// On-demand snapshots on the sandbox: a real 1-member etcd 3.5.16 cluster, the real functions, the
// event bridge, and s3rver on loopback as the object store. A snapshot taken through an EtcdSnapshot
// must restore into a new etcd holding the keys written before it; snapshots that cannot succeed
// must end Failed with a message that says what to fix.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { etcdBinaries } from '../support/etcd-binaries.ts';
import { EtcdTestCluster } from '../support/etcd-process.ts';
import { kubectl } from '../support/kubectl.ts';
import { s3rverSecret, sha256, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { openTickWindow } from '../support/ticks.ts';
import { beforeCreation, converged } from '../support/converge.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'default';
const CLUSTER = 'snapdemo';
const BUCKET = 'etcd-backups';
const SECRET = 'backup-s3';
const KEYS = 300;
type Snapshot = EtcdSnapshot & KubeObject;
interface PodLike extends KubeObject {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}
interface EventLike extends KubeObject {
  involvedObject?: { name?: string; kind?: string };
  reason?: string;
  type?: string;
  message?: string;
}

describe('on-demand EtcdSnapshots to S3 (etcd 3.5.16 on the sandbox)', { timeout: 600_000 }, () => {
  let sandbox: FullSandbox;
  let s3: TestS3;
  let kube: KubeObjects;

  before(async () => {
    // Retry quickly after a failed attempt, so the test never waits out production's delays.
    process.env.ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS = '2';
    s3 = await startS3rver([BUCKET]);
    sandbox = await startFullSandbox({ tickSeconds: 2 });
    kube = new KubeObjects(sandbox.kc);
  });
  after(async () => {
    await sandbox?.stop();
    await s3?.stop();
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
  const describeWorld = (name: string) => async () =>
    `snapshot: ${JSON.stringify((await getSnapshot(name))?.status)}\n${sandbox.output().slice(-4000)}`;

  async function createSnapshot(
    name: string,
    destination: EtcdSnapshot['spec']['destination'],
  ): Promise<void> {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshot',
      metadata: { name, namespace: NS },
      spec: { clusterRef: { name: CLUSTER }, destination },
    });
    assert.equal(created.kind, 'created', JSON.stringify(created));
  }

  async function finished(name: string): Promise<Snapshot> {
    return waitFor(
      `EtcdSnapshot ${name} Complete or Failed`,
      async () => {
        const s = await getSnapshot(name);
        return s?.status?.phase === 'Complete' || s?.status?.phase === 'Failed' ? s : false;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
      describeWorld(name),
    );
  }

  const readyCondition = (s: Snapshot) => s.status?.conditions?.find(c => c.type === 'Ready');
  const s3Destination = (secret = SECRET) => ({
    s3: { endpoint: s3.endpoint, bucket: BUCKET, key: 'e2e/', credentialsSecretRef: { name: secret } },
  });

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
        timeoutMs: 180_000,
        describe: () => sandbox.output().slice(-4000),
      },
    );
    const pods = await kube.list<PodLike>('v1', 'Pod', NS, `etcdfn.io/cluster=${CLUSTER}`);
    const ip = pods.find(p => p.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True'))
      ?.status?.podIP;
    assert.ok(ip, 'a ready Pod with an IP');
    const client = new Etcd3({ hosts: `http://${ip}:2379` });
    try {
      for (let batch = 0; batch < KEYS / 100; batch++) {
        await Promise.all(
          Array.from({ length: 100 }, (_, i) => {
            const n = batch * 100 + i;
            return client
              .put(`snap/${String(n).padStart(4, '0')}`)
              .value(`value-${n}`)
              .exec();
          }),
        );
      }
    } finally {
      client.close();
    }
  });

  it('an EtcdSnapshot to S3 completes, kubectl shows it, and the object restores with every key', async () => {
    const secret = await kube.create(s3rverSecret(SECRET, NS));
    assert.equal(secret.kind, 'created');
    await createSnapshot('before-upgrade', s3Destination());
    const done = await finished('before-upgrade');
    const status = done.status ?? {};
    assert.equal(status.phase, 'Complete', JSON.stringify(status));
    const artifact = status.artifact;
    assert.ok(artifact);
    const key = `e2e/${NS}/${CLUSTER}/before-upgrade-${(done.metadata.uid ?? '').slice(0, 8)}.db`;
    assert.equal(artifact.uri, `s3://${BUCKET}/${key}`);
    assert.match(artifact.etag ?? '', /^".+"$/, 'the ETag of the object written is recorded');
    const verified = done.status?.conditions?.find(c => c.type === 'Verified');
    assert.equal(verified?.status, 'True', JSON.stringify(verified));
    assert.match(verified?.message ?? '', /read back \d+ bytes .* integrity hash .* matches/);
    assert.match(artifact.checksum ?? '', /^sha256:[0-9a-f]{64}$/);
    assert.ok((artifact.revision ?? 0) > KEYS, `revision ${artifact.revision} covers the writes`);
    assert.ok(status.startTime && status.completionTime);
    const ready = readyCondition(done);
    assert.equal(ready?.status, 'True');
    assert.match(
      ready?.message ?? '',
      /stored at s3:\/\/etcd-backups\/e2e\/default\/snapdemo\/before-upgrade-[0-9a-f]{8}\.db, taken from member snapdemo-.*, verified/,
    );

    // What a person sees.
    const table = await kubectl(sandbox.kubeconfig, 'get', 'etcdsnapshot', 'before-upgrade', '-n', NS);
    const [header, row] = table.trim().split('\n');
    assert.match(header ?? '', /NAME\s+CLUSTER\s+PHASE\s+VERIFIED\s+SIZE\s+AGE/);
    const cells = (row ?? '').trim().split(/\s+/);
    assert.deepEqual(cells.slice(0, 5), [
      'before-upgrade',
      CLUSTER,
      'Complete',
      'True',
      String(artifact.sizeBytes),
    ]);
    const events = await kube.list<EventLike>('v1', 'Event', NS);
    const complete = events.find(
      e => e.involvedObject?.name === 'before-upgrade' && e.reason === 'SnapshotComplete',
    );
    assert.ok(complete, 'a SnapshotComplete Event for kubectl describe');
    assert.equal(complete.type, 'Normal');

    // The object is what status says, and it is a working etcd snapshot.
    const bytes = await s3.download(BUCKET, key);
    assert.equal(bytes.length, artifact.sizeBytes);
    assert.equal(`sha256:${sha256(bytes)}`, artifact.checksum);
    const scratch = await EtcdTestCluster.start({ minor: '3.5', size: 1 });
    try {
      const file = `${scratch.rootDir}/before-upgrade.db`;
      writeFileSync(file, bytes);
      // The key count and revision in Verified are what etcd's own tool reports on the stored object.
      const etcdutl = JSON.parse(
        execFileSync(etcdBinaries('3.5').etcdutl ?? 'etcdutl', ['snapshot', 'status', file, '-w', 'json'], {
          encoding: 'utf8',
        }),
      ) as { revision: number; totalKey: number };
      assert.ok(etcdutl.totalKey > KEYS, `etcdutl counts ${etcdutl.totalKey} keys`);
      assert.match(
        verified?.message ?? '',
        new RegExp(`holds ${etcdutl.totalKey} keys at revision ${etcdutl.revision} `),
      );
      const slot = await scratch.reserve('restored');
      const dataDir = await scratch.restoreSnapshot(file, slot);
      const restored = await scratch.startMember(slot, {
        state: 'new',
        initialCluster: `${slot.name}=${slot.peerURL}`,
        dataDir,
      });
      const reader = new Etcd3({ hosts: restored.clientURL });
      try {
        assert.equal(await reader.getAll().prefix('snap/').count(), KEYS);
        assert.equal(await reader.get('snap/0123').string(), 'value-123');
      } finally {
        reader.close();
      }
    } finally {
      await scratch.cleanup();
    }

    // Finished is final: later ticks leave it alone (a window of two ticks answered by run-snapshot).
    const rv = done.metadata.resourceVersion;
    const window = openTickWindow(sandbox, ['run-snapshot']);
    await window.close(2);
    assert.equal((await getSnapshot('before-upgrade'))?.metadata.resourceVersion, rv);
  });

  it("the functions' /metrics count what was done: the Complete snapshot and its bytes, etcd and API calls", async () => {
    const scrape = async (fn: string): Promise<string> => {
      const url = sandbox.functions[fn];
      assert.ok(url, `${fn} runs in the sandbox`);
      const res = await fetch(new URL('/metrics', url));
      assert.equal(res.status, 200);
      return res.text();
    };
    const sample = (text: string, pattern: RegExp): number => {
      const line = text.split('\n').find(l => pattern.test(l));
      return line === undefined ? 0 : Number(line.split(' ').at(-1));
    };
    const snapshots = await scrape('run-snapshot');
    const size = (await getSnapshot('before-upgrade'))?.status?.artifact?.sizeBytes ?? 0;
    assert.ok(sample(snapshots, /^etcdfn_snapshots_total\{outcome="Complete"\}/) >= 1, snapshots);
    assert.ok(sample(snapshots, /^etcdfn_snapshot_bytes_total /) >= size, snapshots);
    assert.ok(sample(snapshots, /^etcdfn_events_total\{function="run-snapshot",.*outcome="done"\}/) > 0);
    const clusters = await scrape('reconcile-cluster');
    assert.ok(sample(clusters, /^etcdfn_etcd_calls_total\{call="listMembers",result="ok"\}/) > 0, clusters);
    assert.ok(
      sample(clusters, /^etcdfn_kube_requests_total\{verb="list",resource="EtcdCluster",result="ok"\}/) > 0,
    );
    assert.equal(sample(clusters, /^etcdfn_clusters\{phase="Running"\}/), 1, clusters);
    assert.doesNotMatch(snapshots + clusters, new RegExp(`${CLUSTER}|before-upgrade`));
  });

  it('a snapshot whose Secret does not exist ends Failed, naming the Secret', async () => {
    await createSnapshot('no-secret', s3Destination('absent-creds'));
    const done = await finished('no-secret');
    assert.equal(done.status?.phase, 'Failed');
    const ready = readyCondition(done);
    assert.equal(ready?.reason, 'CredentialsInvalid');
    assert.match(ready?.message ?? '', /Secret absent-creds .*not found in namespace default/);
    assert.match(ready?.message ?? '', /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
    const listed = await s3.client.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `e2e/${NS}/${CLUSTER}/no-secret-` }),
    );
    assert.equal(listed.KeyCount ?? 0, 0, 'nothing was uploaded');
  });

  it('a snapshot of a cluster that does not exist waits Pending and says why', async () => {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshot',
      metadata: { name: 'no-cluster', namespace: NS },
      spec: { clusterRef: { name: 'ghost' }, destination: s3Destination() },
    });
    assert.equal(created.kind, 'created');
    const pending = await waitFor(
      'no-cluster Pending with ClusterNotFound',
      async () => {
        const s = await getSnapshot('no-cluster');
        return s?.status?.phase === 'Pending' && readyCondition(s)?.reason === 'ClusterNotFound' ? s : false;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
      describeWorld('no-cluster'),
    );
    assert.match(readyCondition(pending)?.message ?? '', /EtcdCluster ghost not found in namespace default/);
  });
});
