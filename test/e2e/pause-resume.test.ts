// Pause and resume of a 3-member cluster on the sandbox with real etcd 3.5.16: 3 → 0 keeps one
// member's data, 0 → 3 resumes the same etcd cluster (same cluster ID, the kept member's ID) with
// every key written before the pause, and no member stuck being added (the QuorumLost seen after
// a paused member was deleted by hand cannot happen: that deletion is held). Issue 29: the kept
// member deleted while paused (3 and 1 members): its deletion is held, the conditions say so and
// how to get back, and resuming brings the cluster back to full size from it with every key (it
// runs as the seed, the others join it, then it is removed).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { API_VERSION, ETCD_MEMBER } from '../../shared/api/group.ts';
import { healingSandbox } from '../support/healing-sandbox.ts';
import { waitFor } from '../support/wait.ts';

describe('pause and resume (etcd 3.5.16, chaos on)', { timeout: 1_500_000 }, () => {
  const { start, stop, kube, clusterRef, cluster, members, withEtcd, mark, converged, create, writeKeys } =
    healingSandbox(13);
  before(start);
  after(stop);

  const available = async (name: string) =>
    (await cluster(name))?.status?.conditions?.find(c => c.type === 'Available');

  it('a paused 3-member cluster resumes to 3 with its cluster ID, the kept member ID and every key', async () => {
    const name = 'pz';
    await create(name, 3);
    const before = await converged(name, 3);
    const clusterID = before.cluster.status?.clusterID;
    await writeKeys(name, 'k/', 300);
    const pausing = await mark(name);
    await kube().mergePatch(clusterRef(name), { spec: { replicas: 0 } });
    await converged(name, 0, pausing);
    const kept = (await members(name)).filter(m => !m.metadata.deletionTimestamp);
    assert.equal(kept.length, 1, 'one member keeps the data');
    const keptName = kept[0].metadata.name!;
    const keptID = before.ids.get(keptName);
    const resuming = await mark(name);
    await kube().mergePatch(clusterRef(name), { spec: { replicas: 3 } });
    const after = await converged(name, 3, resuming);
    assert.equal(after.cluster.status?.clusterID, clusterID, 'the same etcd cluster');
    assert.equal(after.ids.get(keptName), keptID, 'the kept member resumed under its own ID');
    assert.equal(await withEtcd(name, client => client.getAll().prefix('k/').count()), 300);
    const available = after.cluster.status?.conditions?.find(c => c.type === 'Available');
    assert.equal(available?.reason, 'QuorumHealthy');
  });

  for (const replicas of [3, 1]) {
    it(`${replicas} member${replicas === 1 ? '' : 's'}: pause, delete the kept member, resume: back to ${replicas} with every key`, async () => {
      const name = `pd${replicas}`;
      await create(name, replicas);
      const before = await converged(name, replicas);
      const clusterID = before.cluster.status?.clusterID;
      await writeKeys(name, 'k/', 200);
      const pausing = await mark(name);
      await kube().mergePatch(clusterRef(name), { spec: { replicas: 0 } });
      await converged(name, 0, pausing);
      const kept = (await members(name)).filter(m => !m.metadata.deletionTimestamp);
      assert.equal(kept.length, 1, 'one member keeps the data');
      const keptName = kept[0].metadata.name!;
      const paused = await available(name);
      assert.equal(paused?.reason, 'Paused');
      assert.match(
        paused?.message ?? '',
        new RegExp(`data is kept on PersistentVolumeClaim data-${keptName}`),
      );

      const ref = { apiVersion: API_VERSION, kind: ETCD_MEMBER.kind, namespace: 'default', name: keptName };
      await kube().delete(ref);
      const held = await waitFor(
        'the Available condition to say the deletion is held',
        async () => {
          const c = await available(name);
          return (
            c?.message?.includes(`member ${keptName} was deleted but holds the cluster's only data`) && c
          );
        },
        { timeoutMs: 120_000 },
        async () => JSON.stringify((await cluster(name))?.status),
      );
      assert.equal(held.status, 'False');
      assert.match(held.message ?? '', /scale up to resume/);
      assert.ok(
        (await members(name)).some(m => m.metadata.name === keptName),
        'the deleted member is still there (its deletion is held)',
      );

      const resuming = await mark(name);
      await kube().mergePatch(clusterRef(name), { spec: { replicas } });
      const after = await converged(name, replicas, resuming);
      assert.equal(after.cluster.status?.clusterID, clusterID, 'the same etcd cluster');
      assert.ok(!after.ids.has(keptName), `the held member ${keptName} left etcd once the others joined`);
      assert.equal(after.ids.size, replicas);
      assert.equal(await withEtcd(name, client => client.getAll().prefix('k/').count()), 200);
      const names = (await members(name)).map(m => m.metadata.name);
      assert.ok(!names.includes(keptName), `EtcdMember ${keptName} is gone: ${names.join(', ')}`);
      const up = await available(name);
      assert.equal(up?.reason, 'QuorumHealthy');
      assert.equal(up?.message, `all ${replicas} members ready`);
    });
  }
});
