// Quorum-loss recovery under spec.recovery.policy ForceNewCluster (shared/plan/recovery/force-new-cluster.ts),
// as a person follows it: the default only reports; under the policy the loss must last a grace
// period; the survivor is the most advanced member answering with its data; each recorded step
// resumes to the same next step (an operator crash anywhere re-runs safely); quorum returning before
// the forced start cancels it; the flag is set once and unset as soon as the forced start is seen.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus, ForceNewClusterStatus } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { findCondition } from '../../shared/conditions.ts';
import type { MemberStatus } from '../../shared/etcd/status.ts';
import { planCluster, type ClusterPlan } from '../../shared/plan/cluster/plan.ts';
import { chooseSurvivor, needsSelfReports } from '../../shared/plan/recovery/force-new-cluster.ts';
import { quorumLost } from '../../shared/plan/recovery/force-new-cluster-status.ts';
import type { ClusterState, EtcdView } from '../../shared/plan/cluster/types.ts';
import { cluster, etcdOf, locked, member, membership, NOW, state } from '../support/cluster-world.ts';

const CLUSTER_ID = 'c0ffee0000000001';
const idOf = (ordinal: number) => membership(ordinal).id;
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const DETECTED = '2026-11-22T10:00:00Z';

/** demo-N that has run with its data (ID recorded); `lost`: its data is gone. */
function ran(ordinal: number, opts: { lost?: boolean; force?: boolean } = {}): EtcdMember {
  const m = member(ordinal);
  m.spec.bootstrap = ordinal === 0;
  if (opts.force) m.spec.forceNewCluster = true;
  m.status = {
    isVoter: true,
    memberID: idOf(ordinal),
    hasData: true,
    ...(opts.lost && {
      dataLoss: { reason: 'PVCMissing', message: `PVC data-demo-${ordinal} is gone`, detectedAt: DETECTED },
    }),
  };
  return m;
}

function report(ordinal: number, o: Partial<MemberStatus> = {}): MemberStatus {
  return {
    endpoint: `http://demo-${ordinal}.demo.prod.svc:2379`,
    memberId: idOf(ordinal),
    clusterId: CLUSTER_ID,
    leaderId: undefined,
    isLeader: false,
    isLearner: false,
    version: '3.5.16',
    raftTerm: 2,
    raftIndex: 500,
    raftAppliedIndex: 500,
    dbSize: 1,
    dbSizeInUse: 1,
    errors: [],
    ...o,
  };
}

interface World {
  policy?: 'ReportOnly' | 'ForceNewCluster';
  record?: ForceNewClusterStatus;
  members?: EtcdMember[];
  /** Ordinals whose Pod is ready; lost members (1, 2) have no Pod. */
  ready?: number[];
  etcd?: EtcdView;
  reports?: Record<string, MemberStatus>;
  now?: Date;
  flaggedPod?: boolean;
  extra?: EtcdClusterStatus;
}

function world(w: World = {}): ClusterState {
  const c = cluster(
    { replicas: 3, ...(w.policy && { recovery: { policy: w.policy } }) },
    locked(3, {
      clusterID: CLUSTER_ID,
      ...(w.record && { forceNewCluster: w.record }),
      ...w.extra,
    }),
  );
  const members = w.members ?? [ran(0), ran(1, { lost: true }), ran(2, { lost: true })];
  const s = state(c, members, { ready: w.ready ?? [], now: w.now ?? NOW, ...(w.etcd && { etcd: w.etcd }) });
  s.pods = s.pods.filter(p => !members.find(m => m.metadata.name === p.name)?.status?.dataLoss);
  if (w.flaggedPod) for (const p of s.pods) if (p.name === 'demo-0') p.forceNewCluster = true;
  if (w.reports) s.selfReports = w.reports;
  return s;
}

const progressing = (plan: ClusterPlan) => {
  const c = findCondition(plan.status.conditions, 'Progressing');
  return c && [c.reason, c.message];
};
const recovery = (plan: ClusterPlan) => findCondition(plan.status.conditions, 'QuorumRecovery');

