// The member facts planners, status and the adapters share (shared/plan/cluster/members.ts): which members
// are gone already, the scale-down order past nine members, the URLs a member is reached at, how an
// EtcdMember is found in etcd's list, the endpoints etcd is asked through and the --initial-cluster a
// joining member gets. Written against the mutants StrykerJS left alive in plan/cluster/members.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import type { EtcdMember as Membership } from '../../shared/etcd/members.ts';
import { planCluster } from '../../shared/plan/cluster/plan.ts';
import {
  etcdEndpoints,
  initialClusterFrom,
  isDeleting,
  memberUrls,
  membershipOf,
  newestFirst,
  ordinalOf,
} from '../../shared/plan/cluster/members.ts';
import { cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';

const formed = (replicas: number) =>
  cluster({ replicas }, locked(replicas, { clusterID: 'c0ffee0000000001' }));
const named = (name: string): EtcdMember => {
  const m = member(0);
  m.metadata.name = name;
  return m;
};
const names = (members: EtcdMember[]) => members.map(m => m.metadata.name);

describe('members being deleted', () => {
  it('status leaves out the member being removed: neither listed nor counted as ready', () => {
    const plan = planCluster(
      state(formed(2), [member(0), member(1), member(2, { deleting: true })], {
        etcd: etcdOf([membership(0), membership(1), membership(2)]),
        ready: [0, 1, 2],
      }),
    );
    assert.deepEqual(plan.action, { kind: 'wait', reason: 'removing member demo-2 from etcd' });
    assert.deepEqual(
      plan.status.members?.map(m => m.name),
      ['demo-0', 'demo-1'],
    );
    assert.equal(plan.status.ready, '2/2');
    assert.equal(plan.status.readyMembers, 2);
  });

  it('a deletionTimestamp of null (as some clients write an unset one) is not a deletion', () => {
    assert.equal(isDeleting({ metadata: { deletionTimestamp: null } }), false);
    assert.equal(isDeleting({ metadata: {} }), false);
    assert.equal(isDeleting({ metadata: { deletionTimestamp: '2026-11-22T10:00:00Z' } }), true);
  });
});

describe('scale-down order (newest first)', () => {
  it('demo-10 is newer than demo-9: it goes first, though it sorts first by name', () => {
    const plan = planCluster(
      state(formed(1), [member(9, { bootstrap: true }), member(10)], {
        etcd: etcdOf([membership(9), membership(10)], 9),
        ready: [9, 10],
      }),
    );
    assert.deepEqual(plan.action, { kind: 'delete-member', member: 'demo-10' });
    assert.equal(plan.events[0]?.message, 'removing member demo-10 (2 → 1)');
  });

  const rows: { name: string; ordinal: number }[] = [
    { name: 'demo-10', ordinal: 10 },
    { name: 'etcd-2-10', ordinal: 10 },
    { name: 'etcd-2-x', ordinal: -1 },
    { name: 'demo', ordinal: -1 },
  ];
  for (const row of rows) {
    it(`${row.name} has ordinal ${row.ordinal}`, () => {
      assert.equal(ordinalOf(named(row.name)), row.ordinal);
    });
  }

  it('members without an ordinal come after those with one, newest name first', () => {
    const order = newestFirst([named('demo-x'), named('demo-1'), named('demo-y'), named('demo-12')]);
    assert.deepEqual(names(order), ['demo-12', 'demo-1', 'demo-y', 'demo-x']);
    // Whatever order they were listed in.
    assert.deepEqual(names(newestFirst([named('demo-y'), named('demo-x')])), ['demo-y', 'demo-x']);
    assert.deepEqual(names(newestFirst([named('demo-x'), named('demo-y')])), ['demo-y', 'demo-x']);
  });
});

describe('member URLs', () => {
  const rows: { name: string; tls: object; peer: string; client: string }[] = [
    {
      name: 'no TLS',
      tls: {},
      peer: 'http://demo-1.demo.prod.svc:2380',
      client: 'http://demo-1.demo.prod.svc:2379',
    },
    {
      name: 'peer TLS only',
      tls: { peer: { auto: {} } },
      peer: 'https://demo-1.demo.prod.svc:2380',
      client: 'http://demo-1.demo.prod.svc:2379',
    },
    {
      name: 'client TLS only',
      tls: { client: { auto: {} } },
      peer: 'http://demo-1.demo.prod.svc:2380',
      client: 'https://demo-1.demo.prod.svc:2379',
    },
  ];
  for (const row of rows) {
    it(`${row.name}: peer ${row.peer}, client ${row.client}`, () => {
      assert.deepEqual(memberUrls(cluster({ tls: row.tls }), 'demo-1'), {
        peer: row.peer,
        client: row.client,
      });
    });
  }
});

describe('membershipOf', () => {
  it('a started member is found by name, whatever peer URL it advertises', () => {
    const e: Membership = { ...membership(1), peerURLs: ['http://10.0.0.7:2380'] };
    assert.equal(membershipOf(cluster(), member(1), [membership(0), e])?.id, e.id);
  });
  it('a member that has not started is found by its peer URL', () => {
    const e = membership(1, { started: false });
    assert.equal(membershipOf(cluster(), member(1), [membership(0), e])?.id, e.id);
  });
  it('neither name nor peer URL: not in etcd', () => {
    assert.equal(membershipOf(cluster(), member(2), [membership(0), membership(1)]), undefined);
  });
});

describe('etcdEndpoints', () => {
  const url = (n: number, scheme = 'http') => `${scheme}://demo-${n}.demo.prod.svc:2379`;
  it('ready voters first (the seed counts as one), then ready learners; unready, dormant and deleted members are not asked', () => {
    const seed = member(0, { voter: false });
    const learner = member(1, { voter: false, bootstrap: false });
    const voter = member(2);
    const unready = member(3);
    const dormant = member(4, { dormant: true });
    const deleting = member(5, { deleting: true });
    const s = state(formed(3), [learner, seed, voter, unready, dormant, deleting], {
      ready: [0, 1, 2, 4, 5],
    });
    assert.deepEqual(etcdEndpoints(s, s.cluster), [url(0), url(2), url(1)]);
  });
  it('a member with no status yet is not a voter', () => {
    const fresh = member(1, { bootstrap: false });
    delete fresh.status;
    const s = state(formed(2), [fresh, member(2)], { ready: [1, 2] });
    assert.deepEqual(etcdEndpoints(s, s.cluster), [url(2), url(1)]);
  });
  it('https with client TLS', () => {
    const c = cluster({ tls: { client: { auto: {} } } }, locked(1));
    const s = state(c, [member(0)], { ready: [0] });
    assert.deepEqual(etcdEndpoints(s, c), [url(0, 'https')]);
  });
  it('no ready member: nothing to ask', () => {
    const s = state(formed(1), [member(0)], { ready: [] });
    assert.deepEqual(etcdEndpoints(s, s.cluster), []);
  });
});

describe('initialClusterFrom', () => {
  it("started members by their name, a member not started yet by its peer URL's host, sorted", () => {
    const joining = membership(3, { started: false });
    assert.equal(
      initialClusterFrom([membership(1), joining, membership(0)]),
      'demo-0=http://demo-0.demo.prod.svc:2380,demo-1=http://demo-1.demo.prod.svc:2380,demo-3=http://demo-3.demo.prod.svc:2380',
    );
  });
  it('an entry with no peer URL is left out', () => {
    assert.equal(
      initialClusterFrom([{ ...membership(1), peerURLs: [] }, membership(0)]),
      'demo-0=http://demo-0.demo.prod.svc:2380',
    );
  });
  it('an unnamed entry whose peer URL does not parse gets an empty name', () => {
    assert.equal(
      initialClusterFrom([{ ...membership(1, { started: false }), peerURLs: ['not a url'] }]),
      '=not a url',
    );
  });
});
