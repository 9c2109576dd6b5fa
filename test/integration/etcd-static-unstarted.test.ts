// A static bootstrap with one initial member late (its Pod slow under load), against real etcd: the
// others form the cluster, and etcd lists the late member by its --initial-cluster name although it
// never ran. listMembers must call it not started (it has published no client URL), or the operator
// takes it for a member that ran and lost its data. Started late with state `existing` and the whole
// initial list (what its Pod gets once the cluster ID is latched), it joins under its own ID.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { listMembers } from '../../shared/etcd/index.ts';
import { ETCD_MINORS, etcdBinaries } from '../support/etcd-binaries.ts';
import {
  EtcdProcess,
  LoopbackAddresses,
  initialClusterFlag,
  sleep,
  waitForLeader,
  type EtcdSlot,
} from '../support/etcd-process.ts';

for (const minor of ETCD_MINORS) {
  describe(`a static initial member that has not started yet (etcd ${minor})`, () => {
    const root = mkdtempSync(join(tmpdir(), `etcdfn-static-late-${minor}-`));
    const procs: EtcdProcess[] = [];
    const token = `etcdfn-static-late-${process.pid}`;
    after(async () => {
      await Promise.all(procs.map(p => p.stop({ force: true })));
      rmSync(root, { recursive: true, force: true });
    });
    const start = (slot: EtcdSlot, initialCluster: string, state: 'new' | 'existing') => {
      const proc = new EtcdProcess({
        binaries: etcdBinaries(minor),
        slot,
        dataDir: join(root, slot.name),
        initialCluster,
        state,
        token,
      });
      procs.push(proc);
      return proc;
    };

    it('is listed by name but not started; started late as `existing`, it joins as itself', async () => {
      const addresses = new LoopbackAddresses();
      const slots = [await addresses.reserve('s-0'), await addresses.reserve('s-1')];
      slots.push(await addresses.reserve('s-2'));
      const initial = initialClusterFlag(slots);
      const formed = [start(slots[0], initial, 'new'), start(slots[1], initial, 'new')];
      await waitForLeader(formed);

      const listed = await listMembers(formed.map(p => p.clientURL));
      assert.equal(listed.kind, 'ok', JSON.stringify(listed));
      const late = listed.members.find(m => m.peerURLs.includes(slots[2].peerURL));
      assert.ok(late, 'etcd lists every initial member');
      assert.equal(late.name, 's-2', 'named from --initial-cluster before it ever ran');
      assert.deepEqual(late.clientURLs, []);
      assert.equal(late.started, false, 'not started: it never ran');
      assert.ok(listed.members.filter(m => m !== late).every(m => m.started));

      const joined = start(slots[2], initial, 'existing');
      await waitForLeader([joined]);
      let again = await listMembers([joined.clientURL]);
      for (let i = 0; i < 50 && again.kind === 'ok' && !again.members.every(m => m.started); i++) {
        await sleep(100);
        again = await listMembers([joined.clientURL]);
      }
      assert.equal(again.kind, 'ok', JSON.stringify(again));
      assert.equal(again.members.length, 3);
      assert.ok(
        again.members.every(m => m.started && !m.isLearner),
        JSON.stringify(again.members),
      );
      assert.equal(again.members.find(m => m.name === 's-2')?.id, late.id, 'it joined under its own ID');
    });
  });
}
