// An initial member of a static bootstrap whose etcd has not run yet (its Pod late under load, or
// its reconcile-member crashed and restarted) while the others already formed the cluster. etcd
// lists every initial member by its --initial-cluster name from the start, started or not; only a
// member that ran has published its client URLs. Taking the name for "it ran" recorded hasData, so
// the member's first Pod was built with the empty-data guard (only itself, `existing`), its etcd
// refused on its empty directory ("could not retrieve cluster information"), and that refusal was
// read as lost data: the member was replaced and a fourth member claimed during a bootstrap of 3.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { IMember } from 'etcd3';
import { toMember } from '../../shared/etcd/members.ts';
import { planMember } from '../../shared/plan/member/plan.ts';
import { podJoinSettings } from '../../shared/plan/member/pod.ts';
import { CLIENT, ID, PEER, cluster, member, pod, running } from '../support/member-world.ts';

const PEER0 = 'http://demo-0.demo.prod.svc:2380';
const PEER2 = 'http://demo-2.demo.prod.svc:2380';
const INITIAL = `demo-0=${PEER0},demo-1=${PEER},demo-2=${PEER2}`;

/** A member as etcd 3.5.16's memberList answers (checked by hand with three static members, one never started). */
const listed = (name: string, id: string, peer: string, client?: string): IMember =>
  ({
    ID: BigInt(`0x${id}`).toString(),
    name,
    peerURLs: [peer],
    clientURLs: client ? [client] : [],
  }) as IMember;

describe('toMember: started means the member ran (it published its client URLs)', () => {
  const rows: { name: string; m: IMember; started: boolean }[] = [
    { name: 'a learner just added: no name, no client URL', m: listed('', ID, PEER), started: false },
    { name: 'a learner that has run', m: listed('demo-1', ID, PEER, CLIENT), started: true },
    {
      name: 'a static initial member never started: named from --initial-cluster, no client URL',
      m: listed('demo-1', ID, PEER),
      started: false,
    },
    { name: 'a static initial member that has run', m: listed('demo-1', ID, PEER, CLIENT), started: true },
  ];
  for (const row of rows) {
    it(row.name, () => assert.equal(toMember(row.m).started, row.started));
  }
});

describe('planMember: a static initial member not started yet, the cluster formed by the others', () => {
  const staticMember = member({ bootstrap: true, initialCluster: INITIAL });
  const etcd = {
    clusterId: 'c0ffee0000000001',
    members: [
      toMember(listed('demo-0', '00000000000000aa', PEER0, 'http://demo-0.demo.prod.svc:2379')),
      toMember(listed('demo-1', ID, PEER)),
      toMember(listed('demo-2', '00000000000000bb', PEER2, 'http://demo-2.demo.prod.svc:2379')),
    ],
  };

  it('its first Pod joins with the whole initial list, not the empty-data guard', () => {
    const p = planMember(running(staticMember, { cluster: cluster(), etcd }));
    assert.equal(p.action.kind, 'create-pod', JSON.stringify(p.action));
    assert.notEqual(p.status.hasData, true, 'it has not run, so its volume holds no data of it');
    const made = (p.action as { pod: Parameters<typeof podJoinSettings>[0] }).pod;
    assert.equal(podJoinSettings(made)?.initialCluster, INITIAL);
  });

  // Two late initial members started `existing` each asked the other for its version before serving
  // their own peer port, with no timeout (etcd 3.5.16 isCompatibleWithCluster): 3 of 5 ready forever.
  it('its first Pod starts new like every initial member, however late: its ID known, the cluster formed', () => {
    const known = { ...staticMember, status: { memberID: ID, isVoter: true, role: 'voter' as const } };
    const formed = cluster({ clusterID: etcd.clusterId });
    const p = planMember(running(known, { cluster: formed, etcd }));
    assert.equal(p.action.kind, 'create-pod', JSON.stringify(p.action));
    const made = (p.action as { pod: Parameters<typeof podJoinSettings>[0] }).pod;
    assert.deepEqual(podJoinSettings(made), { initialCluster: INITIAL, state: 'new' });
  });

  it('its first Pod, starting, is not re-armed with the guard', () => {
    const first = planMember(running(staticMember, { cluster: cluster(), etcd }));
    const made = (first.action as { pod: Parameters<typeof podJoinSettings>[0] }).pod;
    const seen = pod(staticMember, { ready: false });
    const metadata = { ...made.metadata, ...seen.metadata, labels: made.metadata?.labels };
    const starting = { ...made, metadata, status: seen.status };
    const withStatus = { ...staticMember, status: first.status };
    const p = planMember(running(withStatus, { cluster: cluster(), etcd, pod: starting }));
    assert.notEqual(p.action.kind, 'patch-pod-metadata', JSON.stringify(p.action));
    assert.notEqual(p.status.hasData, true);
    assert.equal(p.status.dataLoss, undefined, 'never taken for a member that lost its data');
  });
});
