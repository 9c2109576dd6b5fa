// Crash tests for member replacement, on the sandbox with real etcd 3.5.16 and chaos on: for each
// side effect of a replacement (evidence recorded, Pod stopped, replacement recorded, member
// deleted, removed from etcd, finalizer removed, the new member claimed, created, added as a
// learner, promoted, the operation cleared), the function that carried it out is killed (SIGKILL, through
// the crash points of shared/runtime/crash.ts) just after it and started again. Only normal events
// follow. Each time the lost member must still be replaced by a new one with a new ID, the cluster
// return to full size with etcd's member list equal to the EtcdMembers, MemberReplacement say
// Replaced with the old member's name and ID, and every key written at the start still be there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { toHexId } from '../../shared/etcd/ids.ts';
import type { CrashPoint } from '../../shared/runtime/crash.ts';
import { CrashPoints, functionOf } from '../support/crash-points.ts';
import { beforeCreation, converged, mark, type ClusterRef } from '../support/converge.ts';
import { NS, STEP_TIMEOUT, healingSandbox, type Member } from '../support/healing-sandbox.ts';
import { waitFor } from '../support/wait.ts';

const NAME = 'crashrep';
const KEYS = 200;

/** The side effects of one replacement, in the order it passes them. */
const POINTS: CrashPoint[] = [
  'member:status-written',
  'member:pod-deleted',
  'cluster:status-written',
  'cluster:member-deleted',
  'finalize:removed-from-etcd',
  'finalize:finalizer-removed',
  'cluster:claimed',
  'cluster:member-created',
  'cluster:learner-added',
  'cluster:promoted',
  'cluster:operation-cleared',
];

describe(
  'a crash after each side effect of a replacement converges (etcd 3.5.16, chaos on)',
  { timeout: 3_000_000 },
  () => {
    const crashPoints = CrashPoints.inTempDir('etcdfn-crash-replacement-', () => world.running().restarts());
    const world = healingSandbox(31, { crashDir: crashPoints.dir, tickSeconds: 5 });
    const { start, stop, kube, members, pods, withEtcd, describeWorld } = world;
    before(start);
    after(async () => {
      await stop();
      crashPoints.remove();
    });
    const ref = (): ClusterRef => ({ kube: kube(), namespace: NS, name: NAME });

    async function ids(): Promise<Map<string, string>> {
      const list = await withEtcd(NAME, c => c.cluster.memberList({ linearizable: true }));
      return new Map(list.members.map(m => [m.name, toHexId(m.ID)]));
    }
    async function leaderName(): Promise<string> {
      for (const pod of await pods(NAME)) {
        const client = new Etcd3({ hosts: `http://${pod.status?.podIP}:2379`, dialTimeout: 2000 });
        try {
          const st = await client.maintenance.status();
          if (st.leader === st.header.member_id) return pod.metadata.name ?? '';
        } catch {
          // not answering: not the leader we can use
        } finally {
          client.close();
        }
      }
      return '';
    }

    it('a 3-member cluster with keys', async () => {
      await world.create(NAME, 3);
      await converged(ref(), {
        replicas: 3,
        since: beforeCreation(),
        timeoutMs: STEP_TIMEOUT,
        describe: describeWorld(NAME),
      });
      await world.writeKeys(NAME, 'k/', KEYS);
    });

    for (const point of POINTS) {
      it(`crash after ${point}`, async t => {
        const describe = describeWorld(NAME);
        const before = await ids();
        const leader = await leaderName();
        const victim = [...before.keys()].sort().find(n => n !== leader);
        assert.ok(victim);
        const oldID = before.get(victim);
        const restartsBefore = crashPoints.restartsOf(functionOf(point));
        const since = await mark(ref());
        // The fault: the member's PVC is deleted while its Pod runs.
        const deletePvc = () =>
          kube().delete({
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            namespace: NS,
            name: `data-${victim}`,
          });
        await crashPoints.crashThrough(point, deletePvc, {
          restartsBefore,
          timeoutMs: STEP_TIMEOUT,
          describe,
        });
        await waitFor(
          `${victim} replaced`,
          async () => !(await members(NAME)).some((m: Member) => m.metadata.name === victim),
          { timeoutMs: STEP_TIMEOUT, intervalMs: 500 },
          describe,
        );
        const done = await converged(ref(), { replicas: 3, since, timeoutMs: STEP_TIMEOUT, describe });
        const after = await ids();
        assert.equal(after.size, 3);
        assert.ok(!after.has(victim), `${victim} is gone from etcd`);
        assert.ok(![...after.values()].includes(oldID ?? ''), 'the old member ID is gone');
        const newcomer = [...after.keys()].find(n => !before.has(n));
        assert.ok(newcomer, 'a new member took its place');
        const condition = done.status?.conditions?.find(c => c.type === 'MemberReplacement');
        assert.equal(condition?.reason, 'Replaced');
        assert.match(
          condition?.message ?? '',
          new RegExp(
            `^replaced member ${victim} \\(ID ${oldID}\\), .* with new member ${newcomer} \\(ID ${after.get(newcomer)}\\)$`,
          ),
        );
        assert.equal(await withEtcd(NAME, c => c.getAll().prefix('k/').count()), KEYS);
        t.diagnostic(`${victim} (${oldID}) → ${newcomer} (${after.get(newcomer)})`);
      });
    }
  },
);
