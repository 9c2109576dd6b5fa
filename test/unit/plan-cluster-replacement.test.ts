// Replacing a member whose data is lost, as a person follows it: the exact step, the Progressing
// words, the Warning, the replacement recorded in status and the MemberReplacement condition at each
// stage; one at a time; never while the voters that stay could lose quorum (a paused member's vote
// does not count). Written against the mutants StrykerJS left alive in shared/plan/membership/replacement.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus, MemberReplacementStatus } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { findCondition } from '../../shared/conditions.ts';
import { planCluster, type ClusterPlan } from '../../shared/plan/cluster/plan.ts';
import type { EtcdView } from '../../shared/plan/cluster/types.ts';
import { cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';

const CLUSTER_ID = 'c0ffee0000000001';
const LOSS = "PVC data-demo-1, which held demo-1's data, is gone";
const idOf = (ordinal: number) => membership(ordinal).id;
const formed = (replicas: number, extra: EtcdClusterStatus = {}) =>
  cluster({ replicas }, locked(replicas, { clusterID: CLUSTER_ID, ...extra }));
/** demo-N whose data is lost, with its member ID recorded (or not). */
const lostMember = (ordinal: number, recordedID: string | undefined = idOf(ordinal)): EtcdMember => {
  const m = member(ordinal);
  m.status = {
    ...m.status,
    ...(recordedID && { memberID: recordedID }),
    dataLoss: { reason: 'PVCMissing', message: LOSS, detectedAt: '2026-11-22T09:59:00Z' },
  };
  return m;
};
const condition = (plan: ClusterPlan, type: string) => {
  const c = findCondition(plan.status.conditions, type);
  return c && [c.status, c.reason, c.message];
};
const three = (etcd: EtcdView = etcdOf([membership(0), membership(1), membership(2)])) =>
  state(formed(3), [member(0), lostMember(1), member(2)], { ready: [0, 2], etcd });

describe('the lost member is removed, with its ID and the evidence named', () => {
  const replacing = (id: string) =>
    `replacing member demo-1${id ? ` (ID ${id})` : ''}: ${LOSS}; removing it from etcd, then adding a new member`;

  it('the ID the member recorded', () => {
    const plan = planCluster(three());
    const why = replacing(idOf(1));
    // Claimed first: the replacement is recorded in status; the next invocation deletes the member.
    assert.deepEqual(plan.action, { kind: 'none' });
    assert.deepEqual(condition(plan, 'Progressing'), ['True', 'ReplacingMember', why]);
    assert.deepEqual(plan.events, [{ type: 'Warning', reason: 'ReplacingMember', message: why }]);
    assert.deepEqual(plan.status.replacement, {
      member: 'demo-1',
      oldID: idOf(1),
      reason: LOSS,
      startedAt: '2026-11-22T10:00:00Z',
    });
    assert.equal(plan.status.clusterID, CLUSTER_ID, 'the rest of status is kept');
    assert.equal(plan.status.observed?.replicas, 3);
    assert.deepEqual(condition(plan, 'MemberReplacement'), [
      'True',
      'Replacing',
      `replacing member demo-1 (ID ${idOf(1)}), whose data was lost (${LOSS}): removing it from etcd`,
    ]);
    const recorded = cluster({ replicas: 3 }, plan.status);
    const next = planCluster(
      state(recorded, [member(0), lostMember(1), member(2)], {
        ready: [0, 2],
        etcd: etcdOf([membership(0), membership(1), membership(2)]),
      }),
    );
    assert.deepEqual(next.action, { kind: 'delete-member', member: 'demo-1' });
    assert.deepEqual(condition(next, 'Progressing'), ['True', 'ReplacingMember', why]);
    assert.deepEqual(next.events, [], 'the Warning is said once, at the claim');
  });

  it('the recorded ID even when etcd no longer lists the member', () => {
    const plan = planCluster(three(etcdOf([membership(0), membership(2)])));
    assert.deepEqual(condition(plan, 'Progressing'), ['True', 'ReplacingMember', replacing(idOf(1))]);
  });

  it("etcd's ID when the member never recorded one; none when etcd does not list it either", () => {
    const unrecorded = (etcd: EtcdView) =>
      state(formed(3), [member(0), lostMember(1, ''), member(2)], { ready: [0, 2], etcd });
    const listed = planCluster(unrecorded(etcdOf([membership(0), membership(1), membership(2)])));
    assert.deepEqual(condition(listed, 'Progressing'), ['True', 'ReplacingMember', replacing(idOf(1))]);
    const unlisted = planCluster(unrecorded(etcdOf([membership(0), membership(2)])));
    assert.deepEqual(condition(unlisted, 'Progressing'), ['True', 'ReplacingMember', replacing('')]);
    assert.equal(unlisted.status.replacement?.oldID, undefined);
    assert.deepEqual(condition(unlisted, 'MemberReplacement'), [
      'True',
      'Replacing',
      `replacing member demo-1, whose data was lost (${LOSS}): removing it from etcd`,
    ]);
  });
});

describe('never while quorum could be lost', () => {
  const blocked = (why: string) => [
    'True',
    'ReplacementBlocked',
    `cannot replace member demo-1 yet (${LOSS}): ${why}`,
  ];

  it('etcd was not asked (no ready member)', () => {
    const plan = planCluster(state(formed(3), [member(0), lostMember(1), member(2)], { ready: [0, 2] }));
    assert.equal(plan.action.kind, 'wait');
    assert.deepEqual(
      condition(plan, 'Progressing'),
      blocked('etcd does not answer (no ready member to ask); quorum may be lost'),
    );
    assert.equal(plan.status.replacement, undefined);
  });

  it('one other member unhealthy, or two: named, in the singular or plural', () => {
    const one = planCluster(
      state(formed(3), [member(0), lostMember(1), member(2)], {
        ready: [0],
        etcd: etcdOf([membership(0), membership(1), membership(2)]),
      }),
    );
    assert.deepEqual(
      condition(one, 'Progressing'),
      blocked('member demo-2 is not healthy, so removing another could cost the cluster its quorum'),
    );
    const two = planCluster(
      state(formed(5), [member(0), lostMember(1), member(2), member(3), member(4)], {
        ready: [0, 4],
        etcd: etcdOf([0, 1, 2, 3, 4].map(i => membership(i))),
      }),
    );
    assert.deepEqual(
      condition(two, 'Progressing'),
      blocked(
        'members demo-2, demo-3 are not healthy, so removing another could cost the cluster its quorum',
      ),
    );
  });

  it('a member that stays but etcd does not list counts as unhealthy', () => {
    const plan = planCluster(three(etcdOf([membership(1), membership(2)])));
    assert.deepEqual(
      condition(plan, 'Progressing'),
      blocked('member demo-0 is not healthy, so removing another could cost the cluster its quorum'),
    );
  });

  it("a paused member's vote does not keep quorum", () => {
    // Three voters in etcd; demo-2 is dormant, so only demo-0 would stay healthy: 1 of 3.
    const plan = planCluster(
      state(formed(3, { nextMemberOrdinal: 3 }), [member(0), lostMember(1), member(2, { dormant: true })], {
        etcd: etcdOf([membership(0), membership(1), membership(2)]),
      }),
    );
    assert.equal(plan.action.kind, 'wait');
    assert.deepEqual(
      condition(plan, 'Progressing'),
      blocked('only 1 of 3 voters would stay healthy, fewer than the 2 a quorum needs'),
    );
  });
});

describe('one at a time', () => {
  it('a second lost member waits for the replacement under way (its new member not ready yet)', () => {
    const replacement: MemberReplacementStatus = {
      member: 'demo-1',
      oldID: idOf(1),
      reason: LOSS,
      newMember: 'demo-3',
      startedAt: '2026-11-22T09:59:00Z',
    };
    const plan = planCluster(
      state(formed(3, { nextMemberOrdinal: 4, replacement }), [member(0), lostMember(2), member(3)], {
        ready: [0],
        etcd: etcdOf([membership(0), membership(2), membership(3)]),
      }),
    );
    const why =
      'member demo-2 lost its data too; it is replaced once the replacement of demo-1 is done (one at a time)';
    assert.deepEqual(plan.action, { kind: 'wait', reason: why });
    assert.deepEqual(condition(plan, 'Progressing'), ['True', 'ReplacingMember', why]);
    assert.deepEqual(plan.status.replacement, replacement, 'the record of the first stays');
  });
  it('so does a member that crash-loops with a start setting the cluster no longer asks for', () => {
    const replacement: MemberReplacementStatus = {
      member: 'demo-1',
      oldID: idOf(1),
      reason: LOSS,
      newMember: 'demo-3',
      startedAt: '2026-11-22T09:59:00Z',
    };
    const looping = member(2);
    looping.spec.options = { autoCompactionRetention: '3000000h' };
    looping.status = {
      ...looping.status,
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'CrashLooping',
          message: 'etcd keeps exiting',
          lastTransitionTime: '2026-11-22T09:59:00Z',
        },
      ],
    };
    const plan = planCluster(
      state(formed(3, { nextMemberOrdinal: 4, replacement }), [member(0), looping, member(3)], {
        ready: [0],
        etcd: etcdOf([membership(0), membership(2), membership(3)]),
      }),
    );
    const why =
      'member demo-2 crash-loops too; it is replaced once the replacement of demo-1 is done (one at a time)';
    assert.deepEqual(plan.action, { kind: 'wait', reason: why });
    assert.deepEqual(condition(plan, 'Progressing'), ['True', 'ReplacingMember', why]);
    assert.deepEqual(plan.status.replacement, replacement, 'the record of the first stays');
  });
  it('the member whose replacement is recorded but not yet removed (a crash in between) is removed now', () => {
    const replacement: MemberReplacementStatus = {
      member: 'demo-1',
      oldID: idOf(1),
      reason: LOSS,
      startedAt: '2026-11-22T09:59:00Z',
    };
    const plan = planCluster(
      state(formed(3, { replacement }), [member(0), lostMember(1), member(2)], {
        ready: [0, 2],
        etcd: etcdOf([membership(0), membership(1), membership(2)]),
      }),
    );
    assert.deepEqual(plan.action, { kind: 'delete-member', member: 'demo-1' });
    assert.deepEqual(plan.status.replacement, replacement, 'the first record (and its start time) stays');
  });
});

