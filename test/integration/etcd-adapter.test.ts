// The etcd adapter against real etcd processes, the same suite for every supported minor version.
// One 3-member cluster per version; the steps build on each other, in order.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createWriteStream, statSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Etcd3 } from 'etcd3';
import {
  addLearner,
  clusterStatus,
  isHexId,
  listMembers,
  memberStatus,
  moveLeader,
  promote,
  remove,
  snapshot,
  toDecimalId,
} from '../../shared/etcd/index.ts';
import type { EtcdMember } from '../../shared/etcd/index.ts';
import { ETCD_MINORS, etcdBinaries } from '../support/etcd-binaries.ts';
import { EtcdTestCluster, initialClusterFlag, sleep } from '../support/etcd-process.ts';
import type { EtcdSlot } from '../support/etcd-process.ts';

/** Repeats `call` while its outcome is one of `retryOn`, for at most `ms`; returns the last outcome. */
async function retrying<T extends { kind: string }>(
  call: () => Promise<T>,
  retryOn: string[],
  ms: number,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const result = await call();
    if (!retryOn.includes(result.kind) || Date.now() > deadline) return result;
    await sleep(100);
  }
}

/** `promise`'s value, or undefined if it takes longer than `ms` (without keeping a timer alive). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>(resolve => (timer = setTimeout(resolve, ms, undefined)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function members(endpoints: string[]): Promise<EtcdMember[]> {
  const listed = await listMembers(endpoints);
  assert.equal(listed.kind, 'ok', JSON.stringify(listed));
  return listed.members;
}

async function leaderOf(endpoints: string[]): Promise<string> {
  const statuses = await clusterStatus(endpoints);
  const leaders = new Set(statuses.map(s => (s.kind === 'ok' ? s.status.leaderId : s.message)));
  assert.equal(leaders.size, 1, `members disagree about the leader: ${JSON.stringify(statuses)}`);
  const [leader] = leaders;
  assert.ok(leader && isHexId(leader));
  return leader;
}

for (const minor of ETCD_MINORS) {
  describe(`etcd adapter against etcd ${minor}`, () => {
    let cluster: EtcdTestCluster;
    let learnerSlot: EtcdSlot;
    let learnerId: string;

    before(async () => {
      cluster = await EtcdTestCluster.start({ minor, size: 3 });
    });

    after(async () => {
      await cluster?.cleanup();
    });

    it('lists three started voters with hex IDs', async () => {
      const listed = await listMembers(cluster.endpoints);
      assert.equal(listed.kind, 'ok');
      assert.ok(isHexId(listed.clusterId));
      assert.equal(listed.members.length, 3);
      for (const m of listed.members) {
        assert.ok(isHexId(m.id), m.id);
        assert.equal(m.isLearner, false);
        assert.equal(m.started, true);
        assert.deepEqual(m.clientURLs, [cluster.process(m.name).clientURL]);
        assert.deepEqual(m.peerURLs, [cluster.process(m.name).peerURL]);
      }
      assert.deepEqual(listed.members.map(m => m.name).sort(), ['m1', 'm2', 'm3']);
    });

    it('adds a learner, listed as a learner that has not started', async () => {
      learnerSlot = await cluster.reserve('m4');
      // Strict reconfiguration check: every voter must have been connected for 5 s first.
      const added = await retrying(
        () => addLearner(cluster.endpoints, learnerSlot.peerURL),
        ['unhealthy-cluster'],
        15_000,
      );
      assert.equal(added.kind, 'ok', JSON.stringify(added));
      assert.ok(isHexId(added.member.id));
      assert.equal(added.member.isLearner, true);
      assert.equal(added.member.started, false);
      assert.deepEqual(added.member.peerURLs, [learnerSlot.peerURL]);
      learnerId = added.member.id;
      const listed = (await members(cluster.endpoints)).find(m => m.id === learnerId);
      assert.deepEqual(listed, { ...added.member, name: '', clientURLs: [] });
    });

    it('refuses a second learner: too-many-learners', async () => {
      const second = await cluster.reserve('m5');
      const result = await addLearner(cluster.endpoints, second.peerURL);
      assert.equal(result.kind, 'too-many-learners', JSON.stringify(result));
    });

    it('refuses a duplicate peer URL: peer-url-exists, with the member to adopt', async () => {
      // Within the same second as the first add etcd says "member ID already exist", later
      // "Peer URLs already exists": the same outcome either way.
      const again = await addLearner(cluster.endpoints, learnerSlot.peerURL);
      assert.equal(again.kind, 'peer-url-exists', JSON.stringify(again));
      assert.equal(again.member?.id, learnerId);
      assert.equal(again.member.isLearner, true);
      const voter = cluster.process('m2');
      const ofVoter = await addLearner(cluster.endpoints, voter.peerURL);
      assert.equal(ofVoter.kind, 'peer-url-exists', JSON.stringify(ofVoter));
      assert.match(ofVoter.message, /etcdserver: Peer URLs already exists/);
      assert.equal(ofVoter.member?.name, 'm2');
    });

    it('refuses to promote the learner before it runs: learner-not-in-sync', async () => {
      const result = await promote(cluster.endpoints, learnerId);
      assert.equal(result.kind, 'learner-not-in-sync', JSON.stringify(result));
    });

    it('answers member-not-found for an unknown ID', async () => {
      const unknown = '00000000deadbeef';
      const promoted = await promote(cluster.endpoints, unknown);
      assert.equal(promoted.kind, 'member-not-found', JSON.stringify(promoted));
      const removed = await remove(cluster.endpoints, unknown);
      assert.equal(removed.kind, 'member-not-found', JSON.stringify(removed));
    });

    it('promotes the learner once its process runs and has caught up', async () => {
      const current = await members(cluster.endpoints);
      const initialCluster = initialClusterFlag(
        current.map(m => ({ name: m.id === learnerId ? learnerSlot.name : m.name, peerURL: m.peerURLs[0] })),
      );
      await cluster.startMember(learnerSlot, { state: 'existing', initialCluster });
      // The learner's own endpoint first: it refuses membership calls, so the adapter must move on.
      const learnerFirst = [
        learnerSlot.clientURL,
        ...cluster.endpoints.filter(e => e !== learnerSlot.clientURL),
      ];
      const listed = await listMembers(learnerFirst);
      assert.equal(listed.kind, 'ok', JSON.stringify(listed));
      const promoted = await retrying(
        () => promote(learnerFirst, learnerId),
        ['learner-not-in-sync'],
        15_000,
      );
      assert.equal(promoted.kind, 'ok', JSON.stringify(promoted));
      assert.equal(promoted.member?.isLearner, false);
      const after = await members(cluster.endpoints);
      assert.equal(after.length, 4);
      assert.ok(after.every(m => !m.isLearner && m.started));
      assert.equal(after.find(m => m.id === learnerId)?.name, 'm4');
    });

    it('refuses to promote a voter: not-a-learner', async () => {
      const result = await promote(cluster.endpoints, learnerId);
      assert.equal(result.kind, 'not-a-learner', JSON.stringify(result));
    });

    it("reports each member's status: one leader, the binary's version", async () => {
      const version = etcdBinaries(minor).version;
      const statuses = await clusterStatus(cluster.endpoints);
      const ids = (await members(cluster.endpoints)).map(m => m.id).sort();
      assert.equal(statuses.length, 4);
      const oks = statuses.map(s => {
        assert.equal(s.kind, 'ok', JSON.stringify(s));
        return s.status;
      });
      assert.deepEqual(
        oks.map(s => s.endpoint),
        cluster.endpoints,
      );
      assert.deepEqual(oks.map(s => s.memberId).sort(), ids);
      assert.equal(new Set(oks.map(s => s.leaderId)).size, 1);
      assert.equal(oks.filter(s => s.isLeader).length, 1);
      for (const s of oks) {
        assert.equal(s.version, version);
        assert.equal(s.isLearner, false);
        assert.ok(s.raftTerm >= 1 && s.raftIndex > 0 && s.raftAppliedIndex > 0, JSON.stringify(s));
        assert.ok(s.dbSize > 0 && s.dbSizeInUse > 0 && s.dbSizeInUse <= s.dbSize, JSON.stringify(s));
        assert.deepEqual(s.errors, []);
      }
    });

    it('moves the leadership to another member, then removes the old leader', async () => {
      const oldLeader = await leaderOf(cluster.endpoints);
      const same = await moveLeader(cluster.endpoints, oldLeader);
      assert.deepEqual(same, { kind: 'ok', leaderId: oldLeader, previousLeaderId: oldLeader });
      const bad = await moveLeader(cluster.endpoints, '00000000deadbeef');
      assert.equal(bad.kind, 'bad-leader-transferee', JSON.stringify(bad));

      const target = (await members(cluster.endpoints)).find(m => m.id !== oldLeader)!;
      const moved = await moveLeader(cluster.endpoints, target.id);
      assert.deepEqual(moved, { kind: 'ok', leaderId: target.id, previousLeaderId: oldLeader });
      const status = await memberStatus(target.clientURLs[0]);
      assert.ok(status.kind === 'ok' && status.status.isLeader, JSON.stringify(status));

      const oldProcess = await cluster.processById(toDecimalId(oldLeader));
      assert.ok(oldProcess);
      const removed = await retrying(
        () => remove(cluster.endpoints, oldLeader),
        ['unhealthy-cluster'],
        10_000,
      );
      assert.equal(removed.kind, 'ok', JSON.stringify(removed));
      assert.equal(removed.members.length, 3);
      assert.ok(!removed.members.some(m => m.id === oldLeader));
      // A removed member shuts itself down (3.4 logs a panic while doing so; that is expected).
      const exited = await within(oldProcess.exited, 10_000);
      if (!exited) await oldProcess.stop({ force: true });
      assert.equal((await members(cluster.endpoints)).length, 3);
      assert.equal(await leaderOf(cluster.endpoints), target.id);
    });

    it('streams a snapshot that etcd restores into a new member holding the keys', async () => {
      const writer = new Etcd3({ hosts: cluster.endpoints });
      try {
        await Promise.all(
          Array.from({ length: 50 }, (_, i) => writer.put(`adapter/key-${i}`).value(`v${i}`).exec()),
        );
      } finally {
        writer.close();
      }
      const follower = (await clusterStatus(cluster.endpoints)).find(
        s => s.kind === 'ok' && !s.status.isLeader,
      )!;
      const opened = await snapshot(follower.endpoint);
      assert.equal(opened.kind, 'ok', JSON.stringify(opened));
      const file = join(cluster.rootDir, 'snapshot.db');
      await pipeline(opened.stream, createWriteStream(file));
      assert.ok(statSync(file).size > 0);

      const slot = await cluster.reserve('r1');
      const dataDir = await cluster.restoreSnapshot(file, slot);
      const restored = await cluster.startMember(slot, {
        state: 'new',
        initialCluster: `${slot.name}=${slot.peerURL}`,
        dataDir,
      });
      const reader = new Etcd3({ hosts: restored.clientURL });
      try {
        assert.equal(await reader.get('adapter/key-7').string(), 'v7');
        assert.equal(await reader.getAll().prefix('adapter/').count(), 50);
      } finally {
        reader.close();
        await restored.stop({ force: true });
      }
    });

    it('keeps the other members in clusterStatus when one is down', async () => {
      const endpoints = cluster.endpoints;
      const leader = await leaderOf(endpoints);
      const down = (await members(endpoints)).find(m => m.id !== leader)!;
      const downURL = down.clientURLs[0];
      await cluster.process(down.name).stop({ force: true });

      const statuses = await clusterStatus(endpoints);
      assert.deepEqual(
        statuses.map(s => s.endpoint),
        endpoints,
      );
      for (const s of statuses) {
        if (s.endpoint === downURL) assert.equal(s.kind, 'unavailable', JSON.stringify(s));
        else assert.ok(s.kind === 'ok' && s.status.leaderId === leader, JSON.stringify(s));
      }
      const listed = await listMembers([downURL, ...endpoints.filter(e => e !== downURL)]);
      assert.ok(listed.kind === 'ok' && listed.endpoint !== downURL && listed.members.length === 3);
      const fromDown = await snapshot(downURL);
      assert.equal(fromDown.kind, 'unavailable');
    });
  });
}

describe('etcd adapter against an endpoint that never answers', () => {
  // Accepts TCP connections and stays silent, like a frozen member: only deadlines end the calls.
  const sockets = new Set<Socket>();
  const silent = createServer(socket => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  let url: string;
  const options = { timeoutMs: 300 };

  before(async () => {
    await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  });

  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise(resolve => silent.close(resolve));
  });

  // The server accepts connections and never answers: every call returning at all (within the
  // test's generous timeout) shows the deadline is applied; no elapsed time is asserted.
  it(
    'gives up after the deadline with unavailable, for every kind of call',
    { timeout: 120_000 },
    async () => {
      const results = await Promise.all([
        memberStatus(url, options),
        listMembers([url], options),
        addLearner([url], 'http://127.0.0.1:1', options),
        snapshot(url, options),
      ]);
      for (const r of results) assert.equal(r.kind, 'unavailable', JSON.stringify(r));
      const [status] = await clusterStatus([url], options);
      assert.equal(status?.kind, 'unavailable');
    },
  );
});
