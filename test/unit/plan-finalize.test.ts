import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConditionStatus } from '../../shared/conditions.ts';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember, EtcdMemberSpec, EtcdMemberStatus } from '../../shared/api/etcd-member.ts';
import type { EtcdMember as EtcdMembership } from '../../shared/etcd/members.ts';
import {
  needsEtcd,
  peerEndpoints,
  planFinalize,
  type FinalizeState,
  type FinalizeView,
} from '../../shared/plan/member/finalize.ts';
import { etcdCluster, etcdMember } from '../support/etcd-objects.ts';

const NOW = new Date('2026-11-22T10:00:00Z');
const CLUSTER_ID = 'c0ffee0000000001';
const url = (name: string, port: number) => `http://${name}.demo.prod.svc:${port}`;
const ids: Record<string, string> = {
  'demo-0': '00000000000000a0',
  'demo-1': '00000000000000a1',
  'demo-2': '00000000000000a2',
};

/** Cluster demo (uid cluster-uid, no replicas) that formed as `clusterID`. */
function demoCluster(deleting = false, clusterID = CLUSTER_ID): EtcdCluster {
  return etcdCluster({
    metadata: { uid: 'cluster-uid', deletionTimestamp: deleting ? NOW : undefined },
    spec: { replicas: undefined },
    status: { clusterID },
  });
}

interface MemberOptions {
  deleting?: boolean;
  finalizer?: boolean;
  spec?: Partial<EtcdMemberSpec>;
  status?: EtcdMemberStatus;
}

function member(name: string, o: MemberOptions = {}): EtcdMember {
  return etcdMember(name, {
    metadata: {
      uid: `${name}-uid`,
      resourceVersion: '7',
      finalizers: o.finalizer === false ? [] : ['etcdfn.io/member-cleanup'],
      // demo-2 is the member being deleted unless a row says otherwise.
      deletionTimestamp: (o.deleting ?? name === 'demo-2') ? NOW : undefined,
    },
    spec: { initialCluster: 'demo-0=…', clusterToken: 't', ...o.spec },
    ...(o.status && { status: o.status }),
  });
}

function inEtcd(name: string, o: Partial<EtcdMembership> = {}): EtcdMembership {
  return {
    id: ids[name] ?? '00000000000000ff',
    name,
    peerURLs: [url(name, 2380)],
    clientURLs: [url(name, 2379)],
    isLearner: false,
    started: true,
    ...o,
  };
}

function view(members: EtcdMembership[], o: Partial<FinalizeView> = {}): FinalizeView {
  return { members, clusterId: CLUSTER_ID, endpoint: url('demo-0', 2379), ...o };
}

/** demo-2 being deleted from a 3-member cluster: the scale-down case. */
function scaleDown(o: Partial<FinalizeState> = {}): FinalizeState {
  return {
    member: member('demo-2'),
    cluster: demoCluster(),
    others: [member('demo-0'), member('demo-1')],
    tried: [url('demo-0', 2379), url('demo-1', 2379)],
    etcd: view([inEtcd('demo-0'), inEtcd('demo-1'), inEtcd('demo-2')], {
      leaderId: ids['demo-0'],
    }),
    ...o,
  };
}

describe('planFinalize: members that are not ours to finalize', () => {
  it('a member not being deleted → none', () => {
    const a = planFinalize(scaleDown({ member: member('demo-2', { deleting: false }) }));
    assert.deepEqual(a, { kind: 'none', reason: 'demo-2 is not being deleted' });
  });

  it('a member whose finalizer is gone → none', () => {
    const a = planFinalize(scaleDown({ member: member('demo-2', { finalizer: false }) }));
    assert.deepEqual(a, { kind: 'none', reason: 'demo-2 has no etcdfn.io/member-cleanup finalizer left' });
  });
});