const waiting: ForceNewClusterStatus = { step: 'Waiting', detectedAt: DETECTED };
const WHY =
  'the highest raft index of the members answering with their data (demo-0 500); demo-1 lost its data (PVCMissing); demo-2 lost its data (PVCMissing)';
const forcing: ForceNewClusterStatus = {
  step: 'Forcing',
  detectedAt: DETECTED,
  member: 'demo-0',
  memberID: idOf(0),
  reason: WHY,
  lost: ['demo-1', 'demo-2'],
  previousClusterID: CLUSTER_ID,
  startedAt: '2026-11-22T10:00:30Z',
};
const removing: ForceNewClusterStatus = {
  ...forcing,
  step: 'Removing',
  clusterID: CLUSTER_ID,
  forcedAt: '2026-11-22T10:00:40Z',
};
const rejoining: ForceNewClusterStatus = { ...removing, step: 'Rejoining' };
const alone = etcdOf([membership(0)]);

describe('quorum lost', () => {
  it('is a majority of the voters not ready and etcd answering through none', () => {
    assert.equal(quorumLost(world()), true);
    assert.equal(quorumLost(world({ ready: [0], etcd: { reachable: false, error: 'timeout' } })), true);
    const two = [ran(0), ran(1), ran(2, { lost: true })];
    assert.equal(quorumLost(world({ members: two, ready: [0, 1] })), false, '2 of 3 ready');
    assert.equal(quorumLost(world({ ready: [0], etcd: alone })), false, 'etcd answered: a quorum');
    const one = state(cluster({ replicas: 1 }, locked(1, { clusterID: CLUSTER_ID })), [ran(0)], {
      ready: [],
    });
    assert.equal(quorumLost(one), false, 'a one-member cluster has nobody to lose');
    const paused = world({ extra: { observed: { ...locked(0).observed!, replicas: 0 } } });
    assert.equal(quorumLost(paused), false, 'paused');
    const unformed = world({ extra: { clusterID: '' } });
    assert.equal(quorumLost(unformed), false, 'not formed');
  });
});

describe('ReportOnly (the default) changes nothing', () => {
  for (const policy of [undefined, 'ReportOnly'] as const) {
    it(`policy ${policy ?? 'unset'}: QuorumLost, no record, no step`, () => {
      const s = world(policy ? { policy } : {});
      assert.equal(needsSelfReports(s), false, 'not even the survivors are asked');
      const plan = planCluster(s);
      assert.equal(plan.status.forceNewCluster, undefined);
      assert.equal(findCondition(plan.status.conditions, 'Available')?.reason, 'QuorumLost');
      assert.match(
        findCondition(plan.status.conditions, 'Available')?.message ?? '',
        /demo-0 \(ID 0000000000001000\) not ready.*demo-1 \(ID 0000000000001001\) data lost.*etcdfn changes nothing while quorum is lost.*ForceNewCluster/,
      );
      assert.notEqual(plan.action.kind, 'force-new-cluster');
      assert.notEqual(plan.action.kind, 'delete-members');
      assert.notEqual(plan.action.kind, 'delete-member');
    });
  }
});

