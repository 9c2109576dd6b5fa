// In-place restore on the sandbox, with real etcd 3.5.16 and 3.6.16, the real functions, the event bridge and
// s3rver on loopback, driven by the real plugin (`kubectl etcdfn restore`): a running 3-member
// cluster with keys A and a user and role (made with etcdctl) is snapshotted, keys B are written,
// and the cluster is restored in place. Afterwards keys A, the user and the role are on every
// member, keys B on none, the Services are the same objects, the etcd cluster ID is new, 3/3 Ready,
// and the Restored condition went through its steps in order. Refusals change nothing: no
// confirmation without a terminal, a snapshot that does not exist, a paused cluster (CEL). Last, a
// new cluster restoring the same snapshot through snapshotRef, whose EtcdSnapshot is deleted once
// the seed has resolved it: the restore goes on from the recorded object.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { beforeCreation, converged, mark } from '../support/converge.ts';
import { etcdBinaries } from '../support/etcd-binaries.ts';
import { s3rverSecret, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';
import { clusterIdOf, condition, podIPs, type Cluster } from './restore-support.ts';

const NS = 'default';
const NAME = 'inplace';
const BUCKET = 'etcd-backups';
const SECRET = 'restore-s3';
const A = 500;
const B = 200;
const scripts = resolve(import.meta.dirname, '..', '..', 'scripts');

type Snapshot = EtcdSnapshot & KubeObject;
type Member = EtcdMember & KubeObject;
interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// Both minors tested here (3.5 and 3.6): each restores with its own etcdutl.
for (const VERSION of ['3.5.16', '3.6.16'])
  describe(
    `in-place restore (sandbox, etcd ${VERSION}, s3rver, kubectl etcdfn)`,
    { timeout: 1_200_000 },
    () => {
      const home = mkdtempSync(join(tmpdir(), 'etcdfn-restore-home-'));
      let sandbox: FullSandbox;
      let s3: TestS3;
      let kube: KubeObjects;
      const clusterRef = () => ({ kube, namespace: NS, name: NAME });
      const ref = (kind: string, name: string, apiVersion = API_VERSION) => ({
        apiVersion,
        kind,
        namespace: NS,
        name,
      });
      const getCluster = async (): Promise<Cluster> => {
        const read = await kube.get<Cluster>(ref('EtcdCluster', NAME));
        assert.equal(read.kind, 'found');
        return read.object;
      };
      const describeWorld = async () =>
        `cluster: ${JSON.stringify((await getCluster()).status)}\n${sandbox.output().slice(-4000)}`;

      const etcdfn = (...args: string[]): Promise<Run> =>
        new Promise(done => {
          const env = { ...process.env, HOME: home, PATH: `${scripts}${delimiter}${process.env.PATH ?? ''}` };
          const child = execFile(
            'kubectl',
            ['etcdfn', ...args, '--kubeconfig', sandbox.kubeconfig],
            { env },
            (err, stdout, stderr) =>
              done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
          );
          child.stdin?.end();
        });

      const etcdctl = (ip: string, ...args: string[]): string =>
        execFileSync(etcdBinaries('3.5').etcdctl, [`--endpoints=http://${ip}:2379`, ...args], {
          encoding: 'utf8',
          env: { ...process.env, ETCDCTL_API: '3' },
        });

      async function put(ip: string, prefix: string, count: number): Promise<void> {
        const client = new Etcd3({ hosts: `http://${ip}:2379` });
        try {
          for (let n = 0; n < count; n += 50) {
            const ops = [];
            for (let k = n; k < Math.min(count, n + 50); k++)
              ops.push(client.put(`${prefix}${k}`).value(`v${k}`));
            await client
              .if(`${prefix}${n}`, 'Create', '>', -1)
              .then(...ops)
              .commit();
          }
        } finally {
          client.close();
        }
      }

      /** What one member holds itself (serializable reads): the keys under a/ and b/. */
      async function keysOn(ip: string): Promise<{ a: number; b: number; sample: string | null }> {
        const client = new Etcd3({ hosts: `http://${ip}:2379` });
        try {
          const a = await client.getAll().prefix('a/').serializable(true).count();
          const b = await client.getAll().prefix('b/').serializable(true).count();
          const sample = await client.get('a/123').serializable(true).string();
          return { a, b, sample };
        } finally {
          client.close();
        }
      }

      before(async () => {
        // Not 127.0.0.1: a Pod's 127.0.0.1 is the Pod itself on the sandbox (as on a real node).
        s3 = await startS3rver([BUCKET], undefined, '127.0.0.2');
        sandbox = await startFullSandbox({ tickSeconds: 5, startTimeoutMs: 300_000 });
        kube = new KubeObjects(sandbox.kc);
        assert.equal((await kube.create(s3rverSecret(SECRET, NS))).kind, 'created');
      });
      after(async () => {
        await sandbox?.stop();
        await s3?.stop();
        rmSync(home, { recursive: true, force: true });
      });

      let snapshot: Snapshot;
      let oldClusterId: string;
      let services: Map<string, string>;

      it('a running 3-member cluster with keys A, a user and a role is snapshotted; then keys B are written', async () => {
        const created = await kube.create({
          apiVersion: API_VERSION,
          kind: 'EtcdCluster',
          metadata: { name: NAME, namespace: NS },
          spec: { replicas: 3, version: VERSION },
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
        await put(ip, 'a/', A);
        etcdctl(ip, 'role', 'add', 'reader');
        etcdctl(ip, 'role', 'grant-permission', 'reader', 'read', 'a/', '--prefix=true');
        etcdctl(ip, 'user', 'add', 'alice', '--new-user-password=s3cret-pass');
        etcdctl(ip, 'user', 'grant-role', 'alice', 'reader');
        oldClusterId = await clusterIdOf(ip);

        const snap = await kube.create({
          apiVersion: API_VERSION,
          kind: 'EtcdSnapshot',
          metadata: { name: 'snapa', namespace: NS },
          spec: {
            clusterRef: { name: NAME },
            destination: {
              s3: {
                endpoint: s3.endpoint,
                bucket: BUCKET,
                key: 'inplace/',
                credentialsSecretRef: { name: SECRET },
              },
            },
          },
        });
        assert.equal(snap.kind, 'created');
        snapshot = await waitFor(
          'EtcdSnapshot snapa Complete',
          async () => {
            const read = await kube.get<Snapshot>(ref('EtcdSnapshot', 'snapa'));
            const s = read.kind === 'found' ? read.object : undefined;
            if (s?.status?.phase === 'Failed')
              throw new Error(`snapshot failed: ${JSON.stringify(s.status)}`);
            return s?.status?.phase === 'Complete' ? s : false;
          },
          { timeoutMs: 180_000, intervalMs: 500 },
        );
        await put(ip, 'b/', B);
        const before = await keysOn(ip);
        assert.deepEqual([before.a, before.b], [A, B]);
        services = new Map();
        for (const svc of await kube.list<KubeObject>('v1', 'Service', NS, `etcdfn.io/cluster=${NAME}`))
          services.set(svc.metadata.name ?? '', svc.metadata.uid ?? '');
        assert.ok(services.size >= 2, `the cluster's Services: ${[...services.keys()].join(', ')}`);
      });

      it('refusals change nothing: no terminal to confirm on, a missing snapshot, a request on a paused cluster', async () => {
        const unconfirmed = await etcdfn('restore', NAME, '--from', 'snapa');
        assert.equal(unconfirmed.code, 1);
        assert.match(unconfirmed.stderr, /no terminal to confirm on: pass --yes-destroy-current-data/);
        const missing = await etcdfn('restore', NAME, '--from', 'nosuch', '--yes-destroy-current-data');
        assert.equal(missing.code, 1);
        assert.match(missing.stderr, /etcdsnapshot "nosuch" not found.*nothing was changed/);
        assert.equal((await getCluster()).spec.inPlaceRestore, undefined, 'no request recorded');
        // The API server itself refuses a request that cannot work (CEL), whoever writes it.
        const paused = await kube.mergePatch(ref('EtcdCluster', NAME), {
          spec: { replicas: 0, inPlaceRestore: { requestID: 'r-paused', snapshotRef: { name: 'snapa' } } },
        });
        assert.equal(paused.kind, 'invalid');
        assert.match(
          (paused as { message?: string }).message ?? '',
          /spec.inPlaceRestore needs a running cluster, and spec.replicas is 0/,
        );
        assert.equal((await getCluster()).spec.replicas, 3);
      });

      it('kubectl etcdfn restore --from snapa: keys A back, keys B gone, same Services, new cluster ID, 3/3 Ready', async t => {
        const since = await mark(clusterRef());
        const seen: string[] = [];
        let watching = true;
        const watcher = (async () => {
          while (watching) {
            const r = condition(await getCluster(), 'Restored');
            const step = r ? `${r.status}/${r.reason}` : '';
            if (step && seen.at(-1) !== step) seen.push(step);
            await new Promise(res => setTimeout(res, 200));
          }
        })();
        const run = await etcdfn('restore', NAME, '--from', 'snapa', '--yes-destroy-current-data');
        assert.equal(run.code, 0, run.stderr);
        const requestID = /request (r[0-9a-f-]+)\)/.exec(run.stdout)?.[1];
        assert.ok(requestID, run.stdout);
        const cluster = await converged(clusterRef(), {
          replicas: 3,
          since,
          timeoutMs: 600_000,
          describe: describeWorld,
          also: async c => {
            const record = c.status?.inPlaceRestore;
            if (record?.requestID !== requestID) return `request ${requestID} not recorded yet`;
            return record.step === 'Done' ? undefined : `in-place restore at step ${record.step}`;
          },
        });
        watching = false;
        await watcher;
        t.diagnostic(`Restored condition seen: ${seen.join(' → ')}`);

        const restored = condition(cluster, 'Restored');
        assert.equal(restored?.status, 'True', JSON.stringify(cluster.status?.conditions));
        assert.match(restored?.message ?? '', /restored EtcdSnapshot snapa \(request .*\) in place/);
        // The steps in order (a fast step may be missed by the poll, never seen out of order).
        const order = [
          'Unknown/Requested',
          'Unknown/Stopping',
          'Unknown/RestoringSeed',
          'Unknown/Rejoining',
          'True/Restored',
        ];
        const positions = seen.map(s => order.indexOf(s));
        assert.ok(
          positions.every(p => p >= 0),
          `unexpected step in ${seen.join(' → ')}`,
        );
        assert.deepEqual(
          [...positions].sort((x, y) => x - y),
          positions,
          `steps out of order: ${seen.join(' → ')}`,
        );
        assert.ok(
          seen.includes('Unknown/Stopping') || seen.includes('Unknown/RestoringSeed'),
          seen.join(' → '),
        );

        const record = cluster.status!.inPlaceRestore!;
        assert.deepEqual(record.members, [`${NAME}-0`, `${NAME}-1`, `${NAME}-2`]);
        assert.equal(
          record.previousClusterID && BigInt(`0x${record.previousClusterID}`),
          BigInt(`0x${oldClusterId}`),
        );
        const ips = await podIPs(kube, NS, NAME);
        assert.equal(ips.length, 3);
        const newId = await clusterIdOf(ips[0]);
        assert.notEqual(newId, oldClusterId, 'a new etcd cluster ID');
        assert.equal(BigInt(`0x${cluster.status?.clusterID ?? ''}`), BigInt(`0x${newId}`));
        for (const ip of ips) {
          const keys = await keysOn(ip);
          assert.deepEqual(keys, { a: A, b: 0, sample: 'v123' }, `member ${ip}: keys A back, keys B gone`);
          assert.equal(await clusterIdOf(ip), newId);
          // Users and roles are data in the snapshot, kept by etcd's restore.
          assert.match(etcdctl(ip, 'user', 'list'), /^alice$/m);
          assert.match(etcdctl(ip, 'user', 'get', 'alice'), /Roles: reader/);
          assert.match(etcdctl(ip, 'role', 'get', 'reader'), /\[a\/, a0\)/);
        }
        const members = (cluster.status?.members ?? []).map(m => m.name).sort();
        assert.deepEqual(members, [`${NAME}-3`, `${NAME}-4`, `${NAME}-5`], 'new members; names never reused');
        const after = new Map<string, string>();
        for (const svc of await kube.list<KubeObject>('v1', 'Service', NS, `etcdfn.io/cluster=${NAME}`))
          after.set(svc.metadata.name ?? '', svc.metadata.uid ?? '');
        assert.deepEqual(after, services, 'the same Service objects (names and UIDs)');
        assert.ok(snapshot.status?.artifact?.uri);
      });

      it('the request is done once: two resync ticks later nothing restored again, and a write survives', async () => {
        const [ip] = await podIPs(kube, NS, NAME);
        await put(ip, 'c/', 1);
        // Two ticks answered by reconcile-cluster after the write: it re-planned the cluster from scratch.
        const TICK = 'dev.knative.sources.ping';
        const ticks = sandbox.delivered('reconcile-cluster', TICK);
        await waitFor(
          'two resync ticks answered by reconcile-cluster',
          async () => sandbox.delivered('reconcile-cluster', TICK) >= ticks + 2,
          { timeoutMs: 120_000, intervalMs: 500 },
        );
        const client = new Etcd3({ hosts: `http://${ip}:2379` });
        try {
          assert.equal(await client.get('c/0').string(), 'v0');
          assert.equal(await client.getAll().prefix('a/').count(), A);
        } finally {
          client.close();
        }
        const cluster = await getCluster();
        assert.equal(cluster.status?.inPlaceRestore?.step, 'Done');
        assert.equal(cluster.status?.ready, '3/3');
        assert.deepEqual((cluster.status?.members ?? []).map(m => m.name).sort(), [
          `${NAME}-3`,
          `${NAME}-4`,
          `${NAME}-5`,
        ]);
      });

      it('a snapshotRef deleted after the seed resolved it: the restore goes on from the recorded object', async () => {
        // The EtcdSnapshot keeps its object when deleted (deletionPolicy Retain, the default).
        const name = 'fromref';
        const created = await kube.create({
          apiVersion: API_VERSION,
          kind: 'EtcdCluster',
          metadata: { name, namespace: NS },
          spec: {
            replicas: 3,
            version: VERSION,
            bootstrap: { restore: { source: { snapshotRef: { name: 'snapa' } } } },
          },
        });
        assert.equal(created.kind, 'created');
        const seed = await waitFor(
          `${name}: the seed member, with the resolved object`,
          async () => {
            const members = await kube.list<Member>(
              API_VERSION,
              'EtcdMember',
              NS,
              `etcdfn.io/cluster=${name}`,
            );
            return members.find(m => m.spec.bootstrap === true && m.spec.restore?.source.s3) ?? false;
          },
          { timeoutMs: 120_000, intervalMs: 250 },
        );
        assert.equal(`s3://${BUCKET}/${seed.spec.restore?.source.s3?.key}`, snapshot.status?.artifact?.uri);
        await kube.delete(ref('EtcdSnapshot', 'snapa'));
        await waitFor(
          'EtcdSnapshot snapa gone',
          async () => (await kube.get(ref('EtcdSnapshot', 'snapa'))).kind === 'not-found',
          { timeoutMs: 60_000, intervalMs: 250 },
        );
        const seen = new Set<string>();
        const cluster = await converged(
          { kube, namespace: NS, name },
          {
            replicas: 3,
            since: beforeCreation(),
            timeoutMs: 400_000,
            also: async c => {
              const r = condition(c, 'Restored');
              if (r) seen.add(`${r.status}/${r.reason}`);
              return r?.status === 'True' ? undefined : `Restored ${r?.status}/${r?.reason}`;
            },
          },
        );
        assert.ok(
          ![...seen].some(x => x.startsWith('False/')),
          `Restored never False: ${[...seen].join(', ')}`,
        );
        assert.match(
          condition(cluster, 'Restored')?.message ?? '',
          /the cluster was restored from EtcdSnapshot snapa/,
        );
        for (const ip of await podIPs(kube, NS, name)) {
          const keys = await keysOn(ip);
          assert.deepEqual(keys, { a: A, b: 0, sample: 'v123' }, `member ${ip} of ${name}`);
        }
      });
    },
  );
