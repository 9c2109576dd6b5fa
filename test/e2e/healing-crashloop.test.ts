// A member that crash-loops for a reason unrelated to its data, on the sandbox with real etcd
// 3.5.16 and chaos on: an option the schema accepts but etcd refuses (an auto-compaction retention
// of 3000000h overflows Go's durations) reaches a new member. Its Pod crash-loops under the
// kubelet's back-off; the member reports CrashLooping with etcd's own error and one Warning Event,
// and it is not replaced (a new member would fail the same way): no data loss recorded, no
// replacement started. The voters keep serving a writer that puts a key every 10 ms, with no
// acknowledged write lost. Taking the option out of the cluster's spec then replaces the broken
// member by one with the current settings (MemberReplacement, cause CrashLoop), and the cluster
// reaches 4/4 with every key.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { startWriter } from '../support/acked-writer.ts';
import { beforeCreation, converged, mark, type ClusterRef } from '../support/converge.ts';
import { NS, STEP_TIMEOUT, healingSandbox } from '../support/healing-sandbox.ts';
import { waitFor } from '../support/wait.ts';

const NAME = 'badopt';

describe(
  'healing: a crash loop that is not about data is reported, not replaced (etcd 3.5.16)',
  { timeout: 1_800_000 },
  () => {
    const world = healingSandbox(41);
    let brokenMember = '';
    const { start, stop, kube, cluster, members, endpoints, withEtcd, describeWorld } = world;
    before(start);
    after(stop);

    it('a member refusing its options crash-loops, is reported with etcd’s words, and is not replaced', async t => {
      const ref: ClusterRef = { kube: kube(), namespace: NS, name: NAME };
      const describe = describeWorld(NAME);
      await world.create(NAME, 3, { progressDeadlineSeconds: 60 });
      await converged(ref, { replicas: 3, since: beforeCreation(), timeoutMs: STEP_TIMEOUT, describe });
      await world.writeKeys(NAME, 'before/', 300);
      const original = new Set((await members(NAME)).map(m => m.metadata.name));

      const writer = startWriter(await endpoints(NAME), 'during/');
      t.after(() => writer.stop());
      await writer.acked(50);
      await kube().mergePatch(world.clusterRef(NAME), {
        spec: { replicas: 4, options: { autoCompactionRetention: '3000000h' } },
      });

      const looping = await waitFor(
        'the new member reports CrashLooping',
        async () => {
          const fresh = (await members(NAME)).find(m => !original.has(m.metadata.name));
          const ready = fresh?.status?.conditions?.find(c => c.type === 'Ready');
          return ready?.reason === 'CrashLooping' ? { member: fresh!, ready } : false;
        },
        { timeoutMs: 600_000, intervalMs: 1000 },
        describe,
      );
      const name = looping.member.metadata.name ?? '';
      assert.match(
        looping.ready.message,
        /error parsing CompactionRetention: time: invalid duration "3000000h"/,
      );
      assert.match(looping.ready.message, /not a data problem, so the member is not replaced/);
      const crashEvents = async () =>
        (
          await kube().list<
            KubeObject & {
              reason?: string;
              message?: string;
              count?: number;
              involvedObject?: { name?: string };
            }
          >('v1', 'Event', NS)
        ).filter(e => e.reason === 'MemberCrashLooping' && e.involvedObject?.name === name);
      const events = await waitFor(
        'a MemberCrashLooping Event',
        async () => ((await crashEvents()).length > 0 ? crashEvents() : false),
        { timeoutMs: STEP_TIMEOUT },
        describe,
      );
      assert.equal(events.length, 1, 'one Warning Event');
      assert.equal(events[0].count ?? 1, 1, 'said once');
      // Not replaced: the same EtcdMember, no data loss recorded, no replacement started.
      const now = (await members(NAME)).find(m => m.metadata.name === name);
      assert.equal(now?.metadata.uid, looping.member.metadata.uid);
      assert.equal(now?.status?.dataLoss, undefined);
      assert.equal((await cluster(NAME)).status?.replacement, undefined);
      assert.equal((await members(NAME)).length, 4, 'no further member was created');

      await writer.stop();

      assert.equal(await withEtcd(NAME, c => c.getAll().prefix('before/').count()), 300);
      const stored = new Set(await withEtcd(NAME, c => c.getAll().prefix('during/').keys()));
      const lost = writer.acknowledged.filter(k => !stored.has(k));
      assert.ok(writer.acknowledged.length > 100, `the writer ran (${writer.acknowledged.length})`);
      assert.deepEqual(lost, [], `every acknowledged put is readable (${writer.acknowledged.length})`);
      t.diagnostic(`${name}: ${looping.ready.message}`);
      t.diagnostic(`writer: ${writer.acknowledged.length} acknowledged, ${writer.failed()} failed, 0 lost`);
      brokenMember = name;
    });

    it('taking the option out of the spec replaces the crash-looping member by one with the current settings', async () => {
      assert.ok(brokenMember, 'the first case found the crash-looping member');
      const ref: ClusterRef = { kube: kube(), namespace: NS, name: NAME };
      const since = await mark(ref);
      await kube().mergePatch(world.clusterRef(NAME), { spec: { options: null } });
      const done = await converged(ref, {
        replicas: 4,
        since,
        timeoutMs: STEP_TIMEOUT,
        describe: describeWorld(NAME),
      });
      const condition = done.status?.conditions?.find(c => c.type === 'MemberReplacement');
      assert.equal(condition?.reason, 'Replaced', JSON.stringify(done.status?.conditions));
      assert.match(
        condition?.message ?? '',
        new RegExp(
          `^replaced member ${brokenMember}( \\(ID [0-9a-f]+\\))?, which crash-looped \\(it crash-loops with spec.options the cluster no longer asks for`,
        ),
      );
      const now = await members(NAME);
      assert.ok(!now.some(m => m.metadata.name === brokenMember), `${brokenMember} is gone`);
      assert.ok(
        now.every(m => m.spec.options === undefined),
        'every member runs the current settings',
      );
      assert.equal(await withEtcd(NAME, c => c.getAll().prefix('before/').count()), 300);
    });
  },
);