describe('ForceNewCluster: detection and the grace', () => {
  it('the first sight of the loss is recorded (step Waiting) with a Warning; nothing else', () => {
    const plan = planCluster(world({ policy: 'ForceNewCluster' }));
    assert.deepEqual(plan.action, { kind: 'none' });
    assert.deepEqual(plan.status.forceNewCluster, waiting);
    const [reason, message] = progressing(plan)!;
    assert.equal(reason, 'Recovering');
    assert.match(
      message,
      /quorum lost \(0 of 3 voters ready\) since 2026-11-22T10:00:00Z.*unless quorum returns by 2026-11-22T10:00:30Z/,
    );
    assert.deepEqual(
      plan.events.map(e => [e.type, e.reason]),
      [['Warning', 'QuorumLossDetected']],
    );
    assert.equal(recovery(plan)?.reason, 'Waiting');
  });

  it('within the grace: a recheck (retry), the same status', () => {
    const s = world({
      policy: 'ForceNewCluster',
      record: waiting,
      now: at(29),
      reports: { 'demo-0': report(0) },
    });
    assert.equal(needsSelfReports(s), true);
    const plan = planCluster(s);
    assert.equal(plan.action.kind, 'recheck');
    assert.equal(
      plan.action.kind === 'recheck' && plan.action.reason,
      'quorum-loss grace until 2026-11-22T10:00:30Z',
    );
    assert.deepEqual(plan.status.forceNewCluster, waiting);
    assert.deepEqual(plan.events, []);
    const again = planCluster({ ...s, cluster: { ...s.cluster, status: plan.status } });
    assert.deepEqual(again.status, plan.status, 'no write without a change');
  });

  it('quorum back within the grace: the record goes, nothing changed', () => {
    const members = [ran(0), ran(1), ran(2)];
    const plan = planCluster(
      world({
        policy: 'ForceNewCluster',
        record: waiting,
        members,
        ready: [0, 1, 2],
        etcd: etcdOf([membership(0), membership(1), membership(2)]),
      }),
    );
    assert.equal(plan.status.forceNewCluster, undefined);
    assert.deepEqual(
      plan.events.map(e => e.reason),
      ['RecoveryCancelled'],
    );
    assert.match(plan.events[0].message, /quorum returned; nothing was changed/);
  });

  it('the policy set back to ReportOnly while waiting: cancelled', () => {
    const plan = planCluster(world({ policy: 'ReportOnly', record: waiting, now: at(60) }));
    assert.equal(plan.status.forceNewCluster, undefined);
    assert.match(plan.events[0].message, /spec.recovery.policy is ReportOnly/);
  });
});

