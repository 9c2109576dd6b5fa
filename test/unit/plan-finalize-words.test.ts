// finalize-member's decision where plan-finalize.test.ts checks less: a cluster that never wrote a
// status, the count left in the MemberRemoved Event, which voter receives leadership when the one
// that answered cannot (the first by ID), the members named in a retry, the DeletionHeld Warning.
// Written against the mutants StrykerJS left alive in shared/plan/member/finalize.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import type { EtcdMember as EtcdMembership } from '../../shared/etcd/members.ts';
import { planFinalize, type FinalizeState } from '../../shared/plan/member/finalize.ts';
import { etcdCluster, etcdMember } from '../support/etcd-objects.ts';

const NOW = new Date('2026-11-22T10:00:00Z');
const url = (name: string, port: number) => `http://${name}.demo.prod.svc:${port}`;
const idOf = (name: string) => `00000000000000a${name.slice(-1)}`;

/** Cluster demo (uid cluster-uid, no replicas) with `status` if given. */
function demoCluster(status?: EtcdCluster['status']): EtcdCluster {
  return etcdCluster({
    metadata: { uid: 'cluster-uid' },
    spec: { replicas: undefined },
    ...(status && { status }),
  });
}
/** A member with the cleanup finalizer; demo-2 is being deleted unless `deleting` says otherwise. */
function member(name: string, o: { deleting?: boolean; dormant?: boolean } = {}): EtcdMember {
  return etcdMember(name, {
    metadata: {
      uid: `${name}-uid`,
      finalizers: ['etcdfn.io/member-cleanup'],
      deletionTimestamp: (o.deleting ?? name === 'demo-2') ? NOW : undefined,
    },
    spec: { initialCluster: 'demo-0=…', clusterToken: 't', dormant: o.dormant ? true : undefined },
  });
}
const inEtcd = (name: string, o: Partial<EtcdMembership> = {}): EtcdMembership => ({
  id: idOf(name),
  name,
  peerURLs: [url(name, 2380)],
  clientURLs: [url(name, 2379)],
  isLearner: false,
  started: true,
  ...o,
});
const state = (o: Partial<FinalizeState> = {}): FinalizeState => ({
  member: member('demo-2'),
  cluster: demoCluster({ clusterID: 'c0ffee0000000001' }),
  others: [member('demo-0'), member('demo-1')],
  tried: [url('demo-0', 2379)],
  etcd: {
    members: [inEtcd('demo-0'), inEtcd('demo-1'), inEtcd('demo-2')],
    clusterId: 'c0ffee0000000001',
    endpoint: url('demo-0', 2379),
  },
  ...o,
});

describe('finalize-member, word for word', () => {
  it('a cluster that never wrote a status: the member is removed from etcd as usual', () => {
    assert.equal(planFinalize(state({ cluster: demoCluster() })).kind, 'remove-from-etcd');
  });

  it('the MemberRemoved Event counts what is left, in the singular for one', () => {
    const a = planFinalize(
      state({
        others: [member('demo-0')],
        etcd: {
          members: [inEtcd('demo-0'), inEtcd('demo-2')],
          clusterId: 'c0ffee0000000001',
          endpoint: url('demo-0', 2379),
        },
      }),
    );
    assert.equal(
      a.kind === 'remove-from-etcd' && a.event.message,
      `member demo-2 (voter ${idOf('demo-2')}) removed from etcd; 1 member left`,
    );
  });

  it('the leader hands over to the first voter by ID when the one that answered cannot take it', () => {
    const a = planFinalize(
      state({
        etcd: {
          // Listed out of ID order; the endpoint that answered is a learner's.
          members: [
            inEtcd('demo-2'),
            inEtcd('demo-1'),
            inEtcd('demo-0'),
            inEtcd('demo-3', { isLearner: true }),
          ],
          clusterId: 'c0ffee0000000001',
          endpoint: url('demo-3', 2379),
          leaderId: idOf('demo-2'),
        },
      }),
    );
    assert.equal(a.kind, 'move-leader');
    assert.equal(a.kind === 'move-leader' && a.toName, 'demo-0');
  });

  it('etcd out of reach with nobody to ask: the members are named in order', () => {
    const a = planFinalize(
      state({
        others: [member('demo-1', { dormant: true }), member('demo-0', { dormant: true })],
        tried: [],
        cluster: demoCluster({ clusterID: 'c0ffee0000000001' }),
        member: {
          ...member('demo-2'),
          spec: { ...member('demo-2').spec, storage: { size: '1Gi', medium: 'Memory' } },
        },
        etcd: undefined,
      }),
    );
    assert.deepEqual(a, {
      kind: 'retry',
      reason:
        "cannot reach etcd through the other members (none of demo-0, demo-1 has a Pod to ask (dormant or not yet added to etcd)); keeping demo-2's finalizer so no ghost member is left in etcd",
    });
  });

  it('the only data holder: held, with a Warning', () => {
    const a = planFinalize(state({ others: [member('demo-0', { dormant: true })], etcd: undefined }));
    assert.equal(a.kind, 'keep');
    assert.equal(a.kind === 'keep' && a.event.type, 'Warning');
    assert.equal(a.kind === 'keep' && a.event.reason, 'DeletionHeld');
  });
});
