// Self-healing on the sandbox with real etcd 3.5.16: a member whose PVC is deleted with its Pod is
// replaced by a new member with a new ID (never restarted empty under its old ID), the cluster
// returns to full size, every key written before the fault is readable, and a writer that puts a
// key every 10 ms from before the fault until after the replacement has completed (the new member a
// voter, the cluster Reconciled) finds every acknowledged key afterwards. Then two of three
// members lose their data: the cluster reports it and changes nothing. And the member that holds a
// paused cluster's only data cannot be deleted with its data.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { API_VERSION } from '../../shared/api/group.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { NS, STEP_TIMEOUT, healingSandbox } from '../support/healing-sandbox.ts';
import { waitFor } from '../support/wait.ts';

describe('member replacement (etcd 3.5.16, chaos on)', { timeout: 1_500_000 }, () => {
  const {
    start,
    stop,
    kube,
    clusterRef,
    cluster,
    members,
    endpoints,
    withEtcd,
    describeWorld,
    mark,
    converged,
    create,
    writeKeys,
  } = healingSandbox(11);
  before(start);
  after(stop);

  const deleteObject = (kind: string, name: string) =>
    kube().delete({ apiVersion: 'v1', kind, namespace: NS, name }, { gracePeriodSeconds: 0 });

  it('a member whose PVC is deleted with its Pod is replaced: new ID, full size, no acknowledged write lost', async t => {
    const name = 'heal';
    await create(name, 3);
    const before = await converged(name, 3);
    await writeKeys(name, 'before/', 300);
    const victim = `${name}-1`;
    const oldID = before.ids.get(victim);
    assert.ok(oldID);

    // The writer: one put every 10 ms through every member it knew at the start; each
    // acknowledged key is recorded with the number of its put (puts are numbered as they are sent).
    const acknowledged: { key: string; n: number }[] = [];
    let writing = true;
    let sent = 0;
    let failedPuts = 0;
    const writer = (async () => {
      const client = new Etcd3({ hosts: await endpoints(name), dialTimeout: 1000 });
      try {
        for (let n = 0; writing; n++) {
          const key = `during/${String(n).padStart(6, '0')}`;
          sent = n + 1;
          try {
            await client.put(key).value(String(n)).exec();
            acknowledged.push({ key, n });
          } catch {
            failedPuts++;
          }
          await sleep(10);
        }
      } finally {
        client.close();
      }
    })();
    await waitFor('the writer is acknowledged', async () => acknowledged.length >= 50);

    // The writer stops however the wait ends (a failed wait must not leave it running).
    let evidence: { message: string };
    let after: Awaited<ReturnType<typeof converged>>;
    let newName: string;
    let ackedBeforeFault: number;
    let ackedAfterReplacement: number;
    try {
      const since = await mark(name);
      ackedBeforeFault = acknowledged.length;
      await deleteObject('Pod', victim);
      await deleteObject('PersistentVolumeClaim', `data-${victim}`);

      evidence = await waitFor(
        `${victim} records that its data is lost`,
        async () => {
          const m = (await members(name)).find(x => x.metadata.name === victim);
          return (
            m?.status?.dataLoss ??
            (m === undefined ? { reason: 'member already replaced', message: '' } : false)
          );
        },
        { timeoutMs: STEP_TIMEOUT, intervalMs: 250 },
        describeWorld(name),
      );
      await waitFor(
        `${victim} replaced`,
        async () => {
          const c = await cluster(name);
          const replaced = c.status?.conditions?.find(x => x.type === 'MemberReplacement');
          const gone = !(await members(name)).some(m => m.metadata.name === victim);
          return gone && replaced?.reason === 'Replaced';
        },
        { timeoutMs: STEP_TIMEOUT, intervalMs: 500 },
        describeWorld(name),
      );
      after = await converged(name, 3, since);
      // The replacement has completed: the new member is a voter and the cluster is Reconciled.
      // Only now the writer is let go, once puts sent from here on are acknowledged too.
      newName = [...after.ids.keys()].find(n => n !== `${name}-0` && n !== `${name}-2`)!;
      const voters = await withEtcd(name, c => c.cluster.memberList({ linearizable: true }));
      assert.equal(voters.members.find(m => m.name === newName)?.isLearner, false, `${newName} is a voter`);
      const progressing = after.cluster.status?.conditions?.find(c => c.type === 'Progressing');
      assert.equal(progressing?.reason, 'Reconciled');
      const firstAfter = sent;
      const sinceReplaced = () => acknowledged.filter(a => a.n >= firstAfter).length;
      await waitFor(
        'puts sent after the replacement are acknowledged',
        async () => sinceReplaced() >= 20,
        { timeoutMs: STEP_TIMEOUT, intervalMs: 100 },
        async () => `${failedPuts} puts failed so far\n${await describeWorld(name)()}`,
      );
      ackedAfterReplacement = sinceReplaced();
    } finally {
      writing = false;
      await writer;
    }

    assert.ok(!after.ids.has(victim), `${victim} is gone from etcd`);
    assert.ok(![...after.ids.values()].includes(oldID), 'the old member ID is not in etcd any more');
    assert.equal(after.ids.size, 3);
    const replacement = after.cluster.status?.conditions?.find(c => c.type === 'MemberReplacement');
    assert.equal(replacement?.status, 'False');
    assert.equal(replacement?.reason, 'Replaced');
    assert.equal(
      replacement?.message,
      `replaced member ${victim} (ID ${oldID}), whose data was lost (${evidence.message}), with new member ${newName} (ID ${after.ids.get(newName)})`,
    );

    const beforeCount = await withEtcd(name, client => client.getAll().prefix('before/').count());
    assert.equal(beforeCount, 300, 'every key written before the fault is readable');
    const stored = new Set(await withEtcd(name, client => client.getAll().prefix('during/').keys()));
    const lost = acknowledged.filter(a => !stored.has(a.key)).map(a => a.key);
    assert.deepEqual(lost, [], `every acknowledged put is readable (${acknowledged.length} acknowledged)`);
    t.diagnostic(
      `writer: ${acknowledged.length} puts acknowledged (${ackedBeforeFault} before the fault, ${ackedAfterReplacement} sent after the replacement had completed), ${failedPuts} failed, 0 lost; ${victim} (${oldID}) → ${newName} (${after.ids.get(newName)})`,
    );
  });

  it('two of three members losing their data: reported, and nothing is changed', async () => {
    const name = 'heal';
    const start = await converged(name, 3);
    const [a, b] = [...start.ids.keys()].sort().slice(1);
    for (const victim of [a, b]) {
      await deleteObject('Pod', victim);
      await deleteObject('PersistentVolumeClaim', `data-${victim}`);
    }
    const blocked = await waitFor(
      'the replacement is reported as blocked',
      async () => {
        const c = await cluster(name);
        const progressing = c.status?.conditions?.find(x => x.type === 'Progressing');
        const available = c.status?.conditions?.find(x => x.type === 'Available');
        return progressing?.reason === 'ReplacementBlocked' && available?.reason === 'QuorumLost' ? c : false;
      },
      { timeoutMs: STEP_TIMEOUT, intervalMs: 500 },
      describeWorld(name),
    );
    assert.match(
      blocked.status?.conditions?.find(x => x.type === 'Progressing')?.message ?? '',
      // Through the surviving member etcd may not answer at all (its member list needs quorum).
      /cannot replace member .* yet \(PVC data-heal-\d, which held .*'s data, is gone\): (.* not healthy|etcd does not answer)/,
    );
    // Nothing was changed: the same three EtcdMembers, none being deleted, no replacement recorded.
    const now = await members(name);
    assert.deepEqual(now.map(m => m.metadata.name).sort(), [...start.ids.keys()].sort());
    assert.ok(now.every(m => !m.metadata.deletionTimestamp));
    assert.equal(blocked.status?.replacement, undefined);
    const available = blocked.status?.conditions?.find(x => x.type === 'Available');
    assert.match(available?.message ?? '', /quorum lost.*data lost: PVC data-heal-\d.*What you can do/);
    for (const victim of [a, b]) {
      const m = now.find(x => x.metadata.name === victim);
      assert.ok(m?.status?.dataLoss, `${victim} records its data loss`);
    }
  });

  it("the member holding a paused cluster's only data keeps it when deleted", async () => {
    const name = 'held';
    await create(name, 1);
    await converged(name, 1);
    await writeKeys(name, 'k/', 50);
    const since = await mark(name);
    await kube().mergePatch(clusterRef(name), { spec: { replicas: 0 } });
    await converged(name, 0, since);
    const memberName = `${name}-0`;
    await kube().delete({ apiVersion: API_VERSION, kind: 'EtcdMember', namespace: NS, name: memberName });
    const held = await waitFor(
      'a DeletionHeld Event',
      async () => {
        const events = await kube().list<KubeObject & { reason?: string; message?: string }>(
          'v1',
          'Event',
          NS,
        );
        return events.find(e => e.reason === 'DeletionHeld' && (e.message ?? '').includes(memberName));
      },
      { timeoutMs: STEP_TIMEOUT },
      describeWorld(name),
    );
    assert.match(held.message ?? '', /holds the only copy of EtcdCluster held's data \(on PVC data-held-0\)/);
    const member = (await members(name)).find(m => m.metadata.name === memberName);
    assert.ok(member?.metadata.deletionTimestamp, 'the member is Terminating, not gone');
    const pvc = await kube().get({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      namespace: NS,
      name: `data-${memberName}`,
    });
    assert.equal(pvc.kind, 'found', 'its PVC is kept');
  });
});