describe('ForceNewCluster: the survivor', () => {
  const after = (reports: Record<string, MemberStatus>, members?: EtcdMember[]) =>
    world({ policy: 'ForceNewCluster', record: waiting, now: at(30), reports, ...(members && { members }) });

  it('after the grace: the survivor is claimed (step Forcing) with why, its ID and the lost', () => {
    const plan = planCluster(after({ 'demo-0': report(0) }));
    assert.deepEqual(plan.action, { kind: 'none' }, 'the claim is the status write');
    assert.deepEqual(plan.status.forceNewCluster, forcing);
    assert.deepEqual(
      plan.events.map(e => [e.type, e.reason]),
      [['Warning', 'ForcingNewCluster']],
    );
    assert.match(plan.events[0].message, /writes only they acknowledged are lost/);
    assert.equal(recovery(plan)?.reason, 'Forcing');
  });

  it('5 members, 3 lost: of two survivors the more advanced is kept; the other is given up on too', () => {
    const members = [ran(0), ran(1), ran(2, { lost: true }), ran(3, { lost: true }), ran(4, { lost: true })];
    const s = after(
      { 'demo-0': report(0, { raftIndex: 700 }), 'demo-1': report(1, { raftIndex: 701 }) },
      members,
    );
    s.cluster.status = { ...s.cluster.status, observed: { ...s.cluster.status!.observed!, replicas: 5 } };
    const plan = planCluster(s);
    assert.equal(plan.status.forceNewCluster?.member, 'demo-1');
    assert.deepEqual(plan.status.forceNewCluster?.lost, ['demo-0', 'demo-2', 'demo-3', 'demo-4']);
  });

  it('an operation or a replacement in flight is dropped by the claim', () => {
    const s = after({ 'demo-0': report(0) });
    s.cluster.status = {
      ...s.cluster.status,
      operation: { type: 'add-member', member: 'demo-3', bootstrap: false, startedAt: DETECTED },
      replacement: { member: 'demo-1', reason: 'x', startedAt: DETECTED },
    };
    const plan = planCluster(s);
    assert.equal(plan.status.forceNewCluster?.step, 'Forcing');
    assert.equal(plan.status.operation, undefined);
    assert.equal(plan.status.replacement, undefined);
  });

  const three = () => [ran(0), ran(1), ran(2, { lost: true })];
  const rows: {
    name: string;
    reports: Record<string, MemberStatus>;
    members?: EtcdMember[];
    chosen?: string;
    why: RegExp;
  }[] = [
    {
      name: 'the highest raft index wins',
      members: three(),
      reports: { 'demo-0': report(0, { raftIndex: 400 }), 'demo-1': report(1, { raftIndex: 410 }) },
      chosen: 'demo-1',
      why: /\(demo-1 410, demo-0 400\); demo-2 lost its data/,
    },
    {
      name: 'equal raft index: the higher applied index',
      members: three(),
      reports: { 'demo-0': report(0, { raftAppliedIndex: 499 }), 'demo-1': report(1) },
      chosen: 'demo-1',
      why: /demo-1 500, demo-0 500/,
    },
    {
      name: 'all equal: the first by name',
      members: three(),
      reports: { 'demo-0': report(0), 'demo-1': report(1) },
      chosen: 'demo-0',
      why: /demo-0 500, demo-1 500/,
    },
    {
      name: 'one answering as another member is passed over',
      members: three(),
      reports: { 'demo-0': report(0, { raftIndex: 900, memberId: 'ffff' }), 'demo-1': report(1) },
      chosen: 'demo-1',
      why: /demo-0 answers as member ffff/,
    },
    {
      name: 'one answering for another cluster is passed over',
      members: three(),
      reports: { 'demo-0': report(0, { clusterId: 'beef' }), 'demo-1': report(1) },
      chosen: 'demo-1',
      why: /demo-0 answers for etcd cluster beef/,
    },
    {
      name: 'a member that never ran with its data is passed over',
      members: [ran(0), { ...ran(1), status: { isVoter: true } }, ran(2, { lost: true })],
      reports: { 'demo-0': report(0), 'demo-1': report(1, { raftIndex: 999 }) },
      chosen: 'demo-0',
      why: /demo-1 never ran with its data/,
    },
    {
      name: 'Memory medium: a new Pod would start empty, so none',
      members: [0, 1, 2].map(n => {
        const m = ran(n, { lost: n === 2 });
        m.spec.storage = { size: '256Mi', medium: 'Memory' };
        return m;
      }),
      reports: { 'demo-0': report(0), 'demo-1': report(1) },
      why: /no member answers with its data; demo-0 keeps its data in memory .*; demo-1 keeps its data in memory/,
    },
    {
      name: 'nobody answers: none',
      reports: {},
      why: /no member answers with its data; demo-0 does not answer; demo-1 lost its data/,
    },
    {
      name: 'a member that knows a leader: quorum may hold, none',
      members: three(),
      reports: { 'demo-0': report(0, { leaderId: idOf(1) }), 'demo-1': report(1) },
      why: /demo-0 still knows leader 0000000000001001, so quorum may hold/,
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const choice = chooseSurvivor(after(row.reports, row.members));
      if (row.chosen) {
        assert.equal(choice.kind, 'chosen');
        assert.equal(choice.kind === 'chosen' && choice.survivor.metadata.name, row.chosen);
      } else assert.equal(choice.kind, 'none');
      assert.match(choice.why, row.why);
    });
  }

  it('no survivor: reported (RecoveryBlocked, one Warning), nothing done, the record stays Waiting', () => {
    const plan = planCluster(after({}));
    assert.equal(plan.action.kind, 'wait');
    assert.deepEqual(plan.status.forceNewCluster, waiting);
    assert.equal(progressing(plan)?.[0], 'RecoveryBlocked');
    assert.deepEqual(
      plan.events.map(e => e.reason),
      ['RecoveryBlocked'],
    );
    const again = planCluster({ ...after({}), cluster: { ...after({}).cluster, status: plan.status } });
    assert.deepEqual(again.events, [], 'said once');
  });
});

