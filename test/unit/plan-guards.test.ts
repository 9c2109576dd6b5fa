// The guards around data: each a table of worlds and the step each must (or must not) lead to.
//   version: a target is never adopted when a member would skip a minor release, deadline or not;
//   orphans: only removed when etcd answered as this cluster, and only this cluster's EtcdMembers count;
//   scale-down: only when every member that stays is ready and started in etcd;
//   deletion: the member that holds a formed cluster's only data keeps its finalizer (and PVC);
//   scale-up: never a new member with no running member to join through.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster, EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { findCondition } from '../../shared/conditions.ts';
import type { EtcdMember as Membership } from '../../shared/etcd/members.ts';
import { planCluster } from '../../shared/plan/cluster/plan.ts';
import type { ClusterState, EtcdView } from '../../shared/plan/cluster/types.ts';
import { planFinalize, type FinalizeState } from '../../shared/plan/member/finalize.ts';
import { ownMembers, podsOfMembers } from '../../shared/plan/cluster/members.ts';
import { cluster, state as clusterState, membership } from '../support/cluster-world.ts';
import { etcdMember } from '../support/etcd-objects.ts';

const NOW = new Date('2026-11-22T10:00:00Z');
const LATER = new Date('2026-11-22T10:30:00Z');
const ID = 'c0ffee0000000001';

const locked = (replicas: number, version = '3.5.16', extra: EtcdClusterStatus = {}): EtcdClusterStatus => ({
  clusterToken: 'prod-demo-uid-1',
  observed: { replicas, version, storage: { size: '1Gi', medium: '' } },
  progressDeadline: '2026-11-22T10:10:00Z',
  nextMemberOrdinal: replicas,
  clusterID: ID,
  ...extra,
});

