// The healing combinations the other e2e files leave out, on one sandbox with real etcd 3.5.16 and
// chaos on, the clusters faulted in parallel (each its own cluster, writer and evidence): a
// 5-member cluster whose follower loses its PVC with its Pod, one whose follower's PVC is deleted
// while its Pod runs, and a 5-member Memory-medium cluster whose follower loses its Pod. Each time:
// the member is replaced by a new member with a new ID, the cluster returns to full size, every key
// written before the fault is readable, and a writer that put a key every 10 ms through the fault
// finds every acknowledged key afterwards. (3-member and node-gone cases: healing-faults,
// member-replacement, healing-node.)
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import { Etcd3 } from 'etcd3';
import { startWriter } from '../support/acked-writer.ts';
import { NS, STEP_TIMEOUT, healingSandbox, type Member } from '../support/healing-sandbox.ts';
import { waitFor } from '../support/wait.ts';

describe(
  'healing matrix: 5 members × PVC and Memory faults (etcd 3.5.16, chaos on)',
  { timeout: 1_200_000, concurrency: true },
  () => {
    const world = healingSandbox(31);
    const { start, stop, kube, members, pods, endpoints, withEtcd, describeWorld, mark, converged } = world;
    before(start);
    after(stop);

    const member = async (cluster: string, name: string): Promise<Member | undefined> =>
      (await members(cluster)).find(m => m.metadata.name === name);
    const deleteObject = (kind: string, name: string) =>
      kube().delete({ apiVersion: 'v1', kind, namespace: NS, name }, { gracePeriodSeconds: 0 });

    /** The leader's name, as etcd answers through each ready Pod. */
    async function leaderOf(name: string): Promise<string> {
      for (const pod of await pods(name)) {
        const client = new Etcd3({ hosts: `http://${pod.status?.podIP}:2379`, dialTimeout: 2000 });
        try {
          const st = await client.maintenance.status();
          if (st.leader === st.header.member_id) return pod.metadata.name ?? '';
        } catch {
          // Not ready yet: another Pod answers.
        } finally {
          client.close();
        }
      }
      return '';
    }

    interface Scenario {
      name: string;
      spec?: Record<string, unknown>;
      fault: (victim: string) => Promise<void>;
      /** The evidence the victim may record before it goes (it may be replaced before it is read). */
      reason: RegExp;
    }

    async function replaced(t: TestContext, s: Scenario): Promise<void> {
      const replicas = 5;
      await world.create(s.name, replicas, s.spec);
      const start = await converged(s.name, replicas);
      // A new cluster's initial members all start (a slow one is waited for, never replaced).
      assert.equal(start.cluster.status?.nextMemberOrdinal, replicas, 'the bootstrap replaced no member');
      await world.writeKeys(s.name, 'before/', 300);
      // A follower: the fault is on a member the cluster can do without, not on its leader.
      const leader = await leaderOf(s.name);
      const victim = [...start.ids.keys()].sort().find(n => n !== leader);
      assert.ok(victim, 'a follower to break');
      const oldID = start.ids.get(victim);
      assert.ok(oldID);
      const describe = async () =>
        `${await describeWorld(s.name)()}\nvictim: ${victim} (${oldID}), leader ${leader}`;

      const clusterId = (await withEtcd(s.name, c => c.cluster.memberList({ linearizable: true }))).header
        .cluster_id;
      // Clusters faulted side by side: a released Pod IP may come back as another cluster's member.
      const writer = startWriter(await endpoints(s.name), 'during/', () => endpoints(s.name), clusterId);
      let end: Awaited<ReturnType<typeof converged>>;
      let seen: { reason: string; message: string } | undefined;
      try {
        await writer.acked(50);
        const since = await mark(s.name);
        await s.fault(victim);
        // Its evidence if it is read before the member goes; the replacement itself is awaited next.
        await waitFor(
          `${victim} records why its data is lost, or is replaced`,
          async () => {
            const m = await member(s.name, victim);
            if (m?.status?.dataLoss) seen = m.status.dataLoss;
            return m === undefined;
          },
          { timeoutMs: STEP_TIMEOUT, intervalMs: 250 },
          describe,
        );
        end = await converged(s.name, replicas, since);
      } finally {
        await writer.stop();
      }

      if (seen) assert.match(seen.reason, s.reason, seen.message);
      assert.equal(end.ids.size, replicas, 'back to full size');
      assert.ok(!end.ids.has(victim), `${victim} is gone from etcd`);
      assert.ok(![...end.ids.values()].includes(oldID), `the old member ID ${oldID} is not in etcd`);
      const newcomer = [...end.ids.keys()].find(n => !start.ids.has(n));
      assert.ok(newcomer, 'a new member took its place');
      assert.notEqual(end.ids.get(newcomer), oldID);
      const condition = end.cluster.status?.conditions?.find(c => c.type === 'MemberReplacement');
      assert.equal(condition?.reason, 'Replaced');
      assert.match(condition?.message ?? '', new RegExp(`replaced member ${victim} \\(ID ${oldID}\\)`));
      assert.match(
        condition?.message ?? '',
        new RegExp(`new member ${newcomer} \\(ID ${end.ids.get(newcomer)}\\)`),
      );

      const kept = await withEtcd(s.name, c => c.getAll().prefix('before/').count());
      assert.equal(kept, 300, 'every key written before the fault is readable');
      const stored = new Set(await withEtcd(s.name, c => c.getAll().prefix('during/').keys()));
      const lost = writer.acknowledged.filter(k => !stored.has(k));
      assert.ok(
        writer.acknowledged.length > 100,
        `the writer ran through the fault (${writer.acknowledged.length})`,
      );
      assert.deepEqual(
        lost,
        [],
        `every acknowledged put is readable (${writer.acknowledged.length} acknowledged)`,
      );
      t.diagnostic(
        `${s.name}: ${seen ? `${seen.reason}; ` : ''}writer ${writer.acknowledged.length} acknowledged, ${writer.failed()} failed, ${writer.misdirected()} answered by another cluster, 0 lost; ${victim} (${oldID}) → ${newcomer} (${end.ids.get(newcomer)})`,
      );
    }

    it('5 members, a follower’s PVC deleted with its Pod: replaced with a new ID, no acknowledged write lost', async t => {
      await replaced(t, {
        name: 'five-pvc-pod',
        fault: async victim => {
          await deleteObject('Pod', victim);
          await deleteObject('PersistentVolumeClaim', `data-${victim}`);
        },
        reason: /^PVC(Deleted|Missing)$/,
      });
    });

    it('5 members, a follower’s PVC deleted while its Pod runs: replaced with a new ID, no acknowledged write lost', async t => {
      await replaced(t, {
        name: 'five-pvc-run',
        fault: victim => deleteObject('PersistentVolumeClaim', `data-${victim}`).then(() => undefined),
        reason: /^PVC(Deleted|Missing)$/,
      });
    });

    it('5 members on the Memory medium, a follower losing its Pod: replaced with a new ID, no acknowledged write lost', async t => {
      await replaced(t, {
        name: 'five-mem',
        spec: { storage: { size: '256Mi', medium: 'Memory' } },
        fault: victim => deleteObject('Pod', victim).then(() => undefined),
        reason: /^MemoryLost$/,
      });
    });
  },
);
