// The guard before etcd 3.7 on a cluster that ran 3.5 (shared/plan/upgrade/wal-guard.ts), on the
// sandbox with chaos on and real etcd 3.5.35, 3.6.16 and 3.7.3: etcd 3.7.3 panics at start on a
// member whose write-ahead log, above its last raft snapshot, still holds entries written while the
// cluster ran 3.5. A 3-member cluster with spec.options.snapshotCount 1000 is created on 3.5.35 and
// upgraded to 3.6.16 under a writer, which stops as soon as every member runs 3.6. Asked for 3.7.3
// right away, etcdfn takes nothing: Progressing says WaitingForRaftSnapshot (which member, up to
// which raft index), the locked target stays 3.6.16 and no Pod is replaced, still so after a
// resync. Once writes take every member's applied index past the recorded index plus 1000, the roll
// to 3.7.3 starts by itself and completes: the same member IDs, etcd itself on 3.7.3, every
// acknowledged write readable.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { startWriter, type AckedWriter } from '../support/acked-writer.ts';
import { NS, healingSandbox } from '../support/healing-sandbox.ts';
import { kubectl } from '../support/kubectl.ts';
import { watchReadiness } from '../support/ready-watch.ts';
import { waitFor } from '../support/wait.ts';

const NAME = 'walguard';
const SNAPSHOT_COUNT = 1000;
const KEYS = 200;

