// One writer through two changes in a row, on the sandbox with chaos on: a rolling upgrade of a
// 3-member cluster from etcd 3.5.16 to 3.5.17, then the replacement of a member whose PVC is deleted
// with its Pod. The writer puts a key every 10 ms from before the upgrade until the cluster is back
// at full size, following the ready members as Pods come and go (acked-writer.ts), and records
// every acknowledged put: afterwards every one of them is readable, as is every key written before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { toHexId } from '../../shared/etcd/ids.ts';
import { startWriter } from '../support/acked-writer.ts';
import { NS, STEP_TIMEOUT, healingSandbox } from '../support/healing-sandbox.ts';
import { beforeCreation, converged, mark } from '../support/converge.ts';
import { kubectl } from '../support/kubectl.ts';
import { waitFor } from '../support/wait.ts';

const NAME = 'upr';

describe(
  'a rolling upgrade 3.5.16 → 3.5.17, then a replacement, under one writer (chaos on)',
  { timeout: 900_000 },
  () => {
    const world = healingSandbox(31);
    const { start, stop, kube, members, pods, endpoints, withEtcd, describeWorld } = world;
    before(start);
    after(stop);

    const ref = () => ({ kube: kube(), namespace: NS, name: NAME });
    const describe = describeWorld(NAME);

    /** Each ready member's etcd, asked directly: name → [hex ID, version], and the leader's name. */
    async function etcdView(): Promise<{ members: Map<string, [string, string]>; leader: string }> {
      const view = new Map<string, [string, string]>();
      let leaderId = '';
      for (const pod of await pods(NAME)) {
        if (!pod.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True')) continue;
        const client = new Etcd3({ hosts: `http://${pod.status.podIP}:2379`, dialTimeout: 2000 });
        try {
          const st = await client.maintenance.status();
          view.set(pod.metadata.name ?? '', [toHexId(st.header.member_id), st.version]);
          leaderId = toHexId(st.leader);
        } finally {
          client.close();
        }
      }
      return { members: view, leader: [...view].find(([, [id]]) => id === leaderId)?.[0] ?? '' };
    }

    it('loses no acknowledged write', async t => {
      await world.create(NAME, 3, { version: '3.5.16' });
      await converged(ref(), { replicas: 3, since: beforeCreation(), timeoutMs: STEP_TIMEOUT, describe });
      await world.writeKeys(NAME, 'before/', 200);
      const start = await etcdView();
      assert.deepEqual(
        [...start.members.values()].map(([, v]) => v),
        ['3.5.16', '3.5.16', '3.5.16'],
      );

      const writer = startWriter(await endpoints(NAME), 'during/', () => endpoints(NAME));
      try {
        await writer.acked(50);
        // 1. The rolling upgrade: same members, same IDs, etcd itself on 3.5.17 everywhere.
        const upgrading = await mark(ref());
        await kubectl(
          world.running().kubeconfig,
          'patch',
          'etcdcluster',
          NAME,
          '-n',
          NS,
          '--type=merge',
          '-p',
          '{"spec":{"version":"3.5.17"}}',
        );
        await converged(ref(), {
          replicas: 3,
          since: upgrading,
          version: '3.5.17',
          timeoutMs: 300_000,
          describe,
        });
        const upgraded = await etcdView();
        assert.deepEqual(
          new Map([...upgraded.members].map(([n, [id]]) => [n, id])),
          new Map([...start.members].map(([n, [id]]) => [n, id])),
          'the same members with the same IDs',
        );
        assert.deepEqual(
          [...upgraded.members.values()].map(([, v]) => v),
          ['3.5.17', '3.5.17', '3.5.17'],
        );
        const afterUpgrade = writer.acknowledged.length;

        // 2. A follower's PVC deleted with its Pod: replaced by a new member with a new ID.
        const victim = [...upgraded.members.keys()].sort().find(n => n !== upgraded.leader);
        assert.ok(victim, 'a follower to lose');
        const oldID = upgraded.members.get(victim)?.[0];
        await writer.acked(afterUpgrade + 50);
        const replacing = await mark(ref());
        await kube().delete(
          { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: victim },
          { gracePeriodSeconds: 0 },
        );
        await kube().delete({
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          namespace: NS,
          name: `data-${victim}`,
        });
        await waitFor(
          `${victim} replaced`,
          async () => !(await members(NAME)).some(m => m.metadata.name === victim),
          { timeoutMs: STEP_TIMEOUT, intervalMs: 500 },
          describe,
        );
        const done = await converged(ref(), {
          replicas: 3,
          since: replacing,
          version: '3.5.17',
          timeoutMs: STEP_TIMEOUT,
          describe,
        });
        const condition = done.status?.conditions?.find(c => c.type === 'MemberReplacement');
        assert.equal(condition?.reason, 'Replaced');
        assert.match(condition?.message ?? '', new RegExp(`replaced member ${victim} \\(ID ${oldID}\\)`));
        const end = await etcdView();
        assert.equal(end.members.size, 3);
        assert.ok(
          ![...end.members.values()].some(([id]) => id === oldID),
          `the old ID ${oldID} is gone from etcd`,
        );
        t.diagnostic(
          `upgrade: ${afterUpgrade} puts acknowledged; replacement: ${victim} (${oldID}) → ${[...end.members.keys()].find(n => !upgraded.members.has(n))}`,
        );
      } finally {
        await writer.stop();
      }

      assert.equal(
        await withEtcd(NAME, c => c.getAll().prefix('before/').count()),
        200,
        'every key written before',
      );
      const stored = new Set(await withEtcd(NAME, c => c.getAll().prefix('during/').keys()));
      const lost = writer.acknowledged.filter(k => !stored.has(k));
      assert.ok(
        writer.acknowledged.length > 200,
        `the writer ran throughout (${writer.acknowledged.length})`,
      );
      assert.deepEqual(
        lost,
        [],
        `every acknowledged put is readable (${writer.acknowledged.length} acknowledged)`,
      );
      t.diagnostic(`writer: ${writer.acknowledged.length} acknowledged, ${writer.failed()} failed, 0 lost`);
    });
  },
);