function member(
  ordinal: number,
  o: { version?: string; running?: string; dormant?: boolean; deleting?: boolean; owner?: string } = {},
): EtcdMember {
  return etcdMember(`demo-${ordinal}`, {
    metadata: {
      deletionTimestamp: o.deleting ? NOW : undefined,
      ownerReferences: o.owner
        ? [{ apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdCluster', name: 'demo', uid: o.owner }]
        : undefined,
      finalizers: ['etcdfn.io/member-cleanup'],
    },
    spec: { version: o.version ?? '3.5.16', bootstrap: ordinal === 0, dormant: o.dormant ? true : undefined },
    status: { isVoter: true, ...(o.running && { version: o.running }) },
  });
}

const etcdOf = (members: Membership[], clusterId = ID): EtcdView => ({
  reachable: true,
  members,
  clusterId,
  leaderId: members[0]?.id,
});

/** planCluster's world; every member's Pod ready unless `ready` says otherwise. */
const state = (
  c: EtcdCluster,
  members: EtcdMember[],
  o: { ready?: number[]; etcd?: EtcdView; now?: Date } = {},
): ClusterState =>
  clusterState(c, members, {
    ...o,
    ready: o.ready ?? members.map(m => Number(m.metadata.name?.split('-')[1])),
  });

const progressing = (plan: ReturnType<typeof planCluster>) =>
  findCondition(plan.status.conditions, 'Progressing');
const three = () => [member(0), member(1), member(2)];
const etcd3 = () => etcdOf([membership(0), membership(1), membership(2)]);

describe('guard: a version change never skips a minor release', () => {
  const rows: {
    name: string;
    members: EtcdMember[];
    observed: string;
    spec: string;
    now: Date;
    adopts: boolean;
  }[] = [
    {
      name: 'deadline passed mid 3.4 → 3.5, spec now 3.6: refused',
      members: [
        member(0, { version: '3.5.16', running: '3.4.23' }),
        member(1, { version: '3.4.23', running: '3.4.23' }),
        member(2, { version: '3.4.23', running: '3.4.23' }),
      ],
      observed: '3.5.16',
      spec: '3.6.0',
      now: LATER,
      adopts: false,
    },
    {
      name: 'reached 3.4, spec edited twice to 3.6 before adoption: refused',
      members: [0, 1, 2].map(i => member(i, { version: '3.4.23', running: '3.4.23' })),
      observed: '3.4.23',
      spec: '3.6.0',
      now: NOW,
      adopts: false,
    },
    {
      name: 'a paused (dormant) member on 3.4 counts too',
      members: [member(0, { version: '3.4.23', running: '3.4.23', dormant: true })],
      observed: '3.4.23',
      spec: '3.6.0',
      now: LATER,
      adopts: false,
    },
    {
      name: 'deadline passed mid 3.4 → 3.5, spec stays one minor ahead (3.5.17): adopted',
      members: [
        member(0, { version: '3.5.16', running: '3.4.23' }),
        member(1, { version: '3.4.23', running: '3.4.23' }),
        member(2, { version: '3.4.23', running: '3.4.23' }),
      ],
      observed: '3.5.16',
      spec: '3.5.17',
      now: LATER,
      adopts: true,
    },
    {
      name: 'reached 3.5, next minor 3.6: adopted',
      members: [0, 1, 2].map(i => member(i, { version: '3.5.35', running: '3.5.35' })),
      observed: '3.5.35',
      spec: '3.6.16',
      now: NOW,
      adopts: true,
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const replicas = row.members.some(m => m.spec.dormant) ? 0 : 3;
      const c = cluster({ version: row.spec, replicas }, locked(replicas, row.observed));
      const plan = planCluster(state(c, row.members, { etcd: replicas ? etcd3() : undefined, now: row.now }));
      if (row.adopts) {
        assert.equal(plan.status.observed?.version, row.spec);
      } else {
        assert.equal(plan.status.observed?.version, row.observed, 'the locked target stays');
        assert.equal(plan.action.kind, 'none');
        assert.equal(progressing(plan)?.reason, 'VersionSkipsMinor');
        assert.match(progressing(plan)?.message ?? '', /one minor release at a time/);
        assert.equal(plan.events[0]?.reason, 'VersionSkipsMinor');
        // Stable: planning again over the written status adds no second Event.
        const again = planCluster(
          state({ ...c, status: plan.status }, row.members, {
            etcd: replicas ? etcd3() : undefined,
            now: row.now,
          }),
        );
        assert.equal(again.events.length, 0);
        assert.equal(again.status.observed?.version, row.observed);
      }
    });
  }
});

describe('guard: orphan removal', () => {
  const orphanWorld = (clusterId: string) =>
    state(cluster({ replicas: 1 }, locked(1)), [member(0)], {
      etcd: etcdOf([membership(0), membership(9, { started: false })], clusterId),
    });
  it('removes an etcd member no EtcdMember stands for when etcd answers as this cluster', () => {
    assert.deepEqual(planCluster(orphanWorld(ID)).action, {
      kind: 'remove-orphan',
      id: membership(9).id,
      peerURL: 'http://demo-9.demo.prod.svc:2380',
    });
  });
  it('never removes anything when etcd answered with another cluster ID', () => {
    assert.notEqual(planCluster(orphanWorld('deadbeef00000002')).action.kind, 'remove-orphan');
  });
  it("only this cluster's EtcdMembers count (ownerReference UID), not a same-named cluster's leftovers", () => {
    const c = cluster({}, locked(3));
    const mine = member(0, { owner: 'uid-1' });
    const unowned = member(1);
    const leftover = member(2, { owner: 'uid-old' });
    assert.deepEqual(ownMembers(c, [mine, unowned, leftover]), [mine, unowned]);
  });
  const owned = (ordinal: number, owners: { kind: string; uid: string }[]): EtcdMember => {
    const m = member(ordinal);
    m.metadata.ownerReferences = owners.map(o => ({ apiVersion: 'etcdfn.io/v1alpha1', name: 'demo', ...o }));
    return m;
  };
  const ownerRows: {
    name: string;
    owners: { kind: string; uid: string }[];
    clusterUid?: string;
    mine: boolean;
  }[] = [
    { name: 'owned by this cluster', owners: [{ kind: 'EtcdCluster', uid: 'uid-1' }], mine: true },
    {
      name: "owned by the old cluster's UID",
      owners: [{ kind: 'EtcdCluster', uid: 'uid-old' }],
      mine: false,
    },
    { name: 'no ownerReferences at all', owners: [], mine: true },
    {
      name: 'owned only by an object of another kind (its UID is not a cluster UID)',
      owners: [{ kind: 'ConfigMap', uid: 'uid-old' }],
      mine: true,
    },
    {
      name: 'a second EtcdCluster owner besides this one',
      owners: [
        { kind: 'EtcdCluster', uid: 'uid-old' },
        { kind: 'EtcdCluster', uid: 'uid-1' },
      ],
      mine: true,
    },
    {
      name: 'a cluster with no UID yet cannot tell: every labelled member counts',
      owners: [{ kind: 'EtcdCluster', uid: 'uid-old' }],
      clusterUid: '',
      mine: true,
    },
  ];
  for (const row of ownerRows) {
    it(`ownerReference: ${row.name} → ${row.mine ? 'counts' : 'left out'}`, () => {
      const c = cluster({}, locked(3));
      if (row.clusterUid === '') delete c.metadata.uid;
      const m = owned(1, row.owners);
      assert.deepEqual(ownMembers(c, [m]), row.mine ? [m] : []);
    });
  }
});

describe('guard: a Pod left by an earlier member of the same name is not this member’s', () => {
  // The cluster deleted and made again under its name: the old Pods run the old cluster's etcd
  // until garbage collection removes them, and the new members' names reach them.
  const withUid = (ordinal: number, uid: string): EtcdMember => {
    const m = member(ordinal, { owner: 'uid-1' });
    m.metadata.uid = uid;
    return m;
  };
  const pod = (name: string, controller?: { kind: string; uid: string; controller?: boolean }) => ({
    metadata: {
      name,
      ...(controller && {
        ownerReferences: [{ apiVersion: 'v1', name, controller: true, ...controller }],
      }),
    },
  });
  const rows: { name: string; pod: ReturnType<typeof pod>; counts: boolean }[] = [
    {
      name: 'controlled by the member of its name',
      pod: pod('demo-0', { kind: 'EtcdMember', uid: 'm-0' }),
      counts: true,
    },
    {
      name: 'controlled by the member of its name, not the first member listed',
      pod: pod('demo-1', { kind: 'EtcdMember', uid: 'm-1' }),
      counts: true,
    },
    {
      name: 'controlled by something other than an EtcdMember',
      pod: pod('demo-0', { kind: 'ReplicaSet', uid: 'rs-1' }),
      counts: true,
    },
    {
      name: 'owned by an earlier EtcdMember, but not as its controller',
      pod: pod('demo-0', { kind: 'EtcdMember', uid: 'm-old', controller: false }),
      counts: true,
    },
    {
      name: 'controlled by an earlier EtcdMember of the same name',
      pod: pod('demo-0', { kind: 'EtcdMember', uid: 'm-old' }),
      counts: false,
    },
    {
      name: 'controlled by an EtcdMember whose name no member here has',
      pod: pod('demo-7', { kind: 'EtcdMember', uid: 'm-7' }),
      counts: false,
    },
    {
      name: 'controlled by no EtcdMember (as ownMembers keeps an unowned member)',
      pod: pod('demo-0'),
      counts: true,
    },
  ];
  for (const row of rows) {
    it(`${row.name} → ${row.counts ? 'counts' : 'left out'}`, () => {
      assert.deepEqual(
        podsOfMembers([withUid(0, 'm-0'), withUid(1, 'm-1')], [row.pod]),
        row.counts ? [row.pod] : [],
      );
    });
  }
  it('a member with no UID yet (a plain object) cannot tell, and keeps its Pod', () => {
    const p = pod('demo-0', { kind: 'EtcdMember', uid: 'm-old' });
    assert.deepEqual(podsOfMembers([member(0)], [p]), [p]);
  });
});

describe('guard: scale-down checks the members that stay', () => {
  const down = (o: { ready?: number[]; etcd?: EtcdView }) =>
    planCluster(state(cluster({ replicas: 2 }, locked(2)), three(), o));
  const rows: {
    name: string;
    ready?: number[];
    etcd?: EtcdView;
    kind: string;
    member?: string;
    why?: RegExp;
  }[] = [
    { name: 'all healthy: the newest goes', etcd: etcd3(), kind: 'delete-member', member: 'demo-2' },
    {
      name: 'an unready member goes first',
      ready: [0, 2],
      etcd: etcd3(),
      kind: 'delete-member',
      member: 'demo-1',
    },
    {
      name: 'two unready: waits (the other one stays and is down)',
      ready: [0],
      etcd: etcd3(),
      kind: 'wait',
      why: /member demo-1, which stays, is not ready/,
    },
    {
      name: 'etcd does not answer: waits',
      etcd: { reachable: false, error: 'connection refused' },
      kind: 'wait',
      why: /etcd does not answer \(connection refused\)/,
    },
    {
      name: 'a member that stays has not started in etcd: waits',
      etcd: etcdOf([membership(0), membership(1, { started: false }), membership(2)]),
      kind: 'wait',
      why: /demo-1, which stays, has not started in etcd/,
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const plan = down({ ...(row.ready && { ready: row.ready }), ...(row.etcd && { etcd: row.etcd }) });
      assert.equal(plan.action.kind, row.kind, JSON.stringify(plan.action));
      if (row.member) assert.equal((plan.action as { member: string }).member, row.member);
      if (row.why) assert.match((plan.action as { reason: string }).reason, row.why);
    });
  }
});

