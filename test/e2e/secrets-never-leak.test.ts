// Secrets never leak: after a run on the sandbox that uses S3 credentials (a snapshot that succeeds
// with the right ones, one that fails with wrong ones, one whose Secret lacks a key) and etcd auth
// (the root password turned on, used by every call, then rotated to a new one), every log line
// of every sandbox process (functions, event bridge, API server, kubelet, etcd), every Event, and
// every etcdfn object with its status and conditions is searched for each secret value, as written
// and base64-encoded. Any hit fails the test and says where.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { S3RVER_CREDENTIALS, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { beforeCreation, converged } from '../support/converge.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'default';
const CLUSTER = 'leakcheck';
const BUCKET = 'etcd-backups';
type Snapshot = EtcdSnapshot & KubeObject;

/** Every log file the sandbox wrote (functions, bridge, API server, kubelet, each container). */
function logFiles(dir: string): [string, string][] {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return logFiles(path);
    return name.endsWith('.log') ? [[path, readFileSync(path, 'utf8')] as [string, string]] : [];
  });
}

// Values that cannot appear by accident anywhere else.
const WRONG_ACCESS_KEY = `AKIALEAK${randomBytes(6).toString('hex').toUpperCase()}`;
const WRONG_SECRET_KEY = `leak-${randomBytes(18).toString('base64url')}`;
const LONE_SECRET_KEY = `lone-${randomBytes(18).toString('base64url')}`;
const ROOT_PASSWORD = `root-${randomBytes(18).toString('base64url')}`;
const ROTATED_PASSWORD = `rotated-${randomBytes(18).toString('base64url')}`;
const ROOT_SECRET = 'leakcheck-root';

