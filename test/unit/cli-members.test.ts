// `kubectl etcdfn members`: etcd's view next to the EtcdCluster status, and every disagreement named.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus } from '../../shared/api/types.ts';
import { diffMembers, renderMembers, type EtcdView } from '../../cli/members.ts';
import type { MemberStatus } from '../../shared/etcd/status.ts';

const A = '8e9e05c52164694d';
const B = '91bc3c398fb3c146';
const C = 'fd422379fda50e48';
const member = (id: string, name: string, isLearner = false) => ({
  id,
  name,
  peerURLs: [`http://${name}.demo.prod.svc:2380`],
  clientURLs: [`http://${name}.demo.prod.svc:2379`],
  isLearner,
  started: name !== '',
});
const memberStatus = (id: string, dbSize: number, raftIndex: number): MemberStatus => ({
  endpoint: `http://127.0.1.${raftIndex % 250}:2379`,
  memberId: id,
  clusterId: 'cdf818194e3a8c32',
  leaderId: A,
  isLeader: id === A,
  isLearner: false,
  version: '3.5.16',
  raftTerm: 2,
  raftIndex,
  raftAppliedIndex: raftIndex,
  dbSize,
  dbSizeInUse: dbSize,
  errors: [],
});

const etcd = (over: Partial<EtcdView> = {}): EtcdView => ({
  clusterId: 'cdf818194e3a8c32',
  listedBy: 'http://127.0.1.2:2379',
  members: [member(A, 'demo-0'), member(B, 'demo-1'), member(C, 'demo-2')],
  statuses: { [A]: memberStatus(A, 20480, 42), [B]: memberStatus(B, 20480, 42) },
  unreachable: [{ endpoint: 'http://127.0.1.4:2379', message: 'connection refused' }],
  leaderId: A,
  ...over,
});

const status = (): EtcdClusterStatus => ({
  clusterID: 'cdf818194e3a8c32',
  members: [
    { name: 'demo-0', id: A, role: 'voter', leader: true },
    { name: 'demo-1', id: B, role: 'voter' },
    { name: 'demo-2', id: C, role: 'voter' },
  ],
});

describe('kubectl etcdfn members', () => {
  it('finds no mismatch when etcd and status agree', () => {
    assert.deepEqual(diffMembers(etcd(), status()), []);
  });

  it('names each disagreement: role, leader, ID, members on one side only, cluster ID', () => {
    const s = status();
    s.clusterID = '1111111111111111';
    s.members = [
      { name: 'demo-0', id: A, role: 'voter' },
      { name: 'demo-1', id: '2222222222222222', role: 'voter', leader: true },
      { name: 'demo-3', id: '3333333333333333', role: 'voter' },
      { name: 'demo-4', role: 'learner' },
    ];
    const e = etcd({ members: [member(A, 'demo-0', true), member(B, 'demo-1'), member(C, 'demo-2')] });
    assert.deepEqual(diffMembers(e, s), [
      'cluster ID: etcd says cdf818194e3a8c32, status says 1111111111111111',
      'member demo-0: etcd says learner, status says voter',
      'member demo-0: etcd says leader, status says not leader',
      'member demo-1: etcd ID 91bc3c398fb3c146, status ID 2222222222222222',
      `member demo-2 (${C}) is in etcd but not in status`,
      'member demo-1 (2222222222222222) is in status but not in etcd',
      'member demo-3 (3333333333333333) is in status but not in etcd',
      'member demo-4 is in status without an etcd ID (not added to etcd yet)',
    ]);
  });

  it("prints etcd's table, the unreachable endpoints, the side-by-side view and the verdict", () => {
    assert.equal(
      renderMembers('demo', 'prod', etcd(), status()),
      [
        'etcd members of prod/demo (cluster ID cdf818194e3a8c32, listed by http://127.0.1.2:2379)',
        '',
        'ID                 NAME     PEER URLS                          LEARNER   DB SIZE   RAFT TERM   RAFT INDEX   LEADER',
        '8e9e05c52164694d   demo-0   http://demo-0.demo.prod.svc:2380   false     20 KiB    2           42           *',
        '91bc3c398fb3c146   demo-1   http://demo-1.demo.prod.svc:2380   false     20 KiB    2           42',
        'fd422379fda50e48   demo-2   http://demo-2.demo.prod.svc:2380   false     ?         ?           ?',
        'unreachable: http://127.0.1.4:2379: connection refused',
        '',
        'etcd vs EtcdCluster status',
        '',
        'NAME     ETCD ID            STATUS ID          ETCD ROLE   STATUS ROLE   ETCD LEADER   STATUS LEADER',
        'demo-0   8e9e05c52164694d   8e9e05c52164694d   voter       voter         *             *',
        'demo-1   91bc3c398fb3c146   91bc3c398fb3c146   voter       voter',
        'demo-2   fd422379fda50e48   fd422379fda50e48   voter       voter',
        '',
        'No mismatch: etcd and the EtcdCluster status agree on 3 members.',
      ].join('\n'),
    );
  });

  it('lists mismatches under a heading', () => {
    const s = status();
    s.members = s.members?.slice(0, 2);
    const text = renderMembers('demo', 'prod', etcd(), s);
    assert.match(
      text,
      new RegExp(`1 MISMATCH:\\n  - member demo-2 \\(${C}\\) is in etcd but not in status$`),
    );
  });
});
