// A member whose data is gone: reconcile-member records the evidence and never restarts it under its
// old member ID on an empty volume; reconcile-cluster replaces it (delete, then a new member with a
// new ID) only while the voters that stay are healthy and keep quorum, one at a time, with a
// MemberReplacement condition naming the member and its old and new IDs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster, EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember, EtcdMemberStatus } from '../../shared/api/etcd-member.ts';
import { controllerRef } from '../../shared/builders/owner.ts';
import { findCondition } from '../../shared/conditions.ts';
import type { EtcdMember as Membership } from '../../shared/etcd/members.ts';
import { planCluster } from '../../shared/plan/cluster/plan.ts';
import type { ClusterState, EtcdView } from '../../shared/plan/cluster/types.ts';
import { planMember, type MemberState } from '../../shared/plan/member/plan.ts';
import { state as clusterState, locked, membership } from '../support/cluster-world.ts';
import { etcdCluster, etcdMember } from '../support/etcd-objects.ts';

const NOW = new Date('2026-11-22T10:00:00Z');
const ID = 'c0ffee0000000001';
const idOf = (ordinal: number) => (0x1000 + ordinal).toString(16).padStart(16, '0');

/** demo locked at `replicas` and formed as ID (generation 1, no resourceVersion). */
function formedCluster(replicas: number, extra: EtcdClusterStatus = {}): EtcdCluster {
  return etcdCluster({
    metadata: { generation: 1 },
    spec: { replicas, storage: { size: '1Gi', medium: '' }, progressDeadlineSeconds: 600 },
    status: locked(replicas, { clusterID: ID, ...extra }),
  });
}

function member(ordinal: number, status: EtcdMemberStatus = {}, deleting = false): EtcdMember {
  const name = `demo-${ordinal}`;
  return etcdMember(name, {
    metadata: {
      uid: `${name}-uid`,
      labels: { 'etcdfn.io/cluster': 'demo' },
      finalizers: ['etcdfn.io/member-cleanup'],
      deletionTimestamp: deleting ? NOW : undefined,
    },
    spec: { storage: { size: '1Gi', medium: '' }, bootstrap: ordinal === 0 },
    status: { isVoter: true, memberID: idOf(ordinal), ...status },
  });
}

const lost = (reason = 'PVCMissing') => ({
  dataLoss: {
    reason,
    message: 'PVC data-demo-x, which held its data, is gone',
    detectedAt: '2026-11-22T09:59:00Z',
  },
});

/** The same member on the Memory medium (its data lives and dies with its Pod). */
const inMemory = (m: EtcdMember): EtcdMember => ({
  ...m,
  spec: { ...m.spec, storage: { size: '256Mi', medium: 'Memory' } },
});
const memoryLost = {
  dataLoss: {
    reason: 'MemoryLost',
    message: 'demo-1 kept its data in memory and its Pod is gone',
    detectedAt: '2026-11-22T09:59:00Z',
  },
};

const etcdOf = (members: Membership[]): EtcdView => ({
  reachable: true,
  members,
  clusterId: ID,
  leaderId: members[0]?.id,
});

/** planCluster's world with exactly `ready` of the members' Pods ready. */
const world = (c: EtcdCluster, members: EtcdMember[], ready: number[], etcd?: EtcdView): ClusterState =>
  clusterState(c, members, { ready, etcd });

const condition = (plan: ReturnType<typeof planCluster>) =>
  findCondition(plan.status.conditions, 'MemberReplacement');