describe('guard: deleting the member that holds the only data', () => {
  const finalizeState = (o: Partial<FinalizeState>): FinalizeState => ({
    member: member(0, { deleting: true, dormant: true }),
    cluster: cluster({ replicas: 0 }, locked(0)),
    others: [],
    tried: [],
    ...o,
  });
  const rows: { name: string; state: FinalizeState; kind: string }[] = [
    { name: "a paused cluster's dormant member: held", state: finalizeState({}), kind: 'keep' },
    {
      name: "a 1-member cluster's running member: held",
      state: finalizeState({
        member: member(0, { deleting: true }),
        cluster: cluster({ replicas: 1 }, locked(1)),
      }),
      kind: 'keep',
    },
    {
      name: 'others all dormant or being deleted: held',
      state: finalizeState({ others: [member(1, { dormant: true }), member(2, { deleting: true })] }),
      kind: 'keep',
    },
    {
      name: 'the cluster is being deleted: goes',
      state: finalizeState({
        cluster: {
          ...cluster({ replicas: 0 }, locked(0)),
          metadata: { name: 'demo', namespace: 'prod', deletionTimestamp: NOW },
        },
      }),
      kind: 'remove-finalizer',
    },
    {
      name: 'the cluster never formed (no cluster ID): goes',
      state: finalizeState({ cluster: cluster({ replicas: 0 }, { ...locked(0), clusterID: '' }) }),
      kind: 'remove-finalizer',
    },
    {
      name: 'a Memory-medium member keeps nothing on disk: not held',
      state: finalizeState({
        member: {
          ...member(0, { deleting: true }),
          spec: { ...member(0).spec, storage: { size: '1Gi', medium: 'Memory' } },
        },
      }),
      kind: 'remove-finalizer',
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const action = planFinalize(row.state);
      assert.equal(action.kind, row.kind, JSON.stringify(action));
      if (action.kind === 'keep') {
        assert.match(action.reason, /holds the only copy of EtcdCluster demo's data \(on PVC data-demo-0\)/);
        assert.match(action.reason, /kubectl delete etcdcluster demo/);
        assert.equal(action.event.reason, 'DeletionHeld');
      }
    });
  }

  it('resuming from a held deletion adds no empty member: the held member itself runs again first', () => {
    const c = cluster({ replicas: 3 }, locked(3));
    const plan = planCluster(state(c, [member(0, { deleting: true, dormant: true })]));
    assert.deepEqual(plan.action, { kind: 'set-dormant', member: 'demo-0', dormant: false, seed: true });
  });

  it('paused, a member deleted while the others are dormant too: the cluster waits on the held deletion, saying why', () => {
    const c = cluster({ replicas: 0 }, locked(0));
    const members = [
      member(0, { dormant: true }),
      member(1, { dormant: true }),
      member(2, { deleting: true, dormant: true }),
    ];
    const plan = planCluster(state(c, members, { ready: [] }));
    assert.deepEqual(plan.action, {
      kind: 'wait',
      reason:
        "member demo-2 was deleted but holds the only copy of the cluster's data, so its deletion is held (its PVC is kept); delete the EtcdCluster to delete the data",
    });
  });

  it('with no member left at all, no member is added (it could only start an empty cluster)', () => {
    const c = cluster({ replicas: 3 }, locked(3));
    const plan = planCluster(state(c, []));
    assert.equal(plan.action.kind, 'wait');
    assert.equal(progressing(plan)?.reason, 'NoMemberLeft');
  });
});
