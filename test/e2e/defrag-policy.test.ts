// The defragmentation policy on the sandbox (etcd 3.5.16): a 3-member cluster fragmented by
// write/delete churn and a compaction, then spec.maintenance.defrag with a small threshold. Every
// member's database shrinks, one member at a time with the leader last (MemberDefragmented Events in
// that order), a writer putting a key every 10 ms loses no acknowledged key, and once every member
// is below the threshold, further ticks do nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { setTimeout as sleep } from 'node:timers/promises';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects } from '../../shared/k8s/objects.ts';
import { startWriter } from '../support/acked-writer.ts';
import { beforeCreation, converged, type Cluster } from '../support/converge.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'default';
const NAME = 'frag';
const VALUE = 'x'.repeat(64 * 1024);
const MIB = 1024 * 1024;
const TICK_SECONDS = 5;

interface EventLike {
  reason?: string;
  /** How many times the same Event was said (etcdfn counts repeats on one Event). */
  count?: number;
  message?: string;
  involvedObject?: { name?: string; kind?: string };
  metadata: { resourceVersion?: string; name?: string };
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

describe('defragmentation policy (etcd 3.5.16 on the sandbox)', { timeout: 900_000 }, () => {
  let sandbox: FullSandbox;
  let kube: KubeObjects;
  const ref = () => ({ kube, namespace: NS, name: NAME });
  const describeWorld = () => sandbox.output().slice(-4000);

  before(async () => {
    sandbox = await startFullSandbox({ tickSeconds: TICK_SECONDS, startTimeoutMs: 300_000 });
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
  /** Each member's own answer: its database size, what is in use, and whether it leads. */
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
  /** Every time an Event was said, repeats included. */
  const said = (events: EventLike[]): number => events.reduce((n, e) => n + (e.count ?? 1), 0);
  const defragEvents = async (): Promise<EventLike[]> =>
    (await kube.list<EventLike & Cluster>('v1', 'Event', NS))
      .filter(
        e =>
          e.involvedObject?.kind === 'EtcdCluster' &&
          e.involvedObject.name === NAME &&
          e.reason === 'MemberDefragmented',
      )
      .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion));

  it('defragments each fragmented member once, the leader last, losing no acknowledged write', async t => {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: NAME, namespace: NS },
      spec: { replicas: 3, version: '3.5.16' },
    });
    assert.equal(created.kind, 'created');
    await converged(ref(), {
      replicas: 3,
      since: beforeCreation(),
      timeoutMs: 300_000,
      describe: describeWorld,
    });
    const hosts = [...(await endpoints()).values()];
    const etcd = new Etcd3({ hosts });
    try {
      // Churn: ~12 MiB written and deleted, then the history compacted away.
      for (let round = 0; round < 4; round++) {
        await Promise.all(
          Array.from({ length: 50 }, (_, i) => etcd.put(`churn/${i}`).value(`${round}${VALUE}`).exec()),
        );
        await etcd.delete().prefix('churn/').exec();
      }
      const revision = Number((await etcd.put('mark').value('1').exec()).header.revision);
      await etcd.kv.compact({ revision: String(revision), physical: true });
      // A follower counts the pages a compaction freed as in use until later writes commit.
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
    const leader = [...fragmented].find(([, s]) => s.leader)?.[0];
    assert.ok(leader, 'a leader');
    t.diagnostic(`before: ${JSON.stringify([...fragmented])}`);
    assert.equal(said(await defragEvents()), 0, 'nothing defragmented without a policy');

    const writer = startWriter(hosts, 'w/');
    try {
      await writer.acked(50);
      const seen = new Set<string>();
      const patched = await kube.mergePatch<Cluster>(
        { apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name: NAME },
        {
          spec: { maintenance: { defrag: { threshold: { unusedFraction: '0.3', minUnusedBytes: '1Mi' } } } },
        },
      );
      assert.equal(patched.kind, 'written', JSON.stringify(patched));
      const events = await waitFor(
        'three MemberDefragmented Events',
        async () => {
          const read = await kube.get<Cluster>({
            apiVersion: API_VERSION,
            kind: 'EtcdCluster',
            namespace: NS,
            name: NAME,
          });
          const reason =
            read.kind === 'found'
              ? read.object.status?.conditions?.find(c => c.type === 'Progressing')?.reason
              : undefined;
          if (reason) seen.add(reason);
          const found = await defragEvents();
          return found.length >= 3 && found;
        },
        { timeoutMs: 180_000, intervalMs: 200 },
        describeWorld,
      );
      const acked = writer.acknowledged.length;
      await writer.acked(acked + 20);
      await writer.stop();

      const order = events.map(e => /^defragmented (\S+):/.exec(e.message ?? '')?.[1]);
      t.diagnostic(`events: ${events.map(e => e.message).join(' | ')}`);
      assert.deepEqual([...order].sort(), [...fragmented.keys()].sort(), 'each member once');
      assert.equal(order.at(-1), leader, 'the leader last');
      for (const e of events)
        assert.match(
          e.message ?? '',
          /^defragmented \S+: [\d.]+ MiB → [\d.]+ [KM]iB \(.* unused .*above the policy's 30 % and 1 MiB\)$/,
        );
      assert.ok(seen.has('Defragmenting'), `Progressing said Defragmenting: ${[...seen].join(', ')}`);

      const shrunk = await spaces();
      t.diagnostic(`after: ${JSON.stringify([...shrunk])}`);
      for (const [name, before] of fragmented) {
        const now = shrunk.get(name);
        assert.ok(now && now.dbSize < before.dbSize - 2 * MIB, `${name}: ${before.dbSize} → ${now?.dbSize}`);
      }

      // Every acknowledged key is there; reads and writes went on throughout.
      const check = new Etcd3({ hosts });
      try {
        const keys = new Set(await check.getAll().prefix('w/').keys());
        const lost = writer.acknowledged.filter(k => !keys.has(k));
        assert.deepEqual(lost, [], 'no acknowledged key lost');
        t.diagnostic(`writer: ${writer.acknowledged.length} acknowledged, ${writer.failed()} failed`);
      } finally {
        check.close();
      }

      // Below the threshold now: further ticks defragment nothing.
      await sleep(3 * TICK_SECONDS * 1000);
      assert.equal(said(await defragEvents()), 3, 'no defragmentation after the three');
      const done = await converged(ref(), {
        replicas: 3,
        since: beforeCreation(),
        timeoutMs: 60_000,
        describe: describeWorld,
      });
      assert.equal(done.status?.operation, undefined);
      assert.equal(done.status?.conditions?.find(c => c.type === 'Progressing')?.reason, 'Reconciled');
    } finally {
      await writer.stop();
    }
  });
});