describe('reconcile-cluster replaces a member whose data is lost, under a quorum guard', () => {
  const rows: {
    name: string;
    members: EtcdMember[];
    ready: number[];
    etcd?: EtcdView;
    kind: string;
    why?: RegExp;
  }[] = [
    {
      name: '3 members, one lost, the other two healthy: recorded first, then the lost one is deleted',
      members: [member(0), member(1, lost()), member(2)],
      ready: [0, 2],
      etcd: etcdOf([membership(0), membership(1), membership(2)]),
      kind: 'none',
    },
    {
      name: '3 members, two lost: nothing is done (quorum)',
      members: [member(0), member(1, lost()), member(2, lost())],
      ready: [0],
      etcd: etcdOf([membership(0), membership(1), membership(2)]),
      kind: 'wait',
      why: /cannot replace member demo-1 yet .*demo-2 is not healthy/,
    },
    {
      name: 'another member is down for another reason: waits',
      members: [member(0), member(1, lost()), member(2)],
      ready: [0],
      etcd: etcdOf([membership(0), membership(1), membership(2)]),
      kind: 'wait',
      why: /demo-2 is not healthy/,
    },
    {
      name: 'etcd does not answer: waits',
      members: [member(0), member(1, lost()), member(2)],
      ready: [0, 2],
      etcd: { reachable: false, error: 'context deadline exceeded' },
      kind: 'wait',
      why: /etcd does not answer/,
    },
    {
      name: 'Memory medium, a member whose Pod (and data) is gone: the same claim, then deletion',
      members: [member(0), member(1, memoryLost), member(2)].map(inMemory),
      ready: [0, 2],
      etcd: etcdOf([membership(0), membership(1), membership(2)]),
      kind: 'none',
    },
    {
      name: 'Memory medium, another member down: waits (never deleted without the guard)',
      members: [member(0), member(1, memoryLost), member(2)].map(inMemory),
      ready: [0],
      etcd: etcdOf([membership(0), membership(1), membership(2)]),
      kind: 'wait',
      why: /cannot replace member demo-1 yet \(demo-1 kept its data in memory and its Pod is gone\): member demo-2 is not healthy/,
    },
    {
      name: 'a member whose node is gone (NodeLost), the other two healthy: the same claim, then deletion',
      members: [member(0), member(1, lost('NodeLost')), member(2)],
      ready: [0, 2],
      etcd: etcdOf([membership(0), membership(1), membership(2)]),
      kind: 'none',
    },
    {
      name: 'two of three nodes gone: etcd has no quorum, nothing is replaced',
      members: [member(0), member(1, lost('NodeLost')), member(2, lost('NodeLost'))],
      ready: [0],
      etcd: { reachable: false, error: 'context deadline exceeded' },
      kind: 'wait',
      why: /cannot replace member demo-1 yet .*etcd does not answer/,
    },
    {
      name: '2 members (a 2-voter cluster needs both): waits',
      members: [member(0), member(1, lost())],
      ready: [0],
      etcd: etcdOf([membership(0), membership(1)]),
      kind: 'wait',
      why: /only 1 of 2 voters would stay healthy, fewer than the 2 a quorum needs/,
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const c = formedCluster(row.members.length);
      const plan = planCluster(world(c, row.members, row.ready, row.etcd));
      assert.equal(plan.action.kind, row.kind, JSON.stringify(plan.action));
      if (row.kind === 'none') {
        // Claim before acting: the replacement is recorded; the next invocation deletes the member.
        assert.equal(plan.status.replacement?.member, 'demo-1');
        const recorded = formedCluster(row.members.length, plan.status);
        const next = planCluster(world(recorded, row.members, row.ready, row.etcd));
        assert.equal(next.action.kind, 'delete-member', JSON.stringify(next.action));
        assert.equal((next.action as { member: string }).member, 'demo-1');
        assert.deepEqual(next.status.replacement, plan.status.replacement, 'the record is kept as it was');
        assert.deepEqual(next.events, [], 'the Warning Event was emitted once, with the record');
        assert.equal(plan.status.replacement?.oldID, idOf(1));
        assert.equal(condition(plan)?.status, 'True');
        assert.match(
          condition(plan)?.message ?? '',
          new RegExp(`replacing member demo-1 \\(ID ${idOf(1)}\\)`),
        );
        assert.equal(plan.events[0]?.reason, 'ReplacingMember');
      } else {
        assert.equal(plan.status.replacement, undefined, 'nothing recorded');
        assert.match((plan.action as { reason: string }).reason, row.why!);
      }
    });
  }

  it('one at a time: a second lost member waits for the first replacement', () => {
    const c = formedCluster(3, {
      replacement: {
        member: 'demo-1',
        oldID: idOf(1),
        reason: 'gone',
        newMember: 'demo-3',
        startedAt: '2026-11-22T09:59:00Z',
      },
      nextMemberOrdinal: 4,
    });
    const members = [member(0), member(2, lost()), member(3, { isVoter: false })];
    const plan = planCluster(
      world(c, members, [0, 2, 3], etcdOf([membership(0), membership(2), membership(3, { learner: true })])),
    );
    assert.notEqual(plan.action.kind, 'delete-member');
  });

  it('a NodeLost replacement is recorded with cause NodeLost and says the node is gone', () => {
    const members = [member(0), member(1, lost('NodeLost')), member(2)];
    const etcd = etcdOf([membership(0), membership(1), membership(2)]);
    const plan = planCluster(world(formedCluster(3), members, [0, 2], etcd));
    assert.equal(plan.status.replacement?.cause, 'NodeLost');
    assert.match(
      condition(plan)?.message ?? '',
      /^replacing member demo-1 \(ID [0-9a-f]+\), whose node is gone \(/,
    );
    const other = planCluster(
      world(formedCluster(3), [member(0), member(1, lost()), member(2)], [0, 2], etcd),
    );
    assert.equal(other.status.replacement?.cause, undefined, 'DataLost stays the default');
  });

  it('the new member is recorded at its claim, and the replacement completes with old and new IDs', () => {
    const started = formedCluster(3, {
      replacement: { member: 'demo-1', oldID: idOf(1), reason: 'gone', startedAt: '2026-11-22T09:59:00Z' },
    });
    const two = [member(0), member(2)];
    const claim = planCluster(world(started, two, [0, 2], etcdOf([membership(0), membership(2)])));
    assert.equal(claim.action.kind, 'claim');
    assert.equal(claim.status.replacement?.newMember, 'demo-3');
    assert.match(condition(claim)?.message ?? '', /new member demo-3 joining as a learner/);

    const joined = formedCluster(3, { ...claim.status, operation: undefined });
    delete joined.status!.operation;
    const three = [member(0), member(2), member(3)];
    const done = planCluster(
      world(joined, three, [0, 2, 3], etcdOf([membership(0), membership(2), membership(3)])),
    );
    assert.equal(done.status.replacement, undefined, 'cleared once done');
    assert.equal(condition(done)?.status, 'False');
    assert.equal(condition(done)?.reason, 'Replaced');
    assert.equal(
      condition(done)?.message,
      `replaced member demo-1 (ID ${idOf(1)}), whose data was lost (gone), with new member demo-3 (ID ${idOf(3)})`,
    );
  });
});