describe(
  'etcd 3.5 → 3.6, then 3.7 only once no member can replay 3.5 entries (chaos on)',
  { timeout: 1_800_000 },
  () => {
    const world = healingSandbox(43);
    const { start, stop, kube, pods, endpoints, withEtcd, describeWorld } = world;
    const writers: AckedWriter[] = [];
    let ids = new Map<string, string>();
    let podUIDs = new Map<string, string>();
    let upTo = 0;

    before(start);
    after(async () => {
      for (const w of writers) await w.stop();
      await stop();
    });

    /** Each ready member's etcd, asked directly: Pod name → its version and applied raft index. */
    async function selfReports(): Promise<Map<string, { version: string; applied: number }>> {
      const reports = new Map<string, { version: string; applied: number }>();
      for (const pod of await pods(NAME)) {
        if (!pod.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True')) continue;
        const client = new Etcd3({ hosts: `http://${pod.status.podIP}:2379`, dialTimeout: 2000 });
        try {
          const s = await client.maintenance.status();
          reports.set(pod.metadata.name ?? '', { version: s.version, applied: Number(s.raftAppliedIndex) });
        } finally {
          client.close();
        }
      }
      return reports;
    }

    const uids = async () =>
      new Map((await pods(NAME)).map(p => [p.metadata.name ?? '', p.metadata.uid ?? '']));
    const patchVersion = (version: string) =>
      kubectl(
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
    const everyMemberOn = (version: string) => async () => {
      const c = await world.cluster(NAME);
      return c.status?.members?.length === 3 && c.status.members.every(m => m.version === version);
    };
    const progressing = async () =>
      (await world.cluster(NAME)).status?.conditions?.find(c => c.type === 'Progressing');

    it('runs 3 members of etcd 3.5.35 (snapshotCount 1000) with data', async () => {
      await world.create(NAME, 3, { version: '3.5.35', options: { snapshotCount: SNAPSHOT_COUNT } });
      ids = (await world.converged(NAME, 3)).ids;
      assert.equal(ids.size, 3);
      await world.writeKeys(NAME, 'before/', KEYS);
    });

    it('upgrades 3.5.35 → 3.6.16 under a writer, which stops once every member runs 3.6', async () => {
      const since = await world.mark(NAME);
      const writer = startWriter(await endpoints(NAME), 'during36/', () => endpoints(NAME));
      writers.push(writer);
      await writer.acked(50);
      await patchVersion('3.6.16');
      await waitFor(
        'every member on 3.6.16',
        everyMemberOn('3.6.16'),
        { timeoutMs: 600_000, intervalMs: 500 },
        describeWorld(NAME),
      );
      await writer.stop();
      const done = await world.converged(NAME, 3, since);
      assert.deepEqual(done.ids, ids, 'the same members with the same IDs on 3.6.16');
      const record = done.cluster.status?.legacyRaftEntries;
      assert.ok(
        record && record.upToIndex > 0,
        `status.legacyRaftEntries recorded: ${JSON.stringify(record)}`,
      );
      upTo = record.upToIndex;
    });

    it('asked for 3.7.3 at once: waits (WaitingForRaftSnapshot), nothing adopted, no member rolled', async t => {
      const reports = await selfReports();
      // The premise: some member has not applied past the recorded index plus its snapshotCount yet.
      const short = [...reports].filter(([, r]) => r.applied < upTo + SNAPSHOT_COUNT);
      assert.ok(
        short.length > 0,
        `a member still short of ${upTo + SNAPSHOT_COUNT}: ${JSON.stringify([...reports])}`,
      );
      podUIDs = await uids();
      const asked = Date.now();
      await patchVersion('3.7.3');
      const condition = await waitFor(
        'Progressing WaitingForRaftSnapshot',
        async () => {
          const p = await progressing();
          return p?.reason === 'WaitingForRaftSnapshot' ? p : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 500 },
        describeWorld(NAME),
      );
      assert.equal(condition.status, 'True');
      assert.match(
        condition.message ?? '',
        new RegExp(
          `^waiting before the upgrade to etcd 3\\.7\\.3: member ${NAME}-\\d+ may still replay raft entries written under etcd 3\\.5 \\(raft index ${upTo} and below\\), which etcd 3\\.7 cannot read .* reaches ${upTo + SNAPSHOT_COUNT} \\(its snapshotCount is ${SNAPSHOT_COUNT};`,
        ),
      );
      // Still so after a resync (the sandbox ticks every 10 s) and the rechecks' back-off.
      await sleep(25_000);
      const c = await world.cluster(NAME);
      assert.equal(c.status?.observed?.version, '3.6.16', 'the locked target stays 3.6.16');
      assert.equal(
        c.status?.conditions?.find(x => x.type === 'Progressing')?.reason,
        'WaitingForRaftSnapshot',
      );
      for (const m of await world.members(NAME))
        assert.equal(m.spec.version, '3.6.16', `${m.metadata.name} not rolled`);
      assert.deepEqual(await uids(), podUIDs, 'no Pod replaced');
      assert.deepEqual(
        [...(await selfReports()).values()].map(r => r.version),
        ['3.6.16', '3.6.16', '3.6.16'],
      );
      const events = await kube().list<KubeObject & { reason?: string }>('v1', 'Event', NS);
      assert.ok(
        events.some(e => e.reason === 'WaitingForRaftSnapshot'),
        'a WaitingForRaftSnapshot Event',
      );
      t.diagnostic(
        `recorded index ${upTo}; applied then ${JSON.stringify(Object.fromEntries(reports))}; waited ${Math.round((Date.now() - asked) / 1000)} s`,
      );
    });

    it('after enough writes, rolls to 3.7.3 by itself: same IDs, etcd on 3.7.3, every acknowledged write readable', async t => {
      const since = await world.mark(NAME);
      const readiness = await watchReadiness(world.running().kc, NS, `etcdfn.io/cluster=${NAME}`);
      const writer = startWriter(await endpoints(NAME), 'during37/', () => endpoints(NAME));
      writers.push(writer);
      try {
        await writer.acked(20);
        const filled = Date.now();
        // Past the recorded index plus snapshotCount on every member, in parallel batches.
        for (let batch = 0; batch < 6; batch++) await world.writeKeys(NAME, `fill/${batch}/`, 200);
        await waitFor(
          'the roll to 3.7.3 starts',
          async () => (await world.cluster(NAME)).status?.observed?.version === '3.7.3',
          { timeoutMs: 180_000, intervalMs: 500 },
          describeWorld(NAME),
        );
        const started = Math.round((Date.now() - filled) / 1000);
        await waitFor(
          'every member on 3.7.3',
          everyMemberOn('3.7.3'),
          { timeoutMs: 600_000, intervalMs: 1000 },
          describeWorld(NAME),
        );
        const done = await world.converged(NAME, 3, since);
        assert.deepEqual(done.ids, ids, 'the same members with the same IDs on 3.7.3');
        assert.equal((await progressing())?.reason, 'Reconciled');
        t.diagnostic(`the roll started ${started} s after the fill began`);
      } finally {
        readiness.stop();
      }
      assert.ok(
        readiness.fewest() >= 2,
        `at most one member down at a time (${readiness.seen().join(', ')})`,
      );
      assert.deepEqual(
        [...(await selfReports()).values()].map(r => r.version),
        ['3.7.3', '3.7.3', '3.7.3'],
        'etcd itself runs 3.7.3',
      );
      await writer.acked(writer.acknowledged.length + 20);
      await writer.stop();
      assert.equal(await withEtcd(NAME, c => c.getAll().prefix('before/').count()), KEYS);
      assert.equal(await withEtcd(NAME, c => c.getAll().prefix('fill/').count()), 1200);
      const stored = new Set(await withEtcd(NAME, c => c.getAll().prefix('during').keys()));
      for (const w of writers) {
        const lost = w.acknowledged.filter(k => !stored.has(k));
        assert.deepEqual(
          lost,
          [],
          `every acknowledged put is readable (${w.acknowledged.length} acknowledged)`,
        );
      }
      t.diagnostic(
        `writers: ${writers.map(w => `${w.acknowledged.length} acknowledged, ${w.failed()} failed`).join('; ')}; 0 lost`,
      );
    });
  },
);