describe('planFinalize: when etcd goes with the cluster', () => {
  it('cluster gone → remove the finalizer without touching etcd', () => {
    const a = planFinalize(scaleDown({ cluster: undefined, etcd: undefined }));
    assert.equal(a.kind, 'remove-finalizer');
    assert.match((a as { reason: string }).reason, /EtcdCluster demo is gone/);
  });

  it('a newer cluster of the same name (another UID than the member’s owner) → its own is gone: remove the finalizer, no etcd call', () => {
    const old = member('demo-2');
    old.metadata.ownerReferences = [
      {
        apiVersion: 'etcdfn.io/v1alpha1',
        kind: 'EtcdCluster',
        name: 'demo',
        uid: 'an-older-uid',
        controller: true,
      },
    ];
    const state = scaleDown({ member: old });
    assert.equal(needsEtcd(state), false);
    const a = planFinalize(state);
    assert.equal(a.kind, 'remove-finalizer');
    assert.match(
      (a as { reason: string }).reason,
      /demo-2 belonged to is gone \(the one of that name now is a newer cluster\)/,
    );
  });

  it('the member’s own cluster (same UID as its owner) is planned as before', () => {
    const own = member('demo-2');
    own.metadata.ownerReferences = [
      {
        apiVersion: 'etcdfn.io/v1alpha1',
        kind: 'EtcdCluster',
        name: 'demo',
        uid: 'cluster-uid',
        controller: true,
      },
    ];
    const state = scaleDown({ member: own });
    assert.equal(needsEtcd(state), true);
    assert.notEqual(planFinalize(state).kind, 'remove-finalizer');
  });

  it('cluster being deleted → remove the finalizer, even with etcd unreachable', () => {
    const a = planFinalize(
      scaleDown({ cluster: demoCluster(true), etcd: undefined, etcdError: 'connection refused' }),
    );
    assert.equal(a.kind, 'remove-finalizer');
    assert.match((a as { reason: string }).reason, /being deleted: etcd goes with it/);
  });

  it('the last member of a cluster that never formed → remove the finalizer: nobody to remove it from', () => {
    const a = planFinalize(
      scaleDown({ cluster: demoCluster(false, ''), others: [], tried: [], etcd: undefined }),
    );
    assert.deepEqual(a, {
      kind: 'remove-finalizer',
      reason: "demo-2 is the cluster's last member: nobody to remove it from",
    });
  });
});

describe('planFinalize: removing a member from etcd', () => {
  it('a member in etcd is removed, with a MemberRemoved Event', () => {
    const a = planFinalize(scaleDown());
    assert.deepEqual(a, {
      kind: 'remove-from-etcd',
      id: ids['demo-2'],
      reason: `removing demo-2 (${ids['demo-2']}) from etcd`,
      event: {
        type: 'Normal',
        reason: 'MemberRemoved',
        message: `member demo-2 (voter ${ids['demo-2']}) removed from etcd; 2 members left`,
      },
    });
  });

  it('found by its recorded ID even under another name', () => {
    const m = member('demo-2', { status: { memberID: '00000000000000b2' } });
    const etcd = view([inEtcd('demo-0'), inEtcd('renamed', { id: '00000000000000b2' })]);
    const a = planFinalize(scaleDown({ member: m, etcd }));
    assert.equal(a.kind, 'remove-from-etcd');
    assert.equal((a as { id: string }).id, '00000000000000b2');
  });

  it('found by peer URL when it never started (a learner whose Pod never came up)', () => {
    const etcd = view([
      inEtcd('demo-0'),
      inEtcd('demo-2', { name: '', started: false, isLearner: true, clientURLs: [] }),
    ]);
    const a = planFinalize(scaleDown({ etcd }));
    assert.equal(a.kind, 'remove-from-etcd');
    assert.match((a as { event: { message: string } }).event.message, /learner/);
  });

  it('not in etcd (already removed, or never added) → remove the finalizer', () => {
    const a = planFinalize(scaleDown({ etcd: view([inEtcd('demo-0'), inEtcd('demo-1')]) }));
    assert.deepEqual(a, {
      kind: 'remove-finalizer',
      reason: 'demo-2 is not (or no longer) a member of etcd',
    });
  });

  it('a view of another etcd cluster is not trusted → retry', () => {
    const a = planFinalize(scaleDown({ etcd: view([inEtcd('demo-2')], { clusterId: 'ffffffffffffffff' }) }));
    assert.equal(a.kind, 'retry');
    assert.match(
      (a as { reason: string }).reason,
      /answered for etcd cluster ffffffffffffffff, not c0ffee0000000001/,
    );
  });
});

