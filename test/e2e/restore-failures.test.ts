// Restore at bootstrap with bad input, on the sandbox (real functions, real etcd images mapped to
// etcd 3.5.16, s3rver on loopback): each case ends in Restored=False with a reason and a
// message naming the cause and the fix, and no etcd ever runs (no member at all when the problem
// is visible before one is created; otherwise the seed Pod stays in its init containers).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { etcdBinaries } from '../support/etcd-binaries.ts';
import { EtcdTestCluster } from '../support/etcd-process.ts';
import { kubectl, kubectlOutput } from '../support/kubectl.ts';
import { s3rverSecret, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';
import { condition, type Cluster } from './restore-support.ts';

const NS = 'default';
const BUCKET = 'etcd-backups';
const SECRET = 'restore-s3';
const run = promisify(execFile);

interface PodLike extends KubeObject {
  status?: {
    initContainerStatuses?: { name: string; restartCount?: number }[];
    containerStatuses?: {
      name: string;
      started?: boolean;
      restartCount?: number;
      state?: { running?: unknown };
    }[];
  };
}

describe('restore at bootstrap: bad input ends in a condition, no member runs', { timeout: 900_000 }, () => {
  let sandbox: FullSandbox;
  let s3: TestS3;
  let kube: KubeObjects;
  let snapshot: Buffer;
  let workDir: string;

  before(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'restore-failures-'));
    s3 = await startS3rver([BUCKET], undefined, '127.0.0.2');
    // A real etcd 3.5 snapshot, and a copy with one byte flipped.
    const source = await EtcdTestCluster.start({ minor: '3.5', size: 1 });
    try {
      const file = join(workDir, 'snap.db');
      await run(etcdBinaries('3.5').etcdctl, [
        `--endpoints=${source.endpoints[0]}`,
        'snapshot',
        'save',
        file,
      ]);
      snapshot = readFileSync(file);
    } finally {
      await source.cleanup();
    }
    const corrupt = Buffer.from(snapshot);
    corrupt[corrupt.length - 100] ^= 0xff;
    for (const [key, body] of [
      ['good.db', snapshot],
      ['corrupt.db', corrupt],
      ['truncated.db', snapshot.subarray(0, Math.floor(snapshot.length / 2))],
    ] as const) {
      await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
    }
    sandbox = await startFullSandbox({ tickSeconds: 3, startTimeoutMs: 300_000 });
    kube = new KubeObjects(sandbox.kc);
    assert.equal((await kube.create(s3rverSecret(SECRET, NS))).kind, 'created');
    const wrong = s3rverSecret('wrong-keys', NS);
    wrong.stringData = { AWS_ACCESS_KEY_ID: 'NOT-S3RVER', AWS_SECRET_ACCESS_KEY: 'NOT-S3RVER' };
    assert.equal((await kube.create(wrong)).kind, 'created');
  });
  after(async () => {
    await sandbox?.stop();
    await s3?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  const s3Source = (key: string, secret = SECRET) => ({
    s3: { endpoint: s3.endpoint, bucket: BUCKET, key, credentialsSecretRef: { name: secret } },
  });

  interface Case {
    name: string;
    version?: string;
    source: Record<string, unknown>;
    reason: string;
    message: RegExp;
    /** the problem is known before any member is created */
    noMember?: boolean;
  }
  const cases = (): Case[] => [
    {
      name: 'no-secret',
      source: s3Source('good.db', 'absent-creds'),
      reason: 'SecretNotFound',
      message: /Secret default\/absent-creds does not exist; create it with AWS_ACCESS_KEY_ID/,
      noMember: true,
    },
    {
      name: 'no-snapshot',
      source: { snapshotRef: { name: 'never-taken' } },
      reason: 'SnapshotNotFound',
      message: /EtcdSnapshot default\/never-taken .* does not exist/,
      noMember: true,
    },
    {
      name: 'pending-snapshot',
      source: { snapshotRef: { name: 'of-a-ghost' } },
      reason: 'SnapshotNotComplete',
      message: /EtcdSnapshot of-a-ghost is (Pending|Started), not Complete/,
      noMember: true,
    },
    {
      name: 'no-key',
      source: s3Source('missing/key.db'),
      reason: 'SnapshotNotFound',
      message: /s3:\/\/etcd-backups\/missing\/key\.db does not exist .*HTTP 404/,
    },
    {
      name: 'denied',
      source: s3Source('good.db', 'wrong-keys'),
      reason: 'AccessDenied',
      message:
        /refused to read s3:\/\/etcd-backups\/good\.db \(HTTP 403\); check the keys in Secret wrong-keys/,
    },
    {
      name: 'bad-sum',
      source: { ...s3Source('good.db'), sha256: '0'.repeat(64) },
      reason: 'ChecksumMismatch',
      message: /has SHA-256 [0-9a-f]{64}, not the expected 0{64}/,
    },
    {
      name: 'corrupt',
      source: s3Source('corrupt.db'),
      reason: 'SnapshotCorrupt',
      message: /fails etcd's own integrity check/,
    },
    {
      // Nothing listens there (an allow-listed loopback address: the policy is not what stops it).
      name: 'unreachable',
      source: {
        s3: {
          endpoint: 'http://127.0.0.3:9',
          bucket: BUCKET,
          key: 'good.db',
          credentialsSecretRef: { name: SECRET },
        },
      },
      reason: 'StoreUnreachable',
      message:
        /cannot read s3:\/\/etcd-backups\/good\.db from http:\/\/127\.0\.0\.3:9: .*check source\.s3\.endpoint/,
    },
    {
      name: 'truncated',
      source: s3Source('truncated.db'),
      reason: 'SnapshotCorrupt',
      message: /fails etcd's own integrity check/,
    },
    {
      // An EtcdSnapshot of that name exists, but in another namespace: a snapshotRef never crosses.
      name: 'other-namespace',
      source: { snapshotRef: { name: 'elsewhere' } },
      reason: 'SnapshotNotFound',
      message: /EtcdSnapshot default\/elsewhere .* does not exist/,
      noMember: true,
    },
    {
      name: 'no-bucket',
      source: {
        s3: {
          endpoint: s3.endpoint,
          bucket: 'no-such-bucket',
          key: 'good.db',
          credentialsSecretRef: { name: SECRET },
        },
      },
      reason: 'SnapshotNotFound',
      message: /s3:\/\/no-such-bucket\/good\.db does not exist .*HTTP 404.*check source\.s3\.bucket/,
    },
    {
      name: 'no-claim',
      source: { pvc: { claimName: 'absent-claim', subPath: 'etcd/a.db' } },
      reason: 'ClaimNotFound',
      message:
        /PersistentVolumeClaim default\/absent-claim holding pvc:\/\/absent-claim\/etcd\/a\.db does not exist; create it/,
      noMember: true,
    },
    {
      name: 'no-file',
      source: { pvc: { claimName: 'backups', subPath: 'etcd/absent.db' } },
      reason: 'SnapshotNotFound',
      message: /pvc:\/\/backups\/etcd\/absent\.db does not exist on the volume/,
    },
  ];

  it('each case ends in Restored=False with its reason, and etcd never starts', async () => {
    // A snapshot that can never complete (its cluster does not exist): Pending for ever.
    await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshot',
      metadata: { name: 'of-a-ghost', namespace: NS },
      spec: { clusterRef: { name: 'ghost' }, destination: s3Source('x/') },
    });
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
    await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshot',
      metadata: { name: 'elsewhere', namespace: 'other' },
      spec: { clusterRef: { name: 'ghost' }, destination: s3Source('x/') },
    });
    await kube.create({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'backups', namespace: NS },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    const all = cases();
    for (const c of all) {
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdCluster',
        metadata: { name: c.name, namespace: NS },
        spec: { replicas: 1, version: c.version ?? '3.5.16', bootstrap: { restore: { source: c.source } } },
      });
      assert.equal(created.kind, 'created', `${c.name}: ${JSON.stringify(created)}`);
    }
    for (const c of all) {
      const cluster = await waitFor(
        `${c.name}: Restored=False ${c.reason}`,
        async () => {
          const read = await kube.get<Cluster>({
            apiVersion: API_VERSION,
            kind: 'EtcdCluster',
            namespace: NS,
            name: c.name,
          });
          const found = read.kind === 'found' ? read.object : undefined;
          const restored = condition(found, 'Restored');
          // Without a member, the bootstrap itself says it is blocked (after the Services exist).
          const blocked = !c.noMember || condition(found, 'Progressing')?.reason === 'RestoreBlocked';
          return restored?.status === 'False' && restored.reason === c.reason && blocked ? found : false;
        },
        { timeoutMs: 240_000, intervalMs: 1000 },
        async () => {
          const read = await kube.get<Cluster>({
            apiVersion: API_VERSION,
            kind: 'EtcdCluster',
            namespace: NS,
            name: c.name,
          });
          return JSON.stringify(read.kind === 'found' ? read.object.status : read);
        },
      );
      const restored = condition(cluster, 'Restored')!;
      assert.match(restored.message, c.message, `${c.name}: ${restored.message}`);
      assert.equal(cluster.status?.clusterID, undefined, `${c.name} never formed`);
      const members = await kube.list<EtcdMember & KubeObject>(
        API_VERSION,
        'EtcdMember',
        NS,
        `etcdfn.io/cluster=${c.name}`,
      );
      const pods = await kube.list<PodLike>('v1', 'Pod', NS, `etcdfn.io/cluster=${c.name}`);
      if (c.noMember) {
        assert.equal(members.length, 0, `${c.name}: no member is created`);
        assert.equal(cluster.status?.phase, 'Bootstrapping');
        const progressing = condition(cluster, 'Progressing');
        assert.equal(progressing?.reason, 'RestoreBlocked');
        continue;
      }
      assert.equal(pods.length, 1, `${c.name}: the seed Pod`);
      const etcd = pods[0].status?.containerStatuses?.find(s => s.name === 'etcd');
      assert.ok(!etcd?.state?.running && !etcd?.started && !etcd?.restartCount, `${c.name}: etcd never ran`);
      const status = (
        await kubectl(sandbox.kubeconfig, 'get', 'pod', pods[0].metadata.name!, '--no-headers')
      ).split(/\s+/)[2];
      assert.match(
        status ?? '',
        /^Init:(Error|CrashLoopBackOff|0\/3)$/,
        `${c.name}: kubectl shows ${status}`,
      );
    }
  });

  it('bootstrap.restore cannot be added to an existing cluster (CEL)', async () => {
    await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: 'existing', namespace: NS },
      spec: { replicas: 0, version: '3.5.16' },
    });
    const patch = JSON.stringify({ spec: { bootstrap: { restore: { source: s3Source('good.db') } } } });
    const refused = await kubectlOutput(
      sandbox.kubeconfig,
      'patch',
      'etcdcluster',
      'existing',
      '--type=merge',
      '-p',
      patch,
    ).then(
      () => undefined,
      (err: { stderr?: string; message?: string }) => err.stderr ?? err.message ?? 'failed',
    );
    assert.match(refused ?? 'accepted', /spec\.bootstrap cannot be added or removed after creation/);
    const both = JSON.stringify({
      spec: { bootstrap: { restore: { source: { ...s3Source('a'), snapshotRef: { name: 'x' } } } } },
    });
    const createBoth = await kubectlOutput(
      sandbox.kubeconfig,
      'patch',
      'etcdcluster',
      'existing',
      '--type=merge',
      '-p',
      both,
    ).then(
      () => undefined,
      (err: { stderr?: string; message?: string }) => err.stderr ?? err.message ?? 'failed',
    );
    assert.match(createBoth ?? 'accepted', /exactly one of s3, pvc or snapshotRef must be set/);
  });
});
