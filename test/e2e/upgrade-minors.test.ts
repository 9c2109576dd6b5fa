// Minor-release moves on the sandbox with chaos on, under one writer: a 3-member cluster created on
// etcd 3.5.35 is upgraded to 3.6.16, then to 3.7.3, then downgraded back to 3.6.16 by etcd's own
// procedure (downgrade enable, each member back once its storage is rewritten, the leader last),
// each by editing spec.version. The writer puts a key every 10 ms from before the first change to
// after the last, following the ready members (acked-writer.ts): every acknowledged put is readable
// afterwards, every member keeps its ID, etcd itself reports the release on every member, and at
// most one member is down at a time. A snapshot taken while the cluster ran 3.5 (to S3, s3rver) is
// restored into a new 3.6 cluster.
//
// Found with this test: etcd 3.7.3 panics at start ("unmarshal should never fail (proto: cannot
// parse invalid wire-format data)", in apply.Apply) when its WAL still holds entries written
// while the cluster ran 3.5 (3.7 no longer reads them). Such entries are replayed until the member
// saves a raft snapshot past them; a cluster that has run 3.6 long enough has. So before 3.7, this
// test waits until every member has saved a raft snapshot on 3.6 (etcd's own counter on its
// metrics port), with spec.options.snapshotCount 1000 so that takes seconds of writing, not
// minutes. etcdfn now checks this itself (it takes 3.7 only once each member's applied raft index
// is past the entries of 3.5 plus its snapshotCount; upgrade-wal-guard.test.ts), so etcdfn may
// still wait a little after that counter moved, while the writer writes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { startWriter, type AckedWriter } from '../support/acked-writer.ts';
import { NS, healingSandbox } from '../support/healing-sandbox.ts';
import { kubectl } from '../support/kubectl.ts';
import { watchReadiness } from '../support/ready-watch.ts';
import { s3rverSecret, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { waitFor } from '../support/wait.ts';

const NAME = 'minors';
const RESTORED = 'minors-restored';
const BUCKET = 'minors';
const SECRET = 'minors-s3';
const KEYS = 200;
type Snapshot = EtcdSnapshot & KubeObject;

describe(
  'etcd 3.5 → 3.6 → 3.7 → 3.6 under one writer, and a 3.5 snapshot into 3.6 (chaos on)',
  { timeout: 1_800_000 },
  () => {
    const world = healingSandbox(41);
    const { start, stop, kube, pods, endpoints, withEtcd, describeWorld } = world;
    let s3: TestS3;
    let writer: AckedWriter | undefined;
    let ids = new Map<string, string>();
    let snapshot: Snapshot;

    before(async () => {
      process.env.ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS = '2';
      // Not 127.0.0.1: a Pod's 127.0.0.1 is the Pod itself on the sandbox.
      s3 = await startS3rver([BUCKET], undefined, '127.0.0.2');
      await start();
      assert.equal((await kube().create(s3rverSecret(SECRET, NS))).kind, 'created');
    });
    after(async () => {
      await writer?.stop();
      await stop();
      await s3?.stop();
    });

    /** Each ready member's etcd, asked directly: name → its own version. */
    async function etcdVersions(name: string): Promise<string[]> {
      const versions: string[] = [];
      for (const pod of await pods(name)) {
        if (!pod.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True')) continue;
        const client = new Etcd3({ hosts: `http://${pod.status.podIP}:2379`, dialTimeout: 2000 });
        try {
          versions.push((await client.maintenance.status()).version);
        } finally {
          client.close();
        }
      }
      return versions;
    }

    /** Raft snapshots each member's etcd process has saved (etcd's counter on its metrics port 2381). */
    async function snapshotsSaved(): Promise<Map<string, number>> {
      const saved = new Map<string, number>();
      for (const pod of await pods(NAME)) {
        const res = await fetch(`http://${pod.status?.podIP}:2381/metrics`);
        const m = /^etcd_debugging_snap_save_total_duration_seconds_count (\d+)/m.exec(await res.text());
        saved.set(pod.metadata.name ?? '', Number(m?.[1] ?? 0));
      }
      return saved;
    }

    /** spec.version to `version`, then converged on it with the same member IDs, one member down at most. */
    async function moveTo(version: string): Promise<void> {
      const since = await world.mark(NAME);
      const readiness = await watchReadiness(world.running().kc, NS, `etcdfn.io/cluster=${NAME}`);
      try {
        await kubectl(
          world.running().kubeconfig,
          'patch',
          'etcdcluster',
          NAME,
          '-n',
          NS,
          '--type=merge',
          '-p',
          JSON.stringify({ spec: { version } }),
        );
        await waitFor(
          `every member on ${version}`,
          async () => {
            const c = await world.cluster(NAME);
            return c.status?.members?.length === 3 && c.status.members.every(m => m.version === version);
          },
          { timeoutMs: 600_000, intervalMs: 1000 },
          describeWorld(NAME),
        );
        const done = await world.converged(NAME, 3, since);
        assert.deepEqual(done.ids, ids, `the same members with the same IDs on ${version}`);
        assert.equal(
          done.cluster.status?.conditions?.find(c => c.type === 'Progressing')?.reason,
          'Reconciled',
        );
      } finally {
        readiness.stop();
      }
      assert.ok(
        readiness.fewest() >= 2,
        `at most one member down at a time (${readiness.seen().join(', ')})`,
      );
      assert.deepEqual(await etcdVersions(NAME), [version, version, version], `etcd itself runs ${version}`);
    }

    it('runs 3 members of etcd 3.5.35 with data, a snapshot of it in S3, and a writer', async () => {
      await world.create(NAME, 3, { version: '3.5.35', options: { snapshotCount: 1000 } });
      ids = (await world.converged(NAME, 3)).ids;
      assert.equal(ids.size, 3);
      await world.writeKeys(NAME, 'before/', KEYS);
      assert.deepEqual(await etcdVersions(NAME), ['3.5.35', '3.5.35', '3.5.35']);
      const created = await kube().create({
        apiVersion: API_VERSION,
        kind: 'EtcdSnapshot',
        metadata: { name: 'minors-35', namespace: NS },
        spec: {
          clusterRef: { name: NAME },
          destination: {
            s3: {
              endpoint: s3.endpoint,
              bucket: BUCKET,
              key: 'minors/',
              credentialsSecretRef: { name: SECRET },
            },
          },
        },
      });
      assert.equal(created.kind, 'created');
      snapshot = await waitFor(
        'EtcdSnapshot minors-35 Complete',
        async () => {
          const read = await kube().get<Snapshot>({
            apiVersion: API_VERSION,
            kind: 'EtcdSnapshot',
            namespace: NS,
            name: 'minors-35',
          });
          const s = read.kind === 'found' ? read.object : undefined;
          if (s?.status?.phase === 'Failed') throw new Error(`snapshot failed: ${JSON.stringify(s.status)}`);
          return s?.status?.phase === 'Complete' ? s : false;
        },
        { timeoutMs: 180_000, intervalMs: 500 },
      );
      writer = startWriter(await endpoints(NAME), 'during/', () => endpoints(NAME));
      await writer.acked(50);
    });

    it('upgrades 3.5.35 → 3.6.16 one member at a time', () => moveTo('3.6.16'));
    it('upgrades 3.6.16 → 3.7.3 one member at a time, once each member saved a raft snapshot on 3.6', async () => {
      const baseline = await snapshotsSaved();
      await waitFor(
        'every member saved a raft snapshot since 3.6 was reached',
        async () => {
          const now = await snapshotsSaved();
          return [...baseline].every(([pod, n]) => (now.get(pod) ?? 0) > n);
        },
        { timeoutMs: 300_000, intervalMs: 2000 },
        describeWorld(NAME),
      );
      await moveTo('3.7.3');
    });
    it("downgrades 3.7.3 → 3.6.16 by etcd's procedure, the leader last", async () => {
      await moveTo('3.6.16');
      const events = await kube().list<KubeObject & { reason?: string; message?: string }>('v1', 'Event', NS);
      assert.ok(
        events.some(e => e.reason === 'DowngradeEnabled'),
        "etcd's downgrade was enabled first",
      );
      const down = events.filter(e => e.reason === 'DowngradingMember').map(e => e.message ?? '');
      for (const name of ids.keys())
        assert.ok(
          down.some(m => m.includes(name)),
          `${name} went back to 3.6.16`,
        );
    });

    it('loses no acknowledged write through the three moves', async t => {
      const w = writer!;
      const acknowledged = w.acknowledged.length;
      await w.acked(acknowledged + 20);
      await w.stop();
      writer = undefined;
      assert.equal(await withEtcd(NAME, c => c.getAll().prefix('before/').count()), KEYS);
      const stored = new Set(await withEtcd(NAME, c => c.getAll().prefix('during/').keys()));
      const lost = w.acknowledged.filter(k => !stored.has(k));
      assert.ok(w.acknowledged.length > 200, `the writer ran throughout (${w.acknowledged.length})`);
      assert.deepEqual(
        lost,
        [],
        `every acknowledged put is readable (${w.acknowledged.length} acknowledged)`,
      );
      t.diagnostic(`writer: ${w.acknowledged.length} acknowledged, ${w.failed()} failed, 0 lost`);
    });

    it('restores the 3.5 snapshot into a new 3.6 cluster', async () => {
      await world.create(RESTORED, 3, {
        version: '3.6.16',
        bootstrap: { restore: { source: { snapshotRef: { name: snapshot.metadata.name } } } },
      });
      await world.converged(RESTORED, 3);
      assert.equal(
        await withEtcd(RESTORED, c => c.getAll().prefix('before/').count()),
        KEYS,
        'every key of the 3.5 snapshot',
      );
      assert.deepEqual(await etcdVersions(RESTORED), ['3.6.16', '3.6.16', '3.6.16']);
      const c = await world.cluster(RESTORED);
      assert.equal(
        c.status?.conditions?.find(x => x.type === 'Restored')?.status,
        'True',
        JSON.stringify(c.status?.conditions),
      );
    });
  },
);