describe('planFinalize: the leader', () => {
  const leading = (members: EtcdMembership[], endpoint = url('demo-0', 2379)) =>
    view(members, { leaderId: ids['demo-2'], endpoint });

  it('hands leadership to another started voter first', () => {
    const a = planFinalize(
      scaleDown({ etcd: leading([inEtcd('demo-0'), inEtcd('demo-1'), inEtcd('demo-2')]) }),
    );
    assert.deepEqual(a, {
      kind: 'move-leader',
      fromId: ids['demo-2'],
      toId: ids['demo-0'],
      toName: 'demo-0',
      reason: 'demo-2 leads etcd: moving leadership to demo-0 before removing it',
      event: {
        type: 'Normal',
        reason: 'LeaderMoved',
        message: 'leadership moved from demo-2 to demo-0 before removing demo-2',
      },
    });
  });

  it('prefers the voter that just answered', () => {
    const etcd = leading([inEtcd('demo-0'), inEtcd('demo-1'), inEtcd('demo-2')], url('demo-1', 2379));
    assert.equal((planFinalize(scaleDown({ etcd })) as { toId: string }).toId, ids['demo-1']);
  });

  it('never hands it to a learner or a member that has not started', () => {
    const etcd = leading([
      inEtcd('demo-0', { isLearner: true }),
      inEtcd('demo-1', { started: false, name: '' }),
      inEtcd('demo-2'),
    ]);
    const a = planFinalize(scaleDown({ etcd }));
    assert.equal(
      a.kind,
      'remove-from-etcd',
      'no successor: removal costs an election, but it is still right',
    );
  });

  it('a member that does not lead is removed directly', () => {
    assert.equal(planFinalize(scaleDown()).kind, 'remove-from-etcd');
  });
});

describe('planFinalize: etcd out of reach while the cluster lives', () => {
  it('keeps the finalizer and retries, naming the members it tried', () => {
    const a = planFinalize(scaleDown({ etcd: undefined, etcdError: 'connect ECONNREFUSED' }));
    assert.deepEqual(a, {
      kind: 'retry',
      reason:
        'cannot reach etcd through the other members (asked http://demo-0.demo.prod.svc:2379, ' +
        "http://demo-1.demo.prod.svc:2379: connect ECONNREFUSED); keeping demo-2's finalizer so no ghost member is left in etcd",
    });
  });

  it('with no error recorded, names the members it tried and nothing more', () => {
    const a = planFinalize(scaleDown({ etcd: undefined }));
    assert.deepEqual(a, {
      kind: 'retry',
      reason:
        'cannot reach etcd through the other members (asked http://demo-0.demo.prod.svc:2379, ' +
        "http://demo-1.demo.prod.svc:2379); keeping demo-2's finalizer so no ghost member is left in etcd",
    });
  });

  it('with no other member to ask (all dormant or unwired), still retries and says why', () => {
    const others = [
      member('demo-0', { spec: { initialCluster: '' } }),
      member('demo-1', { spec: { dormant: true } }),
    ];
    // Before the cluster formed nobody holds data yet: the usual answer, try again.
    const a = planFinalize(
      scaleDown({ cluster: demoCluster(false, ''), others, tried: [], etcd: undefined }),
    );
    assert.equal(a.kind, 'retry');
    assert.match((a as { reason: string }).reason, /none of demo-0, demo-1 has a Pod to ask/);
    // Once formed, the member being deleted is the only one running: it holds the data (see the
    // guard's own table in plan-guards.test.ts).
    assert.equal(planFinalize(scaleDown({ others, tried: [], etcd: undefined })).kind, 'keep');
  });
});

