// The guard before etcd 3.7 on a cluster that ran 3.5 (shared/plan/upgrade/wal-guard.ts), as
// planCluster decides it: spec.version 3.7 is not taken, and no member is rolled, while a member may
// still replay raft entries written under 3.5 — until its applied raft index reaches the index
// recorded when every member was first seen on 3.6 plus the --snapshot-count its Pod runs with;
// then the target is taken by itself. And how status.legacyRaftEntries is kept: absent while a
// member runs 3.5, the highest index reported once every member runs 3.6, 0 for a cluster formed on
// 3.6 or later, and not moved once recorded.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { findCondition } from '../../shared/conditions.ts';
import { planCluster, type ClusterPlan } from '../../shared/plan/cluster/plan.ts';
import type { ClusterState, RaftIndexes } from '../../shared/plan/cluster/types.ts';
import { needsRaftIndexes } from '../../shared/plan/upgrade/wal-guard.ts';
import { podSnapshotCount } from '../../shared/reconcile/cluster-observe.ts';
import { cluster, etcdOf, locked, member, membership, observed, state } from '../support/cluster-world.ts';

const V36 = '3.6.16';
const V37 = '3.7.3';
const H = 1000;
const S = 100;

const on = (ordinal: number, version: string | undefined, spec = version ?? V36): EtcdMember => {
  const m = member(ordinal);
  m.spec.version = spec;
  m.status = { ...m.status, ...(version && { version }) };
  return m;
};

interface World {
  wanted?: string;
  running?: string;
  versions?: (string | undefined)[];
  record?: number | null;
  applied?: (number | undefined)[];
  snapshotCounts?: (number | undefined)[];
  status?: EtcdClusterStatus;
}

/** 3 members formed on `running` (3.6.16), spec.version `wanted` (3.7.3), the record at H. */
function world(w: World = {}): ClusterState {
  const running = w.running ?? V36;
  const versions = w.versions ?? [running, running, running];
  const status = locked(3, {
    clusterID: 'c0ffee0000000001',
    observed: { ...observed(3), version: running },
    ...(w.record !== null && { legacyRaftEntries: { upToIndex: w.record ?? H } }),
    ...w.status,
  });
  const members = versions.map((v, i) => on(i, v, v ?? running));
  const s = state(cluster({ version: w.wanted ?? V37 }, status), members, {
    etcd: etcdOf([membership(0), membership(1), membership(2)], 0),
  });
  const counts = w.snapshotCounts ?? [S, S, S];
  s.pods = s.pods.map((p, i) => (counts[i] === undefined ? p : { ...p, snapshotCount: counts[i] }));
  const applied = w.applied ?? [H + S, H + S, H + S];
  const indexes: Record<string, RaftIndexes> = {};
  applied.forEach((a, i) => {
    if (a !== undefined) indexes[`demo-${i}`] = { raftIndex: a, applied: a };
  });
  s.raftIndexes = indexes;
  return s;
}

const progressing = (plan: ClusterPlan) => {
  const p = findCondition(plan.status.conditions, 'Progressing');
  return [p?.status, p?.reason, p?.message];
};
const held = (plan: ClusterPlan) => {
  assert.equal(plan.action.kind, 'recheck', JSON.stringify(plan.action));
  assert.equal(plan.status.observed?.version, V36, 'the target stays on 3.6: no member is rolled');
  const [status, reason, message] = progressing(plan);
  assert.equal(status, 'True');
  assert.equal(reason, 'WaitingForRaftSnapshot');
  return String(message);
};
const taken = (plan: ClusterPlan, version = V37) => {
  assert.equal(plan.status.observed?.version, version, JSON.stringify(progressing(plan)));
  assert.equal(progressing(plan)[1], 'NewTarget');
};
const BEFORE = 'waiting before the upgrade to etcd 3.7.3';
const CANNOT = 'which etcd 3.7 cannot read (it would crash at start)';