describe('ForceNewCluster: each recorded step resumes to its next step', () => {
  const fnc = (w: World) => planCluster(world({ policy: 'ForceNewCluster', ...w }));
  const rows: { name: string; w: World; action: unknown; step?: string; event?: string }[] = [
    {
      name: 'Forcing, flag not set: set it',
      w: { record: forcing },
      action: { kind: 'force-new-cluster', member: 'demo-0', on: true },
      step: 'Forcing',
    },
    {
      name: 'Forcing, flag set, survivor restarting: wait',
      w: {
        record: forcing,
        members: [ran(0, { force: true }), ran(1, { lost: true }), ran(2, { lost: true })],
      },
      action: { kind: 'wait' },
      step: 'Forcing',
    },
    {
      name: 'Forcing, etcd lists the survivor alone: forced; step Removing recorded first (the flag is unset next)',
      w: {
        record: forcing,
        members: [ran(0, { force: true }), ran(1, { lost: true }), ran(2, { lost: true })],
        ready: [0],
        etcd: alone,
        flaggedPod: true,
      },
      action: { kind: 'none' },
      step: 'Removing',
      event: 'NewClusterForced',
    },
    {
      name: 'Forcing, etcd lists the survivor alone, flag already off: Removing, never a second forced start',
      w: { record: forcing, ready: [0], etcd: alone },
      action: { kind: 'none' },
      step: 'Removing',
      event: 'NewClusterForced',
    },
    {
      name: 'Forcing, quorum back before the forced start with the flag set: undo the flag',
      w: {
        record: forcing,
        members: [ran(0, { force: true }), ran(1), ran(2)],
        ready: [0, 1, 2],
        etcd: etcdOf([membership(0), membership(1), membership(2)]),
      },
      action: { kind: 'force-new-cluster', member: 'demo-0', on: false },
      step: 'Forcing',
    },
    {
      name: 'Forcing, quorum back, flag not set: cancelled',
      w: {
        record: forcing,
        members: [ran(0), ran(1), ran(2)],
        ready: [0, 1, 2],
        etcd: etcdOf([membership(0), membership(1), membership(2)]),
      },
      action: { kind: 'none' },
      event: 'RecoveryCancelled',
    },
    {
      name: 'Forcing, the survivor is gone: blocked, nothing more',
      w: { record: forcing, members: [ran(1, { lost: true }), ran(2, { lost: true })] },
      action: { kind: 'wait' },
      step: 'Forcing',
    },
    {
      name: 'Removing, flag still set (crash before unsetting): unset it',
      w: {
        record: removing,
        members: [ran(0, { force: true }), ran(1, { lost: true }), ran(2, { lost: true })],
        ready: [0],
        etcd: alone,
        flaggedPod: true,
      },
      action: { kind: 'force-new-cluster', member: 'demo-0', on: false },
      step: 'Removing',
    },
    {
      name: 'Removing, the Pod still has the flag: wait for its replacement',
      w: { record: removing, ready: [0], etcd: alone, flaggedPod: true },
      action: { kind: 'wait' },
      step: 'Removing',
    },
    {
      name: 'Removing, survivor runs unflagged: delete the lost members',
      w: { record: removing, ready: [0], etcd: alone },
      action: { kind: 'delete-members', members: ['demo-1', 'demo-2'] },
      step: 'Removing',
    },
    {
      name: 'Removing, one deleted (crash in between): delete the other',
      w: {
        record: removing,
        ready: [0],
        etcd: alone,
        members: [
          ran(0),
          { ...ran(1, { lost: true }), metadata: { ...ran(1).metadata, deletionTimestamp: NOW } },
          ran(2, { lost: true }),
        ],
      },
      action: { kind: 'delete-members', members: ['demo-2'] },
      step: 'Removing',
    },
    {
      name: 'Removing, both being deleted: wait',
      w: {
        record: removing,
        ready: [0],
        etcd: alone,
        members: [
          ran(0),
          ...[1, 2].map(n => ({
            ...ran(n, { lost: true }),
            metadata: { ...ran(n).metadata, deletionTimestamp: NOW },
          })),
        ],
      },
      action: { kind: 'wait' },
      step: 'Removing',
    },
    {
      name: 'Removing, both gone: step Rejoining',
      w: { record: removing, ready: [0], etcd: alone, members: [ran(0)] },
      action: { kind: 'none' },
      step: 'Rejoining',
      event: 'LostMembersRemoved',
    },
    {
      name: 'Rejoining, 1 of 3: the ordinary scale-up claims a new member',
      w: { record: rejoining, ready: [0], etcd: alone, members: [ran(0)] },
      action: { kind: 'claim' },
      step: 'Rejoining',
    },
    {
      name: 'Rejoining, a learner: the ordinary path promotes it',
      w: {
        record: rejoining,
        ready: [0, 3],
        etcd: etcdOf([membership(0), membership(3, { learner: true })]),
        members: [ran(0), member(3, { voter: false })],
      },
      action: { kind: 'promote', member: 'demo-3', id: idOf(3) },
      step: 'Rejoining',
    },
    {
      name: 'Rejoining, 3 of 3 voters ready: Done',
      w: {
        record: rejoining,
        ready: [0, 3, 4],
        etcd: etcdOf([membership(0), membership(3), membership(4)]),
        members: [ran(0), member(3), member(4)],
      },
      action: { kind: 'none' },
      step: 'Done',
      event: 'Recovered',
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const plan = fnc(row.w);
      for (const [k, v] of Object.entries(row.action as object))
        assert.deepEqual((plan.action as unknown as Record<string, unknown>)[k], v, k);
      assert.equal(plan.status.forceNewCluster?.step, row.step);
      assert.deepEqual(
        plan.events.map(e => e.reason),
        row.event ? [row.event] : [],
      );
      if (row.step && row.step !== 'Done') assert.equal(recovery(plan)?.status, 'True');
      // Re-running the same step on the same world decides the same: a crash before its effects is safe.
      const again = fnc(row.w);
      assert.deepEqual(again.action, plan.action);
    });
  }

  it('the forced start records the cluster ID etcd answers with (kept, or a new one)', () => {
    const members = [ran(0, { force: true }), ran(1, { lost: true }), ran(2, { lost: true })];
    const kept = fnc({ record: forcing, members, ready: [0], etcd: alone });
    assert.equal(kept.status.forceNewCluster?.clusterID, CLUSTER_ID);
    assert.match(kept.events[0].message, /cluster ID c0ffee0000000001, kept/);
    const changed = fnc({
      record: forcing,
      members,
      ready: [0],
      etcd: { ...alone, clusterId: 'abc' } as EtcdView,
    });
    assert.equal(changed.status.clusterID, 'abc', 'status follows etcd');
    assert.equal(changed.status.forceNewCluster?.previousClusterID, CLUSTER_ID);
  });

  it('after the forced start the cluster is Available (etcd answers) though 1 of 3 is ready', () => {
    const plan = fnc({ record: removing, ready: [0], etcd: alone });
    assert.equal(findCondition(plan.status.conditions, 'Available')?.status, 'True');
    assert.equal(recovery(plan)?.reason, 'Removing');
  });

  it('Done: the condition keeps the survivor, its ID and the cluster ID; no further recovery step', () => {
    const row = rows.at(-1)!;
    const plan = fnc(row.w);
    assert.deepEqual([recovery(plan)?.status, recovery(plan)?.reason], ['False', 'Recovered']);
    assert.match(
      recovery(plan)?.message ?? '',
      /from member demo-0 \(ID 0000000000001000\), which kept its data and ID; demo-1, demo-2 were replaced by new members; etcd cluster ID c0ffee0000000001 \(kept\)/,
    );
    const after = planCluster({
      ...world({ policy: 'ForceNewCluster', ...row.w }),
      cluster: { ...world({ policy: 'ForceNewCluster', ...row.w }).cluster, status: plan.status },
    });
    assert.equal(after.status.forceNewCluster?.step, 'Done');
    assert.notEqual(after.action.kind, 'force-new-cluster');
  });
});