describe('the MemberReplacement condition while the new member joins', () => {
  const record: MemberReplacementStatus = {
    member: 'demo-1',
    reason: LOSS,
    newMember: 'demo-3',
    startedAt: '2026-11-22T09:59:00Z',
  };
  const joining = (etcd: EtcdView | undefined, ready = [0, 2, 3]) =>
    planCluster(
      state(
        formed(3, { nextMemberOrdinal: 4, replacement: record }),
        [member(0), member(2), member(3, { voter: false })],
        {
          ready,
          ...(etcd && { etcd }),
        },
      ),
    );
  const replacing = (step: string) => [
    'True',
    'Replacing',
    `replacing member demo-1, whose data was lost (${LOSS}): ${step}`,
  ];

  it('not in etcd yet: joining as a learner, no ID to show', () => {
    const plan = joining(etcdOf([membership(0), membership(2)]));
    assert.deepEqual(
      condition(plan, 'MemberReplacement'),
      replacing('new member demo-3 joining as a learner'),
    );
  });
  it('etcd not asked: the condition still says where it stands', () => {
    const plan = joining(undefined);
    assert.deepEqual(
      condition(plan, 'MemberReplacement'),
      replacing('new member demo-3 joining as a learner'),
    );
  });
  it('promoted but its Pod not ready: waiting for it', () => {
    const plan = joining(etcdOf([membership(0), membership(2), membership(3)]), [0, 2]);
    assert.deepEqual(
      condition(plan, 'MemberReplacement'),
      replacing(`new member demo-3 (ID ${idOf(3)}) promoted, waiting for it to be ready`),
    );
    assert.deepEqual(plan.status.replacement, record, 'kept until the new member is ready');
  });
});