describe('reconcile-member never restarts a member on an empty volume under its old ID', () => {
  const c = formedCluster(3);
  const pvc = (m: EtcdMember, uid: string, deleting = false): V1PersistentVolumeClaim => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: 'data-demo-1',
      namespace: 'prod',
      uid,
      ownerReferences: [controllerRef(m)],
      labels: { 'etcdfn.io/cluster': 'demo' },
      ...(deleting && { deletionTimestamp: NOW }),
    },
  });
  const pod = (m: EtcdMember): V1Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'demo-1',
      namespace: 'prod',
      uid: 'pod-uid',
      ownerReferences: [controllerRef(m)],
      labels: { 'etcdfn.io/cluster': 'demo' },
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] },
  });
  const state = (m: EtcdMember, o: Partial<MemberState> = {}): MemberState => ({
    now: NOW,
    member: m,
    cluster: c,
    ...o,
  });
  const seen = { pvcUID: 'pvc-uid-1', podUID: 'pod-uid', podName: 'demo-1' };

  const rows: {
    name: string;
    build: (m: EtcdMember) => Partial<MemberState>;
    reason?: string;
    action: string;
  }[] = [
    {
      name: 'PVC gone with its Pod: no PVC is created, evidence recorded',
      build: () => ({}),
      reason: 'PVCMissing',
      action: 'wait',
    },
    {
      name: 'PVC gone, Pod still running: the Pod is stopped',
      build: m => ({ pod: pod(m) }),
      reason: 'PVCMissing',
      action: 'delete-pod',
    },
    {
      name: 'PVC replaced (another UID): the Pod is stopped',
      build: m => ({ pod: pod(m), pvc: pvc(m, 'pvc-uid-2') }),
      reason: 'PVCReplaced',
      action: 'delete-pod',
    },
    {
      name: 'PVC being deleted while the Pod runs',
      build: m => ({ pod: pod(m), pvc: pvc(m, 'pvc-uid-1', true) }),
      reason: 'PVCDeleted',
      action: 'delete-pod',
    },
    {
      // The Pod is only relabelled with its role: the usual path, nothing about data.
      name: 'same PVC: nothing lost',
      build: m => ({ pod: pod(m), pvc: pvc(m, 'pvc-uid-1') }),
      action: 'patch-pod-metadata',
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const m = member(1, seen);
      const plan = planMember(state(m, row.build(m)));
      assert.equal(plan.action.kind, row.action, JSON.stringify(plan.action));
      assert.notEqual(plan.action.kind, 'create-pvc');
      assert.notEqual(plan.action.kind, 'create-pod');
      if (row.reason) {
        assert.equal(plan.status.dataLoss?.reason, row.reason);
        assert.equal(plan.status.dataLoss?.detectedAt, '2026-11-22T10:00:00Z');
        assert.equal(findCondition(plan.status.conditions, 'Ready')?.reason, 'DataLost');
        assert.match(
          findCondition(plan.status.conditions, 'Ready')?.message ?? '',
          new RegExp(`not restarted under its member ID ${idOf(1)}`),
        );
        assert.equal(plan.events[0]?.reason, 'MemberDataLost');
        assert.equal(plan.statusChanged, true);
      } else {
        assert.equal(plan.status.dataLoss, undefined);
      }
    });
  }

  it('the evidence is sticky: a PVC recreated later does not bring the member back, no second Event', () => {
    const m = member(1, { ...seen, ...lost() });
    const plan = planMember(state(m, { pvc: pvc(m, 'pvc-uid-3') }));
    assert.equal(plan.action.kind, 'wait');
    assert.equal(plan.status.dataLoss?.detectedAt, '2026-11-22T09:59:00Z');
    assert.equal(plan.events.length, 0);
  });

  it('a new member records its PVC UID the first time it sees it; without one recorded, a missing PVC is created', () => {
    const m = member(1, { podUID: 'pod-uid' });
    delete m.status!.pvcUID;
    const withPvc = planMember(state(m, { pvc: pvc(m, 'pvc-uid-1') }));
    assert.equal(withPvc.status.pvcUID, 'pvc-uid-1');
    const fresh = member(1, {});
    assert.equal(planMember(state(fresh)).action.kind, 'create-pvc');
  });
});

