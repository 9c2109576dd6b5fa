// Pause and resume of a 3-member cluster on the sandbox with real etcd 3.5.16: 3 → 0 keeps one
// member's data, 0 → 3 resumes the same etcd cluster (same cluster ID, the kept member's ID) with
// every key written before the pause, and no member stuck being added (the QuorumLost seen after
// a paused member was deleted by hand cannot happen: that deletion is held).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { healingSandbox } from '../support/healing-sandbox.ts';

describe('pause and resume (etcd 3.5.16, chaos on)', { timeout: 1_500_000 }, () => {
  const { start, stop, kube, clusterRef, members, withEtcd, mark, converged, create, writeKeys } =
    healingSandbox(13);
  before(start);
  after(stop);

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
});
