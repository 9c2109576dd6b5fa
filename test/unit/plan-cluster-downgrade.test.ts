// A downgrade one minor back (3.7.3 → 3.6.16), step by step as reconcile-cluster plans it: etcd's
// downgrade enabled first, each member rolled back only once etcd has rewritten its storage in the
// older format, followers first, the leader last after leadership moved to a member already back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import { findCondition } from '../../shared/conditions.ts';
import { downgradeInPlay } from '../../shared/plan/upgrade/downgrade.ts';
import { planCluster, type ClusterPlan } from '../../shared/plan/cluster/plan.ts';
import type { DowngradeFacts } from '../../shared/plan/cluster/types.ts';
import { cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';

const NEW = '3.7.3';
const OLD = '3.6.16';
const id = (ordinal: number) => membership(ordinal).id;

/** Members' [spec, running] versions; the target is locked at OLD; demo-`leader` leads. */
function world(versions: [string, string][], opts: { leader?: number; facts?: DowngradeFacts } = {}) {
  const members = versions.map(([spec, running], i) => {
    const m = member(i);
    m.spec.version = spec;
    m.status = { ...m.status, version: running };
    return m;
  });
  const status: EtcdClusterStatus = locked(3, { clusterID: 'c0ffee0000000001' });
  status.observed = { ...status.observed!, version: OLD };
  const etcd = etcdOf(
    [0, 1, 2].map(i => membership(i)),
    opts.leader ?? 0,
  );
  if (opts.facts && etcd.reachable) etcd.downgrade = opts.facts;
  return state(cluster({ version: OLD }, status), members, { etcd });
}
const storage = (a: string, b: string, c: string) => ({ [id(0)]: a, [id(1)]: b, [id(2)]: c });
const progressing = (plan: ClusterPlan) => {
  const p = findCondition(plan.status.conditions, 'Progressing');
  return [p?.status, p?.reason, p?.message];
};
const allNew: [string, string][] = [
  [NEW, NEW],
  [NEW, NEW],
  [NEW, NEW],
];

describe("downgrade 3.7.3 → 3.6.16 by etcd's procedure", () => {
  it("etcd's downgrade state unknown yet: waits, changes nothing", () => {
    const plan = planCluster(world(allNew));
    assert.equal(plan.action.kind, 'wait');
    assert.deepEqual(progressing(plan), [
      'True',
      'Downgrading',
      "waiting to read member demo-2's storage version from etcd before it goes back to 3.6 (0/3 members on 3.6.16)",
    ]);
  });

  it('enables the downgrade first (validate + enable), with an Event', () => {
    const plan = planCluster(
      world(allNew, { facts: { enabled: false, storage: storage('3.7.0', '3.7.0', '3.7.0') } }),
    );
    assert.deepEqual(plan.action, { kind: 'enable-downgrade', version: OLD });
    const why =
      "enabling etcd's downgrade to 3.6 (downgrade validate, downgrade enable) before member demo-2 goes back from 3.7.3";
    assert.deepEqual(progressing(plan), ['True', 'Downgrading', `${why} (0/3 members on 3.6.16)`]);
    assert.deepEqual(plan.events, [{ type: 'Normal', reason: 'DowngradeEnabled', message: why }]);
  });

  it("enabled, but etcd has not rewritten the member's storage yet: waits", () => {
    const plan = planCluster(
      world(allNew, { facts: { enabled: true, storage: storage('3.6.0', '3.6.0', '3.7.0') } }),
    );
    assert.equal(plan.action.kind, 'wait');
    assert.match(
      String(progressing(plan)[2]),
      /rewrite member demo-2's storage \(now 3\.7\.0\) in the 3\.6 format/,
    );
  });

  it('storage in the 3.6 format: the newest follower goes back first, keeping its data and ID', () => {
    const plan = planCluster(
      world(allNew, { facts: { enabled: true, storage: storage('3.6.0', '3.6.0', '3.6.0') } }),
    );
    assert.deepEqual(plan.action, { kind: 'upgrade-member', member: 'demo-2', from: NEW, version: OLD });
    assert.deepEqual(plan.events, [
      {
        type: 'Normal',
        reason: 'DowngradingMember',
        message: 'downgrading member demo-2 from etcd 3.7.3 to 3.6.16',
      },
    ]);
    assert.equal(progressing(plan)[1], 'Downgrading');
  });

  it('the leader goes last, after leadership moves to a member already on 3.6', () => {
    const facts = { enabled: true, storage: storage('3.6.0', '3.6.0', '3.6.0') };
    const leaderLeft = world(
      [
        [NEW, NEW],
        [OLD, OLD],
        [OLD, OLD],
      ],
      { leader: 0, facts },
    );
    const move = planCluster(leaderLeft);
    assert.equal(move.action.kind, 'move-leader');
    assert.equal((move.action as { from: string }).from, 'demo-0');
    assert.ok([id(1), id(2)].includes((move.action as { toId: string }).toId));
    const moved = world(
      [
        [NEW, NEW],
        [OLD, OLD],
        [OLD, OLD],
      ],
      { leader: 1, facts },
    );
    assert.deepEqual(planCluster(moved).action, {
      kind: 'upgrade-member',
      member: 'demo-0',
      from: NEW,
      version: OLD,
    });
  });

  it('a member already set back but still running 3.7 is waited for, not enabled again', () => {
    const plan = planCluster(
      world(
        [
          [NEW, NEW],
          [NEW, NEW],
          [OLD, NEW],
        ],
        { facts: { enabled: true, storage: storage('3.6.0', '3.6.0', '3.6.0') } },
      ),
    );
    assert.equal(plan.action.kind, 'wait');
    assert.match(String(progressing(plan)[2]), /^waiting for demo-2 to run etcd 3\.6\.16/);
  });

  it('etcd facts are read only while a member runs a newer minor than the target', () => {
    assert.equal(downgradeInPlay(world(allNew)), true);
    const done = world([
      [OLD, OLD],
      [OLD, OLD],
      [OLD, OLD],
    ]);
    assert.equal(downgradeInPlay(done), false);
    assert.deepEqual(planCluster(done).action, { kind: 'none' });
  });
});
