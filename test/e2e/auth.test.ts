// etcd auth on the sandbox with real etcd 3.5.16 (plaintext client traffic), the real functions,
// the event bridge and s3rver on loopback:
// - a 3-member cluster whose root password comes from the user's kubernetes.io/basic-auth Secret
//   becomes Running with status.authEnabled; etcd refuses a client without credentials and accepts
//   root with the Secret's password; a new password put in the Secret is rotated into etcd (the old
//   one is then refused) and the operator keeps working with it: 3 → 4; an EtcdSnapshot to S3
//   completes, and a cluster restored from it has the user and role created before the snapshot;
//   an EtcdSnapshot to a PVC completes too (its Job's agent logs in as root from a mounted file);
//   the kubectl plugin's health and members (run in-process) log in with the operator's copy;
// - a cluster whose Secret does not exist gets one generated (basic-auth, owned by the cluster),
//   and etcd takes that password.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { runHealth, type HealthView } from '../../cli/health.ts';
import { runMembers } from '../../cli/members.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { isAuthOldRevision } from '../../shared/etcd/connection.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { healingSandbox, NS } from '../support/healing-sandbox.ts';
import { etcdBinaries } from '../support/etcd-binaries.ts';
import { s3rverSecret, sha256, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { waitFor } from '../support/wait.ts';

const SECRET = 'au-root';
const GENERATED = 'ag-root';
const S3_SECRET = 'au-s3';
const CLAIM = 'au-backups';
const BUCKET = 'etcd-backups';
const FIRST = 'first-pass-1';
const SECOND = 'second-pass-2';
type Snapshot = EtcdSnapshot & KubeObject;
interface SecretLike extends KubeObject {
  type?: string;
  data?: Record<string, string>;
  metadata: KubeObject['metadata'] & { ownerReferences?: { kind: string; name: string }[] };
}

describe('etcd auth (etcd 3.5.16, s3rver)', { timeout: 900_000 }, () => {
  let s3: TestS3 | undefined;
  const world = healingSandbox(21, { chaos: false });
  const { kube, cluster, clusterRef, endpoints, mark, converged, create, describeWorld, useLogin, running } =
    world;
  before(async () => {
    process.env.ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS = '2';
    // Not 127.0.0.1: a Pod's 127.0.0.1 is the Pod itself on the sandbox (as on a real node).
    s3 = await startS3rver([BUCKET], undefined, '127.0.0.2');
    await world.start();
  });
  after(async () => {
    await world.stop();
    await s3?.stop();
  });

  const slow = { timeoutMs: 240_000, intervalMs: 1000 };
  const root = (password: string) => ({ username: 'root', password });
  const auth = (secret: string) => ({ auth: { enabled: true, rootCredentialsSecretRef: { name: secret } } });

  /**
   * Runs `fn` against the cluster's ready members with `login`; its error message otherwise. Like
   * etcd's Go client (etcd3 for Node does not), a call refused because the auth store changed
   * after the login ("revision of auth store is old", nothing applied) logs in again and retries once.
   */
  async function asClient<T>(
    name: string,
    login: { username: string; password: string } | undefined,
    fn: (client: Etcd3) => Promise<T>,
    retried = false,
  ): Promise<T | string> {
    const client = new Etcd3({ hosts: await endpoints(name), dialTimeout: 2000, auth: login });
    try {
      return await fn(client);
    } catch (err) {
      const message = (err as Error).message;
      if (login && !retried && isAuthOldRevision(message)) return asClient(name, login, fn, true);
      return `refused: ${message}`;
    } finally {
      client.close();
    }
  }
  const put = (name: string, login?: { username: string; password: string }) =>
    asClient(name, login, async c => {
      await c.put('probe').value('x').exec();
      return 'ok';
    });

  const authEnabled = (name: string) =>
    waitFor(
      `${name}: status.authEnabled`,
      async () => (await cluster(name)).status?.authEnabled === true,
      slow,
      describeWorld(name),
    );

  async function readSecret(name: string): Promise<SecretLike | undefined> {
    const read = await kube().get<SecretLike>({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name });
    return read.kind === 'found' ? read.object : undefined;
  }

  it('turns auth on with the Secret’s password, refuses clients without it, keeps users through rotation', async () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/basic-auth',
      metadata: { name: SECRET, namespace: NS },
      stringData: { username: 'root', password: FIRST },
    };
    assert.equal((await kube().create(secret)).kind, 'created');
    await create('au', 3, auth(SECRET));
    // The generated case runs alongside (checked in the last test).
    await create('ag', 1, auth(GENERATED));
    await authEnabled('au');
    useLogin('au', root(FIRST));
    const { cluster: ready } = await converged('au', 3);
    assert.equal(ready.status?.authEnabled, true);

    assert.match(String(await put('au')), /^refused/, 'a client without credentials is refused');
    assert.match(String(await put('au', root('wrong-pass'))), /^refused/, 'a wrong password is refused');
    assert.equal(await put('au', root(FIRST)), 'ok', "the Secret's password works");

    // A user and a role of the user's own, to find again after the restore.
    const made = await asClient('au', root(FIRST), async c => {
      await c.role('reader').create();
      await c.role('reader').grant({ permission: 'Read', range: c.range({ prefix: 'app/' }) });
      await c.user('alice').create('alice-pass-3');
      await c.user('alice').addRole('reader');
      await c.put('app/greeting').value('hello').exec();
      return 'ok';
    });
    assert.equal(made, 'ok');

    const patched = await kube().mergePatch(
      { apiVersion: 'v1', kind: 'Secret', namespace: NS, name: SECRET },
      { stringData: { password: SECOND } },
    );
    assert.equal(patched.kind, 'written');
    await waitFor(
      'the new password works',
      async () => (await put('au', root(SECOND))) === 'ok',
      slow,
      describeWorld('au'),
    );
    assert.match(String(await put('au', root(FIRST))), /^refused/, 'the old password is refused');
    useLogin('au', root(SECOND));
  });

  it('scales 3 → 4 with auth on', async () => {
    const scaling = await mark('au');
    await kube().mergePatch(clusterRef('au'), { spec: { replicas: 4 } });
    const scaled = await converged('au', 4, scaling);
    assert.equal(scaled.ids.size, 4);
    assert.equal(await put('au', root(SECOND)), 'ok');
    assert.match(String(await put('au')), /^refused/);
  });

  it('kubectl etcdfn health and members log in as root on an auth cluster', async () => {
    const cli = { kube: kube(), namespace: NS, server: 'sandbox' };
    const health = JSON.parse((await runHealth(cli, 'au', 'json')).text) as HealthView;
    assert.equal(health.healthy, true, JSON.stringify(health));
    assert.equal(health.members.length, 4);
    const members = JSON.parse(await runMembers(cli, 'au', 'json')) as { etcd: { members: unknown[] } };
    assert.equal(members.etcd.members.length, 4, JSON.stringify(members));
  });

  it('snapshots to S3 with auth on; a cluster restored from it keeps users and roles', async () => {
    assert.ok(s3);
    assert.equal((await kube().create(s3rverSecret(S3_SECRET, NS))).kind, 'created');
    const created = await kube().create({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshot',
      metadata: { name: 'au-snap', namespace: NS },
      spec: {
        clusterRef: { name: 'au' },
        destination: {
          s3: {
            endpoint: s3.endpoint,
            bucket: BUCKET,
            key: 'auth/',
            credentialsSecretRef: { name: S3_SECRET },
          },
        },
      },
    });
    assert.equal(created.kind, 'created');
    const snap = await waitFor(
      'EtcdSnapshot au-snap Complete',
      async () => {
        const read = await kube().get<Snapshot>({
          ...clusterRef('au'),
          kind: 'EtcdSnapshot',
          name: 'au-snap',
        });
        const s = read.kind === 'found' ? read.object : undefined;
        if (s?.status?.phase === 'Failed') throw new Error(`snapshot failed: ${JSON.stringify(s.status)}`);
        return s?.status?.phase === 'Complete' ? s : false;
      },
      slow,
      describeWorld('au'),
    );
    assert.ok((snap.status?.artifact?.revision ?? 0) > 1);

    // The restored data has root with the password at the snapshot: the same Secret names it.
    await create('ar', 1, {
      ...auth(SECRET),
      bootstrap: { restore: { source: { snapshotRef: { name: 'au-snap' } } } },
    });
    await authEnabled('ar');
    useLogin('ar', root(SECOND));
    await converged('ar', 1);
    assert.match(
      String(await put('ar')),
      /^refused/,
      'the restored cluster refuses a client without credentials',
    );
    const seen = await asClient('ar', root(SECOND), async c => ({
      users: (await c.getUsers()).map(u => u.name).sort(),
      roles: (await c.getRoles()).map(r => r.name).sort(),
      aliceRoles: (await c.user('alice').roles()).map(r => r.name),
      readerRange: (await c.role('reader').permissions()).map(p => p.permission),
    }));
    assert.deepEqual(seen, {
      users: ['alice', 'root'],
      roles: ['reader', 'root'],
      aliceRoles: ['reader'],
      readerRange: ['Read'],
    });
    const asAlice = await asClient('ar', { username: 'alice', password: 'alice-pass-3' }, async c =>
      c.get('app/greeting').string(),
    );
    assert.equal(asAlice, 'hello', 'alice reads what her role allows, with the password she had');
  });

  it('snapshots to a PVC with auth on: the Job logs in as root, the file on the claim is verified', async () => {
    const claim = await kube().create({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: CLAIM, namespace: NS },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    assert.equal(claim.kind, 'created');
    const claimUid = claim.kind === 'created' ? (claim.object.metadata as { uid?: string }).uid : '';
    const created = await kube().create({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshot',
      metadata: { name: 'au-pvc', namespace: NS },
      spec: { clusterRef: { name: 'au' }, destination: { pvc: { claimName: CLAIM } } },
    });
    assert.equal(created.kind, 'created');
    const snap = await waitFor(
      'EtcdSnapshot au-pvc Complete',
      async () => {
        const read = await kube().get<Snapshot>({
          ...clusterRef('au'),
          kind: 'EtcdSnapshot',
          name: 'au-pvc',
        });
        const s = read.kind === 'found' ? read.object : undefined;
        if (s?.status?.phase === 'Failed') throw new Error(`snapshot failed: ${JSON.stringify(s.status)}`);
        return s?.status?.phase === 'Complete' ? s : false;
      },
      slow,
      describeWorld('au'),
    );
    const verified = snap.status?.conditions?.find(c => c.type === 'Verified');
    assert.equal(verified?.status, 'True', JSON.stringify(verified));

    // The file, read by the test from the claim's directory: the recorded SHA-256, and etcd's own
    // tool reads it (the revision the status records, the keys written with auth on among them).
    const file = `au-pvc-${(snap.metadata.uid ?? '').slice(0, 8)}.db`;
    assert.equal(snap.status?.artifact?.uri, `pvc://${CLAIM}/${file}`);
    const path = join(running().dir, 'kubelet', 'pvcs', NS, `${CLAIM}-${claimUid}`, file);
    const bytes = readFileSync(path);
    assert.equal(`sha256:${sha256(bytes)}`, snap.status?.artifact?.checksum);
    const status = JSON.parse(
      execFileSync(etcdBinaries('3.5').etcdutl ?? 'etcdutl', ['snapshot', 'status', path, '-w', 'json'], {
        encoding: 'utf8',
      }),
    ) as { revision: number; totalKey: number };
    assert.equal(snap.status?.artifact?.revision, status.revision);
    assert.ok(status.totalKey >= 2, 'probe and app/greeting are in it');
    // Mounted as a file, never logged: the password is nowhere in the sandbox's output.
    assert.ok(!running().output().includes(SECOND), 'the root password is not in any log');
  });

  it('generates the root Secret when it does not exist, and etcd takes its password', async () => {
    const secret = await waitFor(
      'the generated Secret',
      () => readSecret(GENERATED),
      slow,
      describeWorld('ag'),
    );
    assert.equal(secret.type, 'kubernetes.io/basic-auth');
    assert.equal(secret.metadata.ownerReferences?.[0]?.name, 'ag');
    const password = Buffer.from(secret.data?.password ?? '', 'base64').toString();
    assert.equal(Buffer.from(secret.data?.username ?? '', 'base64').toString(), 'root');
    assert.ok(password.length >= 16, 'a long generated password');
    await authEnabled('ag');
    useLogin('ag', root(password));
    await converged('ag', 1);
    assert.equal(await put('ag', root(password)), 'ok');
    assert.match(String(await put('ag')), /^refused/);
  });
});