describe('secret values never reach logs, Events or status', { timeout: 600_000 }, () => {
  let sandbox: FullSandbox;
  let s3: TestS3;
  let kube: KubeObjects;

  before(async () => {
    process.env.ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS = '2';
    // The sandbox's processes log everything they would, so there is the most to search.
    process.env.LOG_LEVEL = 'debug';
    s3 = await startS3rver([BUCKET]);
    sandbox = await startFullSandbox({ tickSeconds: 2, startTimeoutMs: 300_000 });
    kube = new KubeObjects(sandbox.kc);
  });
  after(async () => {
    await sandbox?.stop();
    await s3?.stop();
  });

  const secret = (name: string, data: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: NS },
    stringData: data,
  });

  async function snapshot(name: string, secretName: string): Promise<Snapshot> {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshot',
      metadata: { name, namespace: NS },
      spec: {
        clusterRef: { name: CLUSTER },
        destination: {
          s3: {
            endpoint: s3.endpoint,
            bucket: BUCKET,
            key: 'leak/',
            credentialsSecretRef: { name: secretName },
          },
        },
      },
    });
    assert.equal(created.kind, 'created');
    return waitFor(
      `EtcdSnapshot ${name} Complete or Failed`,
      async () => {
        const read = await kube.get<Snapshot>({
          apiVersion: API_VERSION,
          kind: 'EtcdSnapshot',
          namespace: NS,
          name,
        });
        const phase = read.kind === 'found' ? read.object.status?.phase : undefined;
        return (phase === 'Complete' || phase === 'Failed') && read.kind === 'found' ? read.object : false;
      },
      { timeoutMs: 180_000, intervalMs: 500 },
      describeLogs,
    );
  }

  const describeLogs = () =>
    logFiles(sandbox.dir)
      .map(([path, text]) => `--- ${path}\n${text.slice(-1500)}`)
      .join('\n');

  const clusterRead = () =>
    kube.get<KubeObject & { status?: { authEnabled?: boolean } }>({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      namespace: NS,
      name: CLUSTER,
    });
  async function putAsRoot(password: string): Promise<boolean> {
    const pods = await kube.list<KubeObject & { status?: { podIP?: string } }>('v1', 'Pod', NS);
    const hosts = pods.filter(p => p.status?.podIP).map(p => `http://${p.status?.podIP}:2379`);
    const client = new Etcd3({ hosts, dialTimeout: 2000, auth: { username: 'root', password } });
    try {
      await client.put('leak-probe').value('x').exec();
      return true;
    } catch {
      return false;
    } finally {
      client.close();
    }
  }

  it('runs an auth cluster, rotates its root password, snapshots with right, wrong and incomplete credentials', async () => {
    const rootSecret = {
      ...secret(ROOT_SECRET, { username: 'root', password: ROOT_PASSWORD }),
      type: 'kubernetes.io/basic-auth',
    };
    assert.equal((await kube.create(rootSecret)).kind, 'created');
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: CLUSTER, namespace: NS },
      spec: {
        replicas: 1,
        version: '3.5.16',
        auth: { enabled: true, rootCredentialsSecretRef: { name: ROOT_SECRET } },
      },
    });
    assert.equal(created.kind, 'created');
    await waitFor(
      'status.authEnabled',
      async () => {
        const read = await clusterRead();
        return read.kind === 'found' && read.object.status?.authEnabled === true;
      },
      { timeoutMs: 300_000, intervalMs: 1000 },
      describeLogs,
    );
    await converged(
      { kube, namespace: NS, name: CLUSTER },
      {
        replicas: 1,
        since: beforeCreation(),
        timeoutMs: 300_000,
        describe: describeLogs,
        auth: { username: 'root', password: ROOT_PASSWORD },
      },
    );
    const patched = await kube.mergePatch(
      { apiVersion: 'v1', kind: 'Secret', namespace: NS, name: ROOT_SECRET },
      { stringData: { password: ROTATED_PASSWORD } },
    );
    assert.equal(patched.kind, 'written');
    await waitFor('the rotated password works', () => putAsRoot(ROTATED_PASSWORD), {
      timeoutMs: 180_000,
      intervalMs: 1000,
    });
    for (const [name, data] of [
      [
        'right',
        {
          AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
          AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
        },
      ],
      ['wrong', { AWS_ACCESS_KEY_ID: WRONG_ACCESS_KEY, AWS_SECRET_ACCESS_KEY: WRONG_SECRET_KEY }],
      ['lone', { AWS_SECRET_ACCESS_KEY: LONE_SECRET_KEY }],
    ] as const) {
      assert.equal((await kube.create(secret(`creds-${name}`, data))).kind, 'created');
    }
    assert.equal((await snapshot('with-right', 'creds-right')).status?.phase, 'Complete');
    const wrong = await snapshot('with-wrong', 'creds-wrong');
    assert.equal(wrong.status?.phase, 'Failed');
    const lone = await snapshot('with-lone', 'creds-lone');
    assert.equal(lone.status?.phase, 'Failed');
  });

  it('finds no secret value in any log line, Event, object or status', async () => {
    const needles = [
      WRONG_ACCESS_KEY,
      WRONG_SECRET_KEY,
      LONE_SECRET_KEY,
      S3RVER_CREDENTIALS.secretAccessKey,
      ROOT_PASSWORD,
      ROTATED_PASSWORD,
    ];
    const forms = needles.flatMap(n => [n, Buffer.from(n).toString('base64')]);
    // Positive control: the search does find the values where they belong (the Secrets).
    const secrets = JSON.stringify(await kube.list('v1', 'Secret', NS));
    for (const n of [WRONG_ACCESS_KEY, WRONG_SECRET_KEY, LONE_SECRET_KEY, ROTATED_PASSWORD])
      assert.ok(secrets.includes(Buffer.from(n).toString('base64')), 'the Secret holds the value');

    const haystacks: [string, string][] = [['sandbox output', sandbox.output()], ...logFiles(sandbox.dir)];
    for (const [apiVersion, kind] of [
      ['v1', 'Event'],
      ['events.k8s.io/v1', 'Event'],
      [API_VERSION, 'EtcdCluster'],
      [API_VERSION, 'EtcdMember'],
      [API_VERSION, 'EtcdSnapshot'],
      [API_VERSION, 'EtcdSnapshotSchedule'],
      ['v1', 'Pod'],
      ['v1', 'PersistentVolumeClaim'],
      ['v1', 'Service'],
    ]) {
      for (const item of await kube.list(apiVersion, kind, '')) {
        haystacks.push([`${kind} ${item.metadata.namespace}/${item.metadata.name}`, JSON.stringify(item)]);
      }
    }
    assert.ok(haystacks.length > 10, 'objects to search');
    const logged = haystacks.filter(([where]) => where.endsWith('.log'));
    assert.ok(
      logged.some(([where]) => where.endsWith('functions.log')),
      'the functions log is searched',
    );
    assert.ok(logged.reduce((n, [, text]) => n + text.length, 0) > 10_000, 'the sandbox wrote logs');
    const hits: string[] = [];
    for (const [where, text] of haystacks) {
      for (const form of forms) {
        const at = text.indexOf(form);
        if (at >= 0) hits.push(`${where}: …${text.slice(Math.max(0, at - 120), at + form.length + 40)}…`);
      }
    }
    assert.deepEqual(hits, []);
  });
});
