// Restore at first bootstrap on the sandbox, with real etcd (3.5.16 and 3.6.16), the real
// functions, the event bridge and s3rver on loopback: a cluster with many keys is snapshotted to S3
// through an EtcdSnapshot and deleted; new 3-member clusters restore it from the S3 key, from a file
// on a PVC and through snapshotRef (from S3 every initial member restores, from a PVC the seed). Every
// key is back on every member, the revision is at least the snapshot's, the cluster ID is new; a
// recreated seed Pod restores nothing again.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { kubectl } from '../support/kubectl.ts';
import { s3rverSecret, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { beforeCreation, converged, mark } from '../support/converge.ts';
import { waitFor } from '../support/wait.ts';
import { KEYS, clusterIdOf, condition, keysOn, podIPs, writeKeys, type Cluster } from './restore-support.ts';

const NS = 'default';
const BUCKET = 'etcd-backups';
const SECRET = 'restore-s3';

type Snapshot = EtcdSnapshot & KubeObject;
type Member = EtcdMember & KubeObject;

describe('restore at first bootstrap (sandbox, real etcd, s3rver)', { timeout: 1_500_000 }, () => {
  let sandbox: FullSandbox;
  let s3: TestS3;
  let kube: KubeObjects;

  before(async () => {
    process.env.ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS = '2';
    // Not 127.0.0.1: a Pod's 127.0.0.1 is the Pod itself on the sandbox (as on a real node).
    s3 = await startS3rver([BUCKET], undefined, '127.0.0.2');
    sandbox = await startFullSandbox({ tickSeconds: 5, startTimeoutMs: 300_000 });
    kube = new KubeObjects(sandbox.kc);
    assert.equal((await kube.create(s3rverSecret(SECRET, NS))).kind, 'created');
  });
  after(async () => {
    await sandbox?.stop();
    await s3?.stop();
  });

  const ref = (kind: string, name: string, apiVersion = API_VERSION) => ({
    apiVersion,
    kind,
    namespace: NS,
    name,
  });
  const getCluster = async (name: string) => {
    const read = await kube.get<Cluster>(ref('EtcdCluster', name));
    return read.kind === 'found' ? read.object : undefined;
  };
  const world = (name: string) => async () =>
    `cluster: ${JSON.stringify((await getCluster(name))?.status)}\n${sandbox.output().slice(-3000)}`;

  async function createCluster(name: string, version: string, replicas: number, restore?: unknown) {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name, namespace: NS },
      spec: { replicas, version, ...(restore !== undefined && { bootstrap: { restore } }) },
    });
    assert.equal(created.kind, 'created', JSON.stringify(created));
  }

  async function readyCluster(name: string, replicas: number): Promise<Cluster> {
    return converged(
      { kube, namespace: NS, name },
      { replicas, since: beforeCreation(), timeoutMs: 400_000, describe: world(name) },
    );
  }

  async function deleteCluster(name: string): Promise<void> {
    await kube.delete(ref('EtcdCluster', name));
  }

  async function takeSnapshot(name: string, cluster: string): Promise<Snapshot> {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshot',
      metadata: { name, namespace: NS },
      spec: {
        clusterRef: { name: cluster },
        destination: {
          s3: {
            endpoint: s3.endpoint,
            bucket: BUCKET,
            key: 'restore/',
            credentialsSecretRef: { name: SECRET },
          },
        },
      },
    });
    assert.equal(created.kind, 'created');
    return waitFor(
      `EtcdSnapshot ${name} Complete`,
      async () => {
        const read = await kube.get<Snapshot>(ref('EtcdSnapshot', name));
        const s = read.kind === 'found' ? read.object : undefined;
        if (s?.status?.phase === 'Failed') throw new Error(`snapshot failed: ${JSON.stringify(s.status)}`);
        return s?.status?.phase === 'Complete' ? s : false;
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    );
  }

  /** Puts `bytes` at `path` inside a new PVC (through the sandbox's volume directory for it). */
  async function pvcWithFile(claim: string, path: string, bytes: Buffer): Promise<void> {
    const created = await kube.create({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: claim, namespace: NS },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    assert.equal(created.kind, 'created');
    const read = await kube.get<KubeObject & { metadata: { uid?: string } }>(
      ref('PersistentVolumeClaim', claim, 'v1'),
    );
    assert.equal(read.kind, 'found');
    const dir = join(sandbox.dir, 'kubelet', 'pvcs', NS, `${claim}-${read.object.metadata.uid}`);
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), bytes);
  }

  for (const version of ['3.5.16', '3.6.16']) {
    const tag = version.split('.').slice(0, 2).join('');
    const source = `src${tag}`;
    let snapshot: Snapshot;
    let sourceClusterId: string;

    it(`etcd ${version}: ${KEYS} keys in a cluster, snapshotted to S3, cluster deleted`, async () => {
      await createCluster(source, version, 1);
      await readyCluster(source, 1);
      const [ip] = await podIPs(kube, NS, source);
      assert.ok(ip);
      await writeKeys(ip, KEYS);
      sourceClusterId = await clusterIdOf(ip);
      snapshot = await takeSnapshot(`snap${tag}`, source);
      assert.ok((snapshot.status?.artifact?.revision ?? 0) > 1);
      await deleteCluster(source);
    });

    it(`etcd ${version}: new 3-member clusters restore from the S3 key, a PVC file and snapshotRef`, async () => {
      const artifact = snapshot.status!.artifact!;
      const key = artifact.uri.replace(`s3://${BUCKET}/`, '');
      const s3Source = {
        s3: { endpoint: s3.endpoint, bucket: BUCKET, key, credentialsSecretRef: { name: SECRET } },
      };
      await pvcWithFile(`backup${tag}`, 'snapshots/etcd.db', await s3.download(BUCKET, key));
      const targets = {
        [`s3${tag}`]: { source: s3Source },
        [`pvc${tag}`]: { source: { pvc: { claimName: `backup${tag}`, subPath: 'snapshots/etcd.db' } } },
        [`ref${tag}`]: { source: { snapshotRef: { name: snapshot.metadata.name } } },
      };
      for (const [name, restore] of Object.entries(targets)) await createCluster(name, version, 3, restore);
      for (const name of Object.keys(targets)) {
        const cluster = await readyCluster(name, 3);
        const restored = condition(cluster, 'Restored');
        assert.equal(restored?.status, 'True', JSON.stringify(cluster.status?.conditions));
        // From S3 every initial member restored (static); from a PVC file only the seed did.
        const members = await kube.list<Member>(API_VERSION, 'EtcdMember', NS, `etcdfn.io/cluster=${name}`);
        const restoring = members.filter(m => m.spec.bootstrap === true && m.spec.restore).length;
        assert.equal(restoring, name.startsWith('pvc') ? 1 : 3, `members of ${name} that restored`);
        assert.equal(cluster.status?.nextMemberOrdinal, 3, `no member of ${name} replaced`);
        const ips = await podIPs(kube, NS, name);
        assert.equal(ips.length, 3);
        for (const ip of ips) {
          const seen = await keysOn(ip);
          assert.equal(seen.count, KEYS, `every key on member ${ip} of ${name}`);
          assert.equal(seen.sample, 'value-4321');
          assert.ok(seen.revision >= artifact.revision!, `revision ${seen.revision} >= ${artifact.revision}`);
          assert.notEqual(await clusterIdOf(ip), sourceClusterId, 'a new cluster ID');
        }
        // status.clusterID is zero-padded hex; compare the numbers.
        assert.equal(
          BigInt(`0x${await clusterIdOf(ips[0])}`),
          BigInt(`0x${cluster.status?.clusterID ?? ''}`),
        );
      }
    });

    it(`etcd ${version}: a recreated seed Pod restores nothing again; a key written after the restore survives`, async () => {
      const name = `s3${tag}`;
      const members = await kube.list<Member>(API_VERSION, 'EtcdMember', NS, `etcdfn.io/cluster=${name}`);
      const seed = members.find(m => m.spec.bootstrap === true)!.metadata.name!;
      const [ip] = await podIPs(kube, NS, name);
      const client = new Etcd3({ hosts: `http://${ip}:2379` });
      try {
        await client.put('after-restore').value('kept');
      } finally {
        client.close();
      }
      const since = await mark({ kube, namespace: NS, name });
      await kube.delete(ref('Pod', seed, 'v1'));
      await converged(
        { kube, namespace: NS, name },
        { replicas: 3, since, restarted: [seed], timeoutMs: 180_000, describe: world(name) },
      );
      const log = await kubectl(sandbox.kubeconfig, 'logs', seed, '-c', 'restore-fetch', '-n', NS);
      assert.match(log, /already restored/);
      const ips = await podIPs(kube, NS, name);
      assert.equal(ips.length, 3);
      for (const memberIp of ips) {
        const seen = await keysOn(memberIp, 'after-restore');
        assert.equal(seen.sample, 'kept', `the key written after the restore, on ${memberIp}`);
        assert.equal(seen.count, KEYS);
      }
      for (const name of [`s3${tag}`, `pvc${tag}`, `ref${tag}`]) await deleteCluster(name);
    });
  }
});
