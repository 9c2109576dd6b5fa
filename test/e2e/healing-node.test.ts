// A node gone, on a sandbox with five nodes (the scheduler spreads each cluster's members over
// them) and real etcd 3.5.16 with chaos on. Members keep their data on StorageClass local-path, whose
// volumes are tied to the node of their first Pod (as kind's and k3s's default class).
// (a) One member's node is deleted while a writer puts a key every 10 ms: the machine's processes
//     die, the pod GC removes the Pod after its 40 s, the member records NodeLost (its volume can
//     only be used on the gone node) with an Event, and the quorum-guarded replacement brings the
//     cluster back to 3/3 with a new member and a new etcd ID, every key written before and every
//     acknowledged put readable.
// (b) Two of a second cluster's three nodes are deleted: quorum is lost, the cluster says
//     QuorumLost, both members record NodeLost, and nothing is replaced over two resync ticks.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { startWriter } from '../support/acked-writer.ts';
import { NS, healingSandbox, type PodLike } from '../support/healing-sandbox.ts';
import { waitFor } from '../support/wait.ts';

const KEYS = 300;
const STORAGE = { size: '1Gi', storageClassName: 'local-path' };
type Event = KubeObject & { reason?: string; message?: string; involvedObject?: { name?: string } };

describe(
  'healing: a node gone (etcd 3.5.16, five nodes, local volumes, chaos on)',
  { timeout: 1_800_000 },
  () => {
    const world = healingSandbox(43, { nodes: 5 });
    const { start, stop, kube, cluster, members, pods, endpoints, withEtcd, describeWorld, mark, converged } =
      world;
    before(start);
    after(stop);

    const nodeOf = (pod: PodLike): string =>
      (pod as PodLike & { spec?: { nodeName?: string } }).spec?.nodeName ?? '';
    const deleteNode = async (name: string) => {
      const deleted = await kube().delete({ apiVersion: 'v1', kind: 'Node', namespace: '', name });
      assert.equal(deleted.kind, 'deleted');
    };
    const nodeLostEvents = async (member: string) =>
      (await kube().list<Event>('v1', 'Event', NS)).filter(
        e => e.reason === 'NodeLost' && e.involvedObject?.name === member,
      );

    it('(a) one member’s node deleted under a writer: NodeLost, replaced with a new ID, 3/3, no acknowledged put lost', async t => {
      const NAME = 'spread';
      await world.create(NAME, 3, { storage: STORAGE });
      const formed = await converged(NAME, 3);
      const placed = new Map((await pods(NAME)).map(p => [p.metadata.name ?? '', nodeOf(p)]));
      assert.equal(new Set(placed.values()).size, 3, `one member per node: ${JSON.stringify([...placed])}`);
      await world.writeKeys(NAME, 'before/', KEYS);

      const writer = startWriter(await endpoints(NAME), 'during/', () => endpoints(NAME));
      t.after(() => writer.stop());
      await writer.acked(50);
      const [lost, node] = [...placed].sort()[1];
      const lostID = formed.ids.get(lost);
      assert.ok(lostID, `etcd lists ${lost}`);
      const since = await mark(NAME);
      await deleteNode(node);

      const recorded = await waitFor(
        `${lost} records NodeLost`,
        async () => {
          const m = (await members(NAME)).find(x => x.metadata.name === lost);
          return m?.status?.dataLoss?.reason === 'NodeLost' ? m.status.dataLoss : false;
        },
        { timeoutMs: 240_000, intervalMs: 500 },
        describeWorld(NAME),
      ).catch(async err => {
        // The member may be replaced between two reads: the cluster's record says why, then.
        const r = (await cluster(NAME)).status?.replacement;
        if (r?.member === lost && r.cause === 'NodeLost') return { reason: 'NodeLost', message: r.reason };
        throw err;
      });
      assert.match(
        recorded.message,
        new RegExp(`node ${node}, the only place PVC data-${lost}'s local volume`),
      );
      const done = await converged(NAME, 3, since);
      await writer.stop();

      const replaced = done.cluster.status?.conditions?.find(c => c.type === 'MemberReplacement');
      assert.equal(replaced?.reason, 'Replaced', JSON.stringify(done.cluster.status?.conditions));
      assert.match(
        replaced?.message ?? '',
        new RegExp(`^replaced member ${lost} \\(ID ${lostID}\\), whose node is gone`),
      );
      assert.ok(!done.ids.has(lost), `${lost} is gone from etcd`);
      assert.ok(![...done.ids.values()].includes(lostID), 'the lost ID is not in etcd');
      const fresh = [...done.ids.keys()].filter(n => !placed.has(n));
      assert.equal(fresh.length, 1, `one new member: ${JSON.stringify([...done.ids])}`);
      assert.ok((await nodeLostEvents(lost)).length >= 1, 'a NodeLost Event');
      const nowPlaced = (await pods(NAME)).map(nodeOf);
      assert.ok(!nowPlaced.includes(node), 'no Pod on the gone node');

      assert.equal(await withEtcd(NAME, c => c.getAll().prefix('before/').count()), KEYS);
      const stored = new Set(await withEtcd(NAME, c => c.getAll().prefix('during/').keys()));
      const missing = writer.acknowledged.filter(k => !stored.has(k));
      assert.ok(writer.acknowledged.length > 100, `the writer ran (${writer.acknowledged.length})`);
      assert.deepEqual(missing, [], `every acknowledged put is readable (${writer.acknowledged.length})`);
      t.diagnostic(`${lost} on ${node} (ID ${lostID}) → ${fresh[0]} (ID ${done.ids.get(fresh[0])})`);
      t.diagnostic(`writer: ${writer.acknowledged.length} acknowledged, ${writer.failed()} failed, 0 lost`);
    });

    it('(b) two of three nodes deleted: QuorumLost, both members NodeLost, nothing replaced', async t => {
      const NAME = 'halved';
      await world.create(NAME, 3, { storage: STORAGE });
      await converged(NAME, 3);
      await world.writeKeys(NAME, 'before/', 50);
      const placed = (await pods(NAME)).map(p => [p.metadata.name ?? '', nodeOf(p)] as const).sort();
      assert.equal(new Set(placed.map(p => p[1])).size, 3, `one member per node: ${JSON.stringify(placed)}`);
      const before = new Map((await members(NAME)).map(m => [m.metadata.name, m.metadata.uid]));
      const lost = placed.slice(1);
      for (const [, node] of lost) await deleteNode(node);

      await waitFor(
        'QuorumLost, and NodeLost on both members',
        async () => {
          const c = await cluster(NAME);
          const available = c.status?.conditions?.find(x => x.type === 'Available');
          const ms = await members(NAME);
          const noted = lost.every(
            ([name]) => ms.find(m => m.metadata.name === name)?.status?.dataLoss?.reason === 'NodeLost',
          );
          return available?.reason === 'QuorumLost' && noted;
        },
        { timeoutMs: 300_000, intervalMs: 1000 },
        describeWorld(NAME),
      );
      // Two resync ticks (10 s each) later: the same members, no replacement, nothing deleted.
      const c0 = await cluster(NAME);
      await new Promise(r => setTimeout(r, 25_000));
      const c = await cluster(NAME);
      assert.equal(c.status?.replacement, undefined, JSON.stringify(c.status?.replacement));
      assert.equal(c.status?.conditions?.find(x => x.type === 'Available')?.reason, 'QuorumLost');
      const after = await members(NAME);
      assert.deepEqual(
        new Map(after.map(m => [m.metadata.name, m.metadata.uid])),
        before,
        'no member deleted or added',
      );
      assert.ok(
        after.every(m => !m.metadata.deletionTimestamp),
        'none being deleted',
      );
      t.diagnostic(`QuorumLost: ${c.status?.conditions?.find(x => x.type === 'Available')?.message}`);
      t.diagnostic(`resourceVersion ${c0.metadata.resourceVersion} → ${c.metadata.resourceVersion}`);
    });
  },
);
