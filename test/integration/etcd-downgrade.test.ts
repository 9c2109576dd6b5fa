// etcd's downgrade procedure through the adapter (shared/etcd/downgrade.ts), against real etcd:
// a 3-member cluster of one release is enabled for a downgrade to the previous minor, every
// member's storage is rewritten in that minor's format (read from the raw status reply), then
// each member is restarted on the older release with its data, one at a time; the data and the
// member IDs stay, and etcd ends the downgrade by itself once all run the older release.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { enableDowngrade, storageState } from '../../shared/etcd/downgrade.ts';
import { etcdBinaries, type EtcdMinor } from '../support/etcd-binaries.ts';
import { EtcdTestCluster, initialClusterFlag, sleep, waitForLeader } from '../support/etcd-process.ts';

const PAIRS: [EtcdMinor, EtcdMinor][] = [
  ['3.7', '3.6'],
  ['3.6', '3.5'],
];

for (const [from, to] of PAIRS) {
  describe(`downgrade etcd ${from} → ${to}`, { timeout: 180_000 }, () => {
    let cluster: EtcdTestCluster | undefined;
    after(async () => cluster?.cleanup());

    it('enables it, waits for each storage to be downgraded, restarts members on the old release', async () => {
      const older = etcdBinaries(to);
      cluster = await EtcdTestCluster.start({ minor: from, size: 3 });
      const c = cluster;
      const client = new Etcd3({ hosts: c.endpoints });
      try {
        await Promise.all(Array.from({ length: 50 }, (_, i) => client.put(`k${i}`).value(`v${i}`).exec()));
      } finally {
        client.close();
      }
      // Before: storage in the newer format (recorded a few seconds after start), no downgrade.
      for (const endpoint of c.endpoints) {
        let state = await storageState(endpoint);
        // (etcd moves a new member's storage version up to its own a step at a time, after start.)
        for (let i = 0; i < 300 && state.kind === 'ok' && state.state.storageVersion !== `${from}.0`; i++) {
          await sleep(100);
          state = await storageState(endpoint);
        }
        assert.equal(state.kind, 'ok');
        if (state.kind !== 'ok') return;
        const { memberId, ...rest } = state.state;
        assert.match(memberId, /^[0-9a-f]{16}$/);
        assert.deepEqual(rest, { storageVersion: `${from}.0`, downgradeEnabled: false, downgradeTarget: '' });
      }
      assert.deepEqual(await enableDowngrade(c.endpoints, older.version), {
        kind: 'ok',
        alreadyEnabled: false,
      });
      assert.deepEqual(await enableDowngrade(c.endpoints, older.version), {
        kind: 'ok',
        alreadyEnabled: true,
      });
      for (const endpoint of c.endpoints) {
        let state = await storageState(endpoint);
        for (let i = 0; i < 200 && state.kind === 'ok' && state.state.storageVersion !== `${to}.0`; i++) {
          await sleep(100);
          state = await storageState(endpoint);
        }
        assert.equal(state.kind, 'ok');
        if (state.kind !== 'ok') return;
        const { memberId: _, ...rest } = state.state;
        assert.deepEqual(rest, {
          storageVersion: `${to}.0`,
          downgradeEnabled: true,
          downgradeTarget: `${to}.0`,
        });
      }
      const idOf = async (url: string) => {
        const one = new Etcd3({ hosts: url });
        try {
          return (await one.maintenance.status()).header.member_id;
        } finally {
          one.close();
        }
      };
      const idsBefore = await Promise.all(['m1', 'm2', 'm3'].map(n => idOf(c.process(n).clientURL)));
      for (const name of ['m1', 'm2', 'm3']) {
        const proc = c.process(name);
        await proc.stop();
        const others = c.running().map(p => p.slot);
        await c.startMember(proc.slot, {
          state: 'existing',
          initialCluster: initialClusterFlag([...others, proc.slot]),
          dataDir: proc.dataDir,
          binaries: older,
        });
        await waitForLeader(c.running());
      }
      const check = new Etcd3({ hosts: c.endpoints });
      try {
        assert.equal(await check.getAll().prefix('k').count(), 50, 'every key is still there');
        const versions: string[] = [];
        for (const p of c.running()) {
          const one = new Etcd3({ hosts: p.clientURL });
          versions.push((await one.maintenance.status()).version);
          one.close();
        }
        assert.deepEqual(versions, [older.version, older.version, older.version]);
        const idsAfter = await Promise.all(['m1', 'm2', 'm3'].map(n => idOf(c.process(n).clientURL)));
        assert.deepEqual(idsAfter, idsBefore, 'each member keeps its ID');
      } finally {
        check.close();
      }
      // etcd ends the downgrade once every member runs the older release.
      let done = await storageState(c.endpoints[0]);
      for (let i = 0; i < 200 && done.kind === 'ok' && done.state.downgradeEnabled; i++) {
        await sleep(100);
        done = await storageState(c.endpoints[0]);
      }
      assert.equal(done.kind === 'ok' && done.state.downgradeEnabled, false);
    });
  });
}
