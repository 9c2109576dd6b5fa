// Auth calls against real etcd, for every supported minor: turn auth on after bootstrap (also
// after a crash left a stale root user behind), a client without credentials is refused, a learner
// joins and is promoted with credentials, the root password is changed (and a repeat is told
// apart), and a snapshot taken with credentials restores with its users and roles.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Etcd3 } from 'etcd3';
import {
  addLearner,
  changeRootPassword,
  clusterStatus,
  enableAuth,
  listMembers,
  listUsersAndRoles,
  probeAuth,
  promote,
  snapshot,
} from '../../shared/etcd/index.ts';
import type { EtcdAuthOptions } from '../../shared/etcd/index.ts';
import { ETCD_MINORS } from '../support/etcd-binaries.ts';
import { EtcdTestCluster, initialClusterFlag, sleep } from '../support/etcd-process.ts';

const FIRST: EtcdAuthOptions = { username: 'root', password: 'first-pass-1' };
const SECOND: EtcdAuthOptions = { username: 'root', password: 'second-pass-2' };

for (const minor of ETCD_MINORS) {
  describe(`etcd auth against etcd ${minor}`, { timeout: 240_000 }, () => {
    let cluster: EtcdTestCluster;

    before(async () => {
      cluster = await EtcdTestCluster.start({ minor, size: 3 });
    });

    after(async () => {
      await cluster?.cleanup();
    });

    it('says disabled before auth is on', async () => {
      const probe = await probeAuth(cluster.endpoints, FIRST);
      assert.equal(probe.kind, 'disabled', JSON.stringify(probe));
    });

    it('turns auth on even after a crash left root with another password', async () => {
      // What an earlier try that died after "user add" leaves behind.
      const setup = new Etcd3({ hosts: cluster.endpoints });
      try {
        await setup.auth.roleAdd({ name: 'root' });
        await setup.auth.userAdd({ name: 'root', password: 'stale' });
        await setup.put('app/key').value('before-auth');
        await setup.auth.roleAdd({ name: 'app-reader' });
        await setup.auth.userAdd({ name: 'app', password: 'app-pass' });
        await setup.auth.userGrantRole({ user: 'app', role: 'app-reader' });
      } finally {
        setup.close();
      }
      const enabled = await enableAuth(cluster.endpoints, FIRST.password);
      assert.deepEqual(enabled, { kind: 'ok' });
      cluster.credentials = FIRST;
      assert.equal((await probeAuth(cluster.endpoints, FIRST)).kind, 'enabled');
      const stale = await probeAuth(cluster.endpoints, { username: 'root', password: 'stale' });
      assert.equal(stale.kind, 'auth-failed', JSON.stringify(stale));
    });

    it('refuses a client without credentials and serves one with them', async () => {
      const anonymous = new Etcd3({ hosts: cluster.endpoints });
      try {
        await assert.rejects(anonymous.get('app/key').string(), /user name is empty|permission denied/i);
      } finally {
        anonymous.close();
      }
      const root = new Etcd3({ hosts: cluster.endpoints, auth: FIRST });
      try {
        assert.equal(await root.get('app/key').string(), 'before-auth');
      } finally {
        root.close();
      }
      const again = await enableAuth(cluster.endpoints, FIRST.password);
      assert.equal(again.kind, 'auth-failed', 'once auth is on, the anonymous setup is refused');
    });

    it('adds and promotes a learner with credentials, and refuses membership calls without', async () => {
      const slot = await cluster.reserve('m4');
      const refused = await addLearner(cluster.endpoints, slot.peerURL);
      assert.equal(refused.kind, 'auth-failed', JSON.stringify(refused));
      // Right after start, etcd's strict reconfiguration check may still see a voter as new.
      let added = await addLearner(cluster.endpoints, slot.peerURL, { auth: FIRST });
      for (let i = 0; i < 100 && added.kind === 'unhealthy-cluster'; i++) {
        await sleep(100);
        added = await addLearner(cluster.endpoints, slot.peerURL, { auth: FIRST });
      }
      assert.equal(added.kind, 'ok', JSON.stringify(added));
      if (added.kind !== 'ok') return;
      const initialCluster = initialClusterFlag(
        added.members.map(m => ({
          name: m.id === added.member.id ? slot.name : m.name,
          peerURL: m.peerURLs[0],
        })),
      );
      // Not waited for through its status: with auth on, etcd 3.5.35+ answers status only to an
      // authenticated client, and a learner cannot authenticate (a raft request). The promotion
      // below waits for it to catch up instead.
      await cluster.startMember(slot, { state: 'existing', initialCluster, wait: false });
      // A follower first: etcd forwards a promote from a follower without the token (bug #20757).
      const statuses = await clusterStatus(cluster.endpoints, { auth: FIRST });
      const followersFirst = statuses
        .filter(s => s.kind === 'ok' && !s.status.isLearner)
        .sort(
          (a, b) =>
            Number(a.kind === 'ok' && a.status.isLeader) - Number(b.kind === 'ok' && b.status.isLeader),
        )
        .map(s => s.endpoint);
      let promoted = await promote(followersFirst, added.member.id, { auth: FIRST });
      for (let i = 0; i < 100 && promoted.kind === 'learner-not-in-sync'; i++) {
        await sleep(100);
        promoted = await promote(followersFirst, added.member.id, { auth: FIRST });
      }
      assert.equal(promoted.kind, 'ok', JSON.stringify(promoted));
      const listed = await listMembers(cluster.endpoints, { auth: FIRST });
      assert.equal(listed.kind, 'ok');
      assert.equal(listed.kind === 'ok' && listed.members.filter(m => !m.isLearner).length, 4);
      // The new member serves authenticated clients too.
      // (Just promoted, it may still be starting to serve: waited for, bounded.)
      let served = await probeAuth([slot.clientURL], FIRST);
      for (let i = 0; i < 100 && served.kind === 'unavailable'; i++) {
        await sleep(100);
        served = await probeAuth([slot.clientURL], FIRST);
      }
      assert.equal(served.kind, 'enabled', JSON.stringify(served));
    });

    it('changes the root password with the old one; a repeat is refused and the new one works', async () => {
      assert.deepEqual(await changeRootPassword(cluster.endpoints, FIRST, SECOND.password), { kind: 'ok' });
      cluster.credentials = SECOND;
      const repeat = await changeRootPassword(cluster.endpoints, FIRST, SECOND.password);
      assert.equal(repeat.kind, 'auth-failed', JSON.stringify(repeat));
      assert.equal((await probeAuth(cluster.endpoints, FIRST)).kind, 'auth-failed');
      assert.equal((await probeAuth(cluster.endpoints, SECOND)).kind, 'enabled');
    });

    it('takes a snapshot with credentials that restores with auth, users and roles', async () => {
      const refused = await snapshot(cluster.endpoints[0]);
      assert.equal(refused.kind, 'auth-failed', JSON.stringify(refused));
      const opened = await snapshot(cluster.endpoints[0], { auth: SECOND });
      assert.equal(opened.kind, 'ok', JSON.stringify(opened));
      if (opened.kind !== 'ok') return;
      const file = join(cluster.rootDir, 'auth-snapshot.db');
      await pipeline(opened.stream, createWriteStream(file));

      const slot = await cluster.reserve('r1');
      const dataDir = await cluster.restoreSnapshot(file, slot);
      const restored = await cluster.startMember(slot, {
        state: 'new',
        initialCluster: `${slot.name}=${slot.peerURL}`,
        dataDir,
      });
      try {
        assert.equal((await probeAuth([restored.clientURL], SECOND)).kind, 'enabled');
        const anonymous = await probeAuth([restored.clientURL], { username: 'app', password: 'wrong' });
        assert.equal(anonymous.kind, 'auth-failed');
        const names = await listUsersAndRoles([restored.clientURL], { auth: SECOND });
        assert.deepEqual(names, { kind: 'ok', users: ['app', 'root'], roles: ['app-reader', 'root'] });
      } finally {
        await restored.stop({ force: true });
      }
    });
  });
}