describe('peerEndpoints', () => {
  it('ready voters first, members being deleted last; dormant and unwired members are not asked', () => {
    const readyVoter = member('demo-3', {
      deleting: false,
      status: {
        isVoter: true,
        conditions: [
          { type: 'Ready', status: 'True', reason: 'PodReady', message: '', lastTransitionTime: '' },
        ],
      },
    });
    const voter = member('demo-1', { status: { isVoter: true } });
    const learner = member('demo-0', { status: { isVoter: false } });
    const deleting = member('demo-4', { deleting: true, status: { isVoter: true } });
    const dormant = member('demo-5', { spec: { dormant: true } });
    const unwired = member('demo-6', { spec: { initialCluster: '' } });
    assert.deepEqual(peerEndpoints([deleting, learner, dormant, voter, unwired, readyVoter]), [
      url('demo-3', 2379),
      url('demo-1', 2379),
      url('demo-0', 2379),
      url('demo-4', 2379),
    ]);
  });

  // Each row: two members, the first by name must be asked second.
  const cond = (type: string, status: ConditionStatus) => ({
    type,
    status,
    reason: '',
    message: '',
    lastTransitionTime: '',
  });
  const rows: { name: string; later: EtcdMember; first: EtcdMember }[] = [
    {
      name: 'a ready voter before a voter whose Ready is False',
      later: member('demo-0', {
        deleting: false,
        status: { isVoter: true, conditions: [cond('Ready', 'False')] },
      }),
      first: member('demo-1', {
        deleting: false,
        status: { isVoter: true, conditions: [cond('Ready', 'True')] },
      }),
    },
    {
      name: 'a ready voter before a voter with only some other condition True',
      later: member('demo-0', {
        deleting: false,
        status: { isVoter: true, conditions: [cond('Synced', 'True')] },
      }),
      first: member('demo-1', {
        deleting: false,
        status: { isVoter: true, conditions: [cond('Ready', 'True')] },
      }),
    },
    {
      name: 'the seed (bootstrap, not yet recorded as a voter) before a learner',
      later: member('demo-0', { deleting: false, status: { isVoter: false } }),
      first: member('demo-1', { deleting: false, spec: { bootstrap: true } }),
    },
    {
      name: 'an unready voter before a ready learner',
      later: member('demo-0', {
        deleting: false,
        status: { isVoter: false, conditions: [cond('Ready', 'True')] },
      }),
      first: member('demo-1', { deleting: false, status: { isVoter: true } }),
    },
    {
      name: 'a learner with no status yet before a ready voter being deleted',
      later: member('demo-0', {
        deleting: true,
        status: { isVoter: true, conditions: [cond('Ready', 'True')] },
      }),
      first: member('demo-1', { deleting: false }),
    },
  ];
  rows.push({
    name: 'a ready voter before a voter with no conditions yet',
    later: member('demo-0', { deleting: false, status: { isVoter: true, conditions: [] } }),
    first: member('demo-1', {
      deleting: false,
      status: { isVoter: true, conditions: [cond('Ready', 'True')] },
    }),
  });
  for (const row of rows) {
    it(`order: ${row.name}`, () => {
      const [first, later] = [row.first, row.later].map(m => url(m.metadata.name ?? '', 2379));
      assert.deepEqual(peerEndpoints([row.later, row.first]), [first, later]);
      assert.deepEqual(peerEndpoints([row.first, row.later]), [first, later]);
    });
  }

  it('members of the same rank by name, whatever order they were listed in', () => {
    const a = member('demo-0', { deleting: false, status: { isVoter: true } });
    const b = member('demo-1', { deleting: false, status: { isVoter: true } });
    const expected = [url('demo-0', 2379), url('demo-1', 2379)];
    assert.deepEqual(peerEndpoints([a, b]), expected);
    assert.deepEqual(peerEndpoints([b, a]), expected);
  });

  it('speaks https to members with client TLS', () => {
    const tls = member('demo-0', { spec: { tls: { clientServerSecretRef: { name: 'demo-server-tls' } } } });
    assert.deepEqual(peerEndpoints([tls]), ['https://demo-0.demo.prod.svc:2379']);
  });
});

describe('needsEtcd (finalize)', () => {
  it('only for a member being deleted with our finalizer, in a live cluster, with others to ask', () => {
    const base = scaleDown();
    assert.equal(needsEtcd(base), true);
    assert.equal(needsEtcd({ ...base, member: member('demo-2', { deleting: false }) }), false);
    assert.equal(needsEtcd({ ...base, member: member('demo-2', { finalizer: false }) }), false);
    assert.equal(needsEtcd({ ...base, cluster: undefined }), false);
    assert.equal(needsEtcd({ ...base, cluster: demoCluster(true) }), false);
    assert.equal(needsEtcd({ ...base, others: [] }), false);
    // A cluster that has written no status yet is live too.
    const fresh = demoCluster();
    delete fresh.status;
    assert.equal(needsEtcd({ ...base, cluster: fresh }), true);
  });
});
