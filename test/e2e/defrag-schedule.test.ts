// The defragmentation schedule on the sandbox (etcd 3.5.16): a fragmented 3-member cluster gets
// spec.maintenance.defrag.schedule "* * * * *" while a writer puts a key every 10 ms. The resync
// tick is an hour, so only the schedule's own PingSource wakes the cluster: at the next minute
// every member is defragmented once, follower, follower, leader (MemberDefragmented Events naming
// the run), every dbSize shrinks, no acknowledged write is lost; the next run is due a minute later
// and runs then, once per member again. Removing the schedule removes its PingSource and record.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { setTimeout as sleep } from 'node:timers/promises';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { startWriter } from '../support/acked-writer.ts';
import { beforeCreation, converged, type Cluster } from '../support/converge.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'default';
const NAME = 'cron';
const VALUE = 'x'.repeat(64 * 1024);
const MIB = 1024 * 1024;
const PING = { apiVersion: 'sources.knative.dev/v1', kind: 'PingSource', namespace: NS };
const CLUSTER = { apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name: NAME };

interface EventLike {
  reason?: string;
  message?: string;
  involvedObject?: { name?: string; kind?: string };
  metadata: { resourceVersion?: string };
}
interface PodLike {
  metadata: { name?: string };
  status?: { podIP?: string };
}
interface Space {
  dbSize: number;
  inUse: number;
  leader: boolean;
}
/** "defragmented cron-0: 12.3 MiB → 36 KiB (the scheduled run due at <time>)" → [member, run]. */
const parsed = (e: EventLike) => {
  const m = /^defragmented (\S+): .* \(the scheduled run due at (\S+)\)$/.exec(e.message ?? '');
  return { member: m?.[1], run: m?.[2] };
};

