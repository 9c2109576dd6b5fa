// Faults that take a member's data, on the sandbox with real etcd 3.5.16 and chaos on: its data
// directory wiped under a running etcd (the guarded Pod of a member that has run: etcd refuses an
// empty directory), its PVC deleted while its Pod runs, a 5-member cluster whose follower is wiped
// under its first Pod (restarted in place: reconcile-member armed the Pod's join settings once the
// member ran, so etcd refuses as on a guarded Pod), a Memory-medium member losing its Pod (the
// same evidence and MemberReplacement condition as a PVC member). Each time: the member is replaced by a new member with a new ID, the cluster returns to
// full size, every key written before the fault is readable, and a writer that put a key every
// 10 ms through the fault finds every acknowledged key afterwards.
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { V1Pod } from '@kubernetes/client-node';
import { toHexId } from '../../shared/etcd/ids.ts';
import { podJoinSettings } from '../../shared/plan/member/pod.ts';
import { startWriter, type AckedWriter } from '../support/acked-writer.ts';
import { beforeCreation, converged, mark, type ClusterRef } from '../support/converge.ts';
import { NS, STEP_TIMEOUT, healingSandbox, type Member } from '../support/healing-sandbox.ts';
import { waitFor } from '../support/wait.ts';

describe('healing: faults that take a member’s data (etcd 3.5.16, chaos on)', { timeout: 3_000_000 }, () => {
  const world = healingSandbox(23);
  const { start, stop, kube, faults, members, pods, endpoints, withEtcd, describeWorld } = world;
  before(start);
  after(stop);

  const ref = (name: string): ClusterRef => ({ kube: kube(), namespace: NS, name });
  const member = async (cluster: string, name: string): Promise<Member | undefined> =>
    (await members(cluster)).find(m => m.metadata.name === name);

  /** Members by name → hex ID, and the leader's name, as etcd answers through each ready Pod. */
  async function etcdView(name: string): Promise<{ ids: Map<string, string>; leader: string }> {
    const ids = new Map<string, string>();
    let leaderId = '';
    for (const pod of await pods(name)) {
      const client = new Etcd3({ hosts: `http://${pod.status?.podIP}:2379`, dialTimeout: 2000 });
      try {
        const st = await client.maintenance.status();
        ids.set(pod.metadata.name ?? '', toHexId(st.header.member_id));
        leaderId = toHexId(st.leader);
      } finally {
        client.close();
      }
    }
    const leader = [...ids].find(([, id]) => id === leaderId)?.[0] ?? '';
    return { ids, leader };
  }

  interface Scenario {
    name: string;
    replicas: number;
    spec?: Record<string, unknown>;
    /** Before the writer starts: bring the victim to the state the fault needs. */
    prepare?: (cluster: string, victim: string) => Promise<void>;
    fault: (cluster: string, victim: string) => Promise<void>;
    /** The evidence the victim records (undefined: the member is deleted without recording it). */
    reason?: RegExp;
    /** etcd's words the evidence must quote. */
    says?: RegExp;
  }

  async function replaced(t: TestContext, s: Scenario): Promise<void> {
    const r = ref(s.name);
    await world.create(s.name, s.replicas, s.spec);
    const describe = describeWorld(s.name);
    await converged(r, { replicas: s.replicas, since: beforeCreation(), timeoutMs: STEP_TIMEOUT, describe });
    await world.writeKeys(s.name, 'before/', 300);
    const start = await etcdView(s.name);
    // A follower: the fault is on a member the cluster can do without, not on its leader.
    const victim = [...start.ids.keys()].sort().find(n => n !== start.leader);
    assert.ok(victim, 'a follower to break');
    const oldID = start.ids.get(victim);
    await s.prepare?.(s.name, victim);

    const writer = startWriter(await endpoints(s.name), 'during/');
    try {
      await faultAndReplace(t, s, { victim, oldID, start, writer });
    } finally {
      await writer.stop();
    }
    // Free the machine for the next case.
    await kube().delete(world.clusterRef(s.name));
  }

  async function faultAndReplace(
    t: TestContext,
    s: Scenario,
    {
      victim,
      oldID,
      start,
      writer,
    }: {
      victim: string;
      oldID: string | undefined;
      start: { ids: Map<string, string> };
      writer: AckedWriter;
    },
  ): Promise<void> {
    const r = ref(s.name);
    const describe = async () =>
      `${await describeWorld(s.name)()}\nvictim Pod: ${JSON.stringify((await pods(s.name)).find(p => p.metadata.name === victim)?.status)}`;
    await writer.acked(50);
    const since = await mark(r);
    await s.fault(s.name, victim);

    if (s.reason) {
      const evidence = await waitFor(
        `${victim} records why its data is lost`,
        async () => (await member(s.name, victim))?.status?.dataLoss,
        { timeoutMs: STEP_TIMEOUT, intervalMs: 250 },
        describe,
      );
      assert.match(evidence.reason, s.reason, evidence.message);
      if (s.says) assert.match(evidence.message, s.says);
      t.diagnostic(`${victim}: ${evidence.reason}: ${evidence.message}`);
    }
    await waitFor(
      `${victim} replaced`,
      async () => (await member(s.name, victim)) === undefined,
      { timeoutMs: STEP_TIMEOUT, intervalMs: 500 },
      describe,
    );
    const done = await converged(r, { replicas: s.replicas, since, timeoutMs: STEP_TIMEOUT, describe });
    await writer.stop();

    const end = await etcdView(s.name);
    assert.equal(end.ids.size, s.replicas);
    assert.ok(!end.ids.has(victim), `${victim} is gone from etcd`);
    assert.ok(![...end.ids.values()].includes(oldID ?? ''), `the old member ID ${oldID} is not in etcd`);
    const newcomer = [...end.ids.keys()].find(n => !start.ids.has(n));
    assert.ok(newcomer, 'a new member took its place');
    if (s.reason) {
      const condition = done.status?.conditions?.find(c => c.type === 'MemberReplacement');
      assert.equal(condition?.reason, 'Replaced');
      assert.match(condition?.message ?? '', new RegExp(`replaced member ${victim} \\(ID ${oldID}\\)`));
      assert.match(
        condition?.message ?? '',
        new RegExp(`new member ${newcomer} \\(ID ${end.ids.get(newcomer)}\\)`),
      );
    }
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
      `writer: ${writer.acknowledged.length} acknowledged, ${writer.failed()} failed, 0 lost; ${victim} (${oldID}) → ${newcomer} (${end.ids.get(newcomer)})`,
    );
  }

  /** The disk loses its data and etcd goes down with it; the kubelet restarts it in the same Pod. */
  const wipe = async (_name: string, victim: string): Promise<void> => {
    await faults().wipePvc({ namespace: NS, claim: `data-${victim}` });
    await faults().kill({ namespace: NS, pod: victim, container: 'etcd' });
  };

  it('data directory wiped under a guarded Pod: etcd refuses it, the member is replaced', async t => {
    await replaced(t, {
      name: 'wipe',
      replicas: 3,
      // A member that has run gets its next Pod with the empty-data guard: replace its first Pod.
      prepare: async (name, victim) => {
        const since = await mark(ref(name));
        await kube().delete({ apiVersion: 'v1', kind: 'Pod', namespace: NS, name: victim });
        await converged(ref(name), { replicas: 3, since, restarted: [victim], timeoutMs: STEP_TIMEOUT });
        const m = await member(name, victim);
        assert.equal(m?.status?.hasData, true, 'the member is known to have run');
        const join = podJoinSettings((await pods(name)).find(p => p.metadata.name === victim) as V1Pod);
        assert.equal(join?.state, 'existing');
        assert.match(join?.initialCluster ?? '', new RegExp(`^${victim}=[^,]+$`));
      },
      fault: wipe,
      reason: /^DataDirEmpty$/,
    });
  });

  it('PVC deleted while its Pod runs: the member is stopped and replaced', async t => {
    await replaced(t, {
      name: 'pvcgone',
      replicas: 3,
      fault: async (_name, victim) => {
        await kube().delete({
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          namespace: NS,
          name: `data-${victim}`,
        });
      },
      reason: /^PVC(Deleted|Missing)$/,
    });
  });

  /** The victim's first Pod, once reconcile-member has armed its guard (the member has run). */
  const armedFirstPod = async (name: string, victim: string): Promise<void> => {
    const pod = await waitFor(
      `${victim}'s first Pod armed with the empty-data guard`,
      async () => {
        const p = (await pods(name)).find(x => x.metadata.name === victim) as V1Pod | undefined;
        const join = p && podJoinSettings(p);
        return join?.state === 'existing' &&
          join.initialCluster === `${victim}=${(await member(name, victim))?.status?.peerURL}`
          ? p
          : undefined;
      },
      { timeoutMs: STEP_TIMEOUT, intervalMs: 250 },
    );
    assert.equal(pod.status?.containerStatuses?.[0]?.restartCount ?? 0, 0, 'its first Pod, never restarted');
  };

  it('5 members, a follower wiped under its first Pod (restarted in place): etcd refuses the empty directory, the member is replaced', async t => {
    await replaced(t, {
      name: 'five',
      replicas: 5,
      prepare: armedFirstPod,
      fault: wipe,
      // The armed settings' refusal (only itself to ask), not the full list's "member count is unequal".
      says: /could not retrieve cluster information from the given URLs/,
      reason: /^DataDirEmpty$/,
    });
  });

  it('Memory medium: a member losing its Pod (and its data with it) is replaced through MemberReplacement', async t => {
    await replaced(t, {
      name: 'mem',
      replicas: 3,
      spec: { storage: { size: '256Mi', medium: 'Memory' } },
      fault: async (_name, victim) => {
        await kube().delete(
          { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: victim },
          { gracePeriodSeconds: 0 },
        );
      },
      reason: /^MemoryLost$/,
    });
  });
});