describe('a crash-looping member with start settings the cluster no longer asks for is replaced', () => {
  const looping = (ordinal: number, options?: Record<string, unknown>): EtcdMember => {
    const m = member(ordinal, {
      isVoter: false,
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'CrashLooping',
          message: 'etcd keeps exiting',
          lastTransitionTime: '2026-11-22T09:59:00Z',
        },
      ],
    });
    if (options) m.spec.options = options;
    return m;
  };
  const bad = { autoCompactionRetention: '3000000h' };
  const state = (c: EtcdCluster, m: EtcdMember) =>
    world(
      c,
      [member(0), member(1), member(2), m],
      [0, 1, 2],
      etcdOf([membership(0), membership(1), membership(2), membership(3, { learner: true, started: false })]),
    );

  it('its option taken out of the spec: recorded as a CrashLoop replacement, naming the field', () => {
    const plan = planCluster(state(formedCluster(4), looping(3, bad)));
    assert.equal(
      plan.status.replacement?.member,
      'demo-3',
      JSON.stringify([plan.action, plan.status.conditions]),
    );
    assert.equal(plan.status.replacement?.cause, 'CrashLoop');
    assert.match(
      plan.status.replacement?.reason ?? '',
      /^it crash-loops with spec\.options the cluster no longer asks for/,
    );
    assert.match(
      condition(plan)?.message ?? '',
      /^replacing member demo-3 \(ID [0-9a-f]+\), which crash-looped \(it crash-loops/,
    );
  });
  it('every start setting the spec no longer has is named, comma-separated', () => {
    const m = looping(3, bad);
    m.spec.resources = { limits: { memory: '64Mi' } };
    const plan = planCluster(state(formedCluster(4), m));
    assert.match(
      plan.status.replacement?.reason ?? '',
      /^it crash-loops with spec\.options, spec\.resources the cluster no longer asks for, /,
    );
  });
  it('its Ready condition is found among its others (a VolumeExpanded one listed first)', () => {
    const m = looping(3, bad);
    m.status!.conditions = [
      {
        type: 'VolumeExpanded',
        status: 'True',
        reason: 'Expanded',
        message: 'the volume of demo-3 was expanded',
        lastTransitionTime: '2026-11-22T09:58:00Z',
      },
      ...(m.status!.conditions ?? []),
    ];
    const plan = planCluster(state(formedCluster(4), m));
    assert.equal(plan.status.replacement?.member, 'demo-3');
    assert.equal(plan.status.replacement?.cause, 'CrashLoop');
  });
  it('the spec still has that option: not replaced (a new member would fail the same way)', () => {
    const c = formedCluster(4);
    c.spec.options = bad;
    c.status!.observed!.options = bad;
    const plan = planCluster(state(c, looping(3, bad)));
    assert.equal(plan.status.replacement, undefined);
  });
  it('not crash-looping, though its options differ: left alone', () => {
    const m = looping(3, bad);
    m.status!.conditions = [];
    assert.equal(planCluster(state(formedCluster(4), m)).status.replacement, undefined);
  });
  it('a member that lost its data comes first (here held: the crash-looping learner is not healthy)', () => {
    const plan = planCluster(
      world(
        formedCluster(4),
        [member(0), member(1, lost()), member(2), looping(3, bad)],
        [0, 2],
        etcdOf([
          membership(0),
          membership(1),
          membership(2),
          membership(3, { learner: true, started: false }),
        ]),
      ),
    );
    assert.equal(plan.status.replacement, undefined);
    assert.equal(plan.action.kind, 'wait');
    assert.match(
      plan.action.kind === 'wait' ? plan.action.reason : '',
      /^cannot replace member demo-1 yet .*demo-3 is not healthy/,
    );
  });
});