describe('defragmentation schedule (etcd 3.5.16 on the sandbox)', { timeout: 900_000 }, () => {
  let sandbox: FullSandbox;
  let kube: KubeObjects;
  const describeWorld = () => sandbox.output().slice(-4000);

  before(async () => {
    // An hour's tick: only the schedule's PingSource (and our own status writes) wake the cluster.
    sandbox = await startFullSandbox({ tickSeconds: 3600, startTimeoutMs: 300_000 });
    kube = new KubeObjects(sandbox.kc);
  });
  after(async () => {
    await sandbox?.stop();
  });

  const endpoints = async (): Promise<Map<string, string>> => {
    const pods = await kube.list<PodLike & Cluster>('v1', 'Pod', NS, `etcdfn.io/cluster=${NAME}`);
    return new Map(
      pods.flatMap(p => (p.status?.podIP ? [[p.metadata.name ?? '', `http://${p.status.podIP}:2379`]] : [])),
    );
  };
  async function spaces(): Promise<Map<string, Space>> {
    const out = new Map<string, Space>();
    for (const [name, host] of await endpoints()) {
      const client = new Etcd3({ hosts: host, dialTimeout: 2000 });
      try {
        const s = await client.maintenance.status();
        out.set(name, {
          dbSize: Number(s.dbSize),
          inUse: Number(s.dbSizeInUse),
          leader: s.leader === s.header.member_id,
        });
      } finally {
        client.close();
      }
    }
    return out;
  }
  const defragEvents = async (): Promise<EventLike[]> =>
    (await kube.list<EventLike & Cluster>('v1', 'Event', NS))
      .filter(e => e.involvedObject?.name === NAME && e.reason === 'MemberDefragmented')
      .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion));
  const cluster = async (): Promise<Cluster> => {
    const read = await kube.get<Cluster>(CLUSTER);
    assert.equal(read.kind, 'found');
    return read.kind === 'found' ? read.object : (undefined as never);
  };

  it("defragments every member once per run at the schedule's minutes, the leader last, losing no write", async t => {
    assert.equal(
      (
        await kube.create({
          apiVersion: API_VERSION,
          kind: 'EtcdCluster',
          metadata: { name: NAME, namespace: NS },
          spec: { replicas: 3, version: '3.5.16' },
        })
      ).kind,
      'created',
    );
    await converged(
      { kube, namespace: NS, name: NAME },
      { replicas: 3, since: beforeCreation(), timeoutMs: 300_000, describe: describeWorld },
    );
    const hosts = [...(await endpoints()).values()];
    const etcd = new Etcd3({ hosts });
    try {
      for (let round = 0; round < 4; round++) {
        await Promise.all(
          Array.from({ length: 50 }, (_, i) => etcd.put(`churn/${i}`).value(`${round}${VALUE}`).exec()),
        );
        await etcd.delete().prefix('churn/').exec();
      }
      const revision = Number((await etcd.put('mark').value('1').exec()).header.revision);
      await etcd.kv.compact({ revision: String(revision), physical: true });
      for (let i = 0; i < 30; i++) {
        await etcd.put('after-compaction').value(String(i)).exec();
        await sleep(100);
      }
    } finally {
      etcd.close();
    }
    const fragmented = await waitFor(
      'every member with more than 3 MiB unused',
      async () => {
        const s = await spaces();
        return s.size === 3 && [...s.values()].every(m => m.dbSize - m.inUse > 3 * MIB) && s;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
      async () => JSON.stringify([...(await spaces())]),
    );
    t.diagnostic(`before: ${JSON.stringify([...fragmented])}`);

    const writer = startWriter(hosts, 'w/');
    try {
      await writer.acked(50);
      const patched = await kube.mergePatch<Cluster>(CLUSTER, {
        spec: { maintenance: { defrag: { schedule: '* * * * *' } } },
      });
      assert.equal(patched.kind, 'written', JSON.stringify(patched));
      const ping = await waitFor(
        "the schedule's PingSource",
        async () =>
          (await kube.find<KubeObject & { spec?: { schedule?: string } }>({
            ...PING,
            name: `${NAME}-defrag-etcdfn-cluster-wake`,
          })) ?? false,
        { timeoutMs: 60_000 },
        describeWorld,
      );
      assert.equal(ping.spec?.schedule, '* * * * *');
      const firstRun = await waitFor(
        "the first run's due time in status",
        async () => (await cluster()).status?.defragSchedule?.nextRun ?? false,
        { timeoutMs: 60_000 },
        describeWorld,
      );
      const firstEvents = await waitFor(
        'three MemberDefragmented Events',
        async () => {
          const found = await defragEvents();
          return found.length >= 3 && found;
        },
        { timeoutMs: 240_000, intervalMs: 500 },
        describeWorld,
      );
      const completed = await waitFor(
        'the first run completed',
        async () => {
          const record = (await cluster()).status?.defragSchedule;
          return record?.completedAt !== undefined && record.lastRun === firstRun && record;
        },
        { timeoutMs: 60_000 },
        describeWorld,
      );
      const acked = writer.acknowledged.length;
      await writer.acked(acked + 20);
      await writer.stop();

      t.diagnostic(`run 1: ${firstEvents.map(e => e.message).join(' | ')}`);
      const runs = firstEvents.slice(0, 3).map(parsed);
      const leader = [...fragmented].find(([, s]) => s.leader)?.[0];
      assert.deepEqual(
        runs.map(r => r.run),
        [firstRun, firstRun, firstRun],
        'every Event names the run',
      );
      assert.deepEqual(runs.map(r => r.member).sort(), [...fragmented.keys()].sort(), 'each member once');
      assert.equal(runs.at(-1)?.member, leader, 'the leader last');
      assert.deepEqual(
        completed.defragmented,
        runs.map(r => r.member),
      );
      assert.ok(
        Date.parse(completed.nextRun ?? '') > Date.parse(firstRun),
        `next run after the first: ${completed.nextRun}`,
      );

      const shrunk = await spaces();
      t.diagnostic(`after: ${JSON.stringify([...shrunk])}`);
      for (const [name, before] of fragmented) {
        const now = shrunk.get(name);
        assert.ok(now && now.dbSize < before.dbSize - 2 * MIB, `${name}: ${before.dbSize} → ${now?.dbSize}`);
      }
      const check = new Etcd3({ hosts });
      try {
        const keys = new Set(await check.getAll().prefix('w/').keys());
        assert.deepEqual(
          writer.acknowledged.filter(k => !keys.has(k)),
          [],
          'no acknowledged key lost',
        );
        t.diagnostic(`writer: ${writer.acknowledged.length} acknowledged, ${writer.failed()} failed`);
      } finally {
        check.close();
      }

      // The next run: due at the schedule's next minute, three more Events naming it, none in between.
      const secondRun = completed.nextRun!;
      const second = await waitFor(
        'the second run completed',
        async () => {
          const record = (await cluster()).status?.defragSchedule;
          return record?.completedAt !== undefined && record.lastRun === secondRun && record;
        },
        { timeoutMs: 240_000, intervalMs: 500 },
        describeWorld,
      );
      const all = (await defragEvents()).map(parsed);
      t.diagnostic(`runs: ${JSON.stringify(all)}`);
      assert.deepEqual(
        all.slice(0, 6).map(r => r.run),
        [firstRun, firstRun, firstRun, secondRun, secondRun, secondRun],
        'no run between the two',
      );
      assert.equal(
        Date.parse(secondRun) - Date.parse(firstRun) >= 60_000,
        true,
        `${firstRun} → ${secondRun}`,
      );
      assert.deepEqual([...(second.defragmented ?? [])].sort(), [...fragmented.keys()].sort());

      // The schedule removed: its PingSource and its record go.
      const removed = await kube.mergePatch<Cluster>(CLUSTER, {
        spec: { maintenance: { defrag: { schedule: null } } },
      });
      assert.equal(removed.kind, 'written');
      await waitFor(
        'the PingSource and status.defragSchedule gone',
        async () =>
          (await kube.find({ ...PING, name: `${NAME}-defrag-etcdfn-cluster-wake` })) === undefined &&
          (await cluster()).status?.defragSchedule === undefined,
        { timeoutMs: 120_000 },
        describeWorld,
      );
    } finally {
      await writer.stop();
    }
  });
});