describe('the upgrade to etcd 3.7 waits for raft snapshots past the entries of etcd 3.5', () => {
  it('every member applied H + its snapshotCount: 3.7 is taken', () => taken(planCluster(world())));

  it('one member one entry short: nothing is taken or rolled, Progressing says who, up to which index, and what helps', () => {
    const plan = planCluster(world({ applied: [H + S, H + S - 1, H + S + 5000] }));
    assert.equal(
      held(plan),
      `${BEFORE}: member demo-1 may still replay raft entries written under etcd 3.5 (raft index 1000 and below), ${CANNOT}; etcd has saved a raft snapshot past them once the member's applied raft index reaches 1100 (its snapshotCount is 100; etcdctl endpoint status shows the index), and the upgrade then starts by itself: writes to the cluster bring that sooner`,
    );
    assert.deepEqual(plan.action, {
      kind: 'recheck',
      reason: 'waiting for raft snapshots past the etcd 3.5 entries',
    });
    assert.deepEqual(
      plan.events.map(e => [e.type, e.reason]),
      [['Normal', 'WaitingForRaftSnapshot']],
    );
    assert.equal(plan.status.progressDeadline, '2026-11-22T10:10:00Z', 'no new deadline: nothing adopted');
  });

  it('each member against its own Pod’s snapshotCount; the others are counted', () => {
    const message = held(
      planCluster(world({ applied: [H + S, H + 500, H + 10], snapshotCounts: [S, 1000, S] })),
    );
    assert.match(message, /member demo-1 .* reaches 2000 \(its snapshotCount is 1000;/);
    assert.match(message, /\(1 more member likewise\)$/);
  });

  it('the Event is recorded once: not again while Progressing already says so', () => {
    const first = planCluster(world({ applied: [H, H, H] }));
    const again = planCluster({
      ...world({ applied: [H + 1, H + 1, H + 1], status: { conditions: first.status.conditions } }),
    });
    held(again);
    assert.deepEqual(again.events, []);
  });

  it('the first wait on a reconciled cluster records the Event (its Progressing said Reconciled)', () => {
    const reconciled = planCluster(world({ wanted: V36 }));
    assert.equal(progressing(reconciled)[1], 'Reconciled');
    const plan = planCluster(
      world({ applied: [H, H, H], status: { conditions: reconciled.status.conditions } }),
    );
    held(plan);
    assert.deepEqual(
      plan.events.map(e => [e.type, e.reason]),
      [['Normal', 'WaitingForRaftSnapshot']],
    );
  });

  it('the wait adopts nothing: the current status kept field by field, only the observed figures added', () => {
    const s = world({ applied: [H, H, H] });
    const before = structuredClone(s.cluster.status!);
    const plan = planCluster(s);
    held(plan);
    for (const [key, value] of Object.entries(before))
      assert.deepEqual(plan.status[key as keyof typeof before], value, key);
    // What every planned status carries, from the members and Pods observed now.
    const observedNow = [
      'conditions',
      'members',
      'observedGeneration',
      'phase',
      'ready',
      'readyMembers',
      'selector',
    ];
    assert.deepEqual(
      Object.keys(plan.status).filter(k => !(k in before) && !observedNow.includes(k)),
      [],
      'nothing else in status',
    );
  });

  it('a member that did not answer, or whose Pod carries no --snapshot-count, holds it (unsure)', () => {
    assert.match(
      held(planCluster(world({ applied: [H + S, undefined, H + S] }))),
      /member demo-1 did not answer with its raft index/,
    );
    assert.match(
      held(planCluster(world({ snapshotCounts: [S, S, undefined] }))),
      /member demo-2 .* its Pod does not say its --snapshot-count$/,
    );
  });

  it('a paused cluster holds it: its members have no Pod to tell', () => {
    const s = world();
    s.cluster.spec.replicas = 0;
    s.cluster.status!.observed!.replicas = 0;
    s.members.forEach(m => (m.spec.dormant = true));
    s.pods = [];
    delete s.etcd;
    delete s.raftIndexes;
    assert.match(
      held(planCluster(s)),
      /member demo-0 is paused .* resume the cluster on 3.6 first \(2 more members likewise\)$/,
    );
  });

  it('no record yet: recorded from what the members answer now, and the upgrade waits for it', () => {
    const plan = planCluster(world({ record: null, applied: [1500, 1498, 1499] }));
    assert.deepEqual(plan.status.legacyRaftEntries, { upToIndex: 1500 });
    assert.match(held(plan), /raft index 1500 and below.* reaches 1600 /);
  });

  it('no record and a member has not reported its release: waits, saying so', () => {
    const plan = planCluster(world({ record: null, versions: [V36, V36, undefined] }));
    assert.equal(plan.status.legacyRaftEntries, undefined);
    assert.equal(
      held(plan),
      `${BEFORE}: the members' raft logs may still hold entries written under etcd 3.5, ${CANNOT}; etcdfn tells once every member runs 3.6 and answers (member demo-2 has not reported its release yet)`,
    );
  });

  it('a cluster formed on 3.6 or later (record 0) takes 3.7 at once', () => {
    taken(planCluster(world({ record: 0, applied: [5, 5, 5] })));
  });

  it('no guard for a patch of 3.6, for a downgrade, or for a patch of 3.7 on members all on 3.7', () => {
    taken(planCluster(world({ wanted: '3.6.17', record: null, applied: [] })), '3.6.17');
    const on37 = world({ running: V37, wanted: '3.7.4', record: H, applied: [] });
    taken(planCluster(on37), '3.7.4');
    const down = world({ running: V37, wanted: V36, record: H, applied: [] });
    assert.equal(planCluster(down).status.observed?.version, V36);
  });

  it('a refusal (a skipped minor) still comes first', () => {
    const plan = planCluster(world({ running: '3.5.35', wanted: V37, record: null }));
    assert.equal(progressing(plan)[1], 'VersionSkipsMinor');
  });
});

describe('status.legacyRaftEntries', () => {
  const steady = (w: World) => planCluster(world({ wanted: V36, ...w })).status.legacyRaftEntries;

  it('is dropped while any member is set to or reports etcd 3.5', () => {
    assert.equal(steady({ versions: [V36, '3.5.35', V36] }), undefined);
    const s = world({ wanted: V36 });
    s.members[0].spec.version = '3.5.35';
    assert.equal(planCluster(s).status.legacyRaftEntries, undefined);
  });

  it('is recorded once every running member reports 3.6 and answered: the highest index any reports', () => {
    assert.deepEqual(steady({ record: null, applied: [40, 42, 41] }), { upToIndex: 42 });
    assert.equal(steady({ record: null, applied: [40, undefined, 41] }), undefined, 'one did not answer');
    assert.equal(steady({ record: null, versions: [V36, V36, undefined] }), undefined);
  });

  it('is not written on a cluster being deleted: its status is kept as it is', () => {
    const s = world({ wanted: V36, record: null, applied: [40, 42, 41] });
    s.cluster.metadata.deletionTimestamp = new Date('2026-11-22T09:00:00Z');
    assert.equal(planCluster(s).status.legacyRaftEntries, undefined);
  });

  it('is never moved once recorded', () => {
    assert.deepEqual(steady({ record: 7, applied: [900, 900, 900] }), { upToIndex: 7 });
  });

  it('is 0 for a cluster that forms on 3.6 or later, absent for one that forms on 3.5', () => {
    const forming = (version: string) => {
      const status = locked(3, { observed: { ...observed(3), version } });
      const members = [0, 1, 2].map(i => on(i, undefined, version));
      members.forEach(m => (m.spec.bootstrap = true));
      const s = state(cluster({ version }, status), members, {
        etcd: etcdOf([membership(0), membership(1), membership(2)], 0),
      });
      const plan = planCluster(s);
      assert.equal(plan.status.clusterID, 'c0ffee0000000001', JSON.stringify(progressing(plan)));
      return plan.status.legacyRaftEntries;
    };
    assert.deepEqual(forming(V36), { upToIndex: 0 });
    assert.equal(forming('3.5.35'), undefined);
  });

  it('is absent while a cluster on 3.6 has not formed yet (etcd does not answer)', () => {
    const status = locked(3, { observed: { ...observed(3), version: V36 } });
    const members = [0, 1, 2].map(i => on(i, undefined, V36));
    members.forEach(m => (m.spec.bootstrap = true));
    const plan = planCluster(state(cluster({ version: V36 }, status), members));
    assert.equal(plan.status.clusterID, undefined);
    assert.equal(plan.status.legacyRaftEntries, undefined);
  });
});

describe('what reconcile-cluster reads for it', () => {
  it('raft indexes only to record, or while 3.7 is asked of members not on it', () => {
    const without = (w: World) => {
      const s = world(w);
      delete s.raftIndexes;
      return needsRaftIndexes(s);
    };
    assert.equal(without({ wanted: V36, record: null }), true, 'to record');
    assert.equal(without({ wanted: V36 }), false, 'recorded, nothing asked');
    assert.equal(without({}), true, '3.7 asked');
    assert.equal(without({ record: 0 }), false, 'nothing of 3.5 to wait for');
    assert.equal(without({ running: '3.5.35', wanted: V36, record: null }), false, 'a 3.5 cluster');
    assert.equal(without({ running: V37, wanted: '3.7.4' }), false, 'every member on 3.7');
  });

  it("the --snapshot-count of a Pod's etcd container, either spelling", () => {
    const pod = (command: string[], args: string[] = []): V1Pod => ({
      spec: {
        containers: [
          { name: 'etcd', command, args },
          { name: 'other', command: ['--snapshot-count=1'] },
        ],
      },
    });
    assert.equal(podSnapshotCount(pod(['etcd', '--name=x', '--snapshot-count=1000'])), 1000);
    assert.equal(podSnapshotCount(pod(['etcd'], ['--snapshot-count', '250'])), 250);
    assert.equal(podSnapshotCount(pod(['etcd', '--snapshot-count=many'])), undefined);
    assert.equal(podSnapshotCount(pod(['etcd'])), undefined);
  });
});
