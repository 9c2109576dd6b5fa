// Issue 29: a rolling upgrade must never stop the leader without handing leadership over. The
// cluster moves leadership before it sets a member's new version, but leadership can come back
// before reconcile-member stops the Pod; so reconcile-member reads the member's own word in the same
// invocation and, if it leads, moves leadership first (to an upgraded voter when one is known).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { needsEtcd, planMember } from '../../shared/plan/member/plan.ts';
import type { MemberState } from '../../shared/plan/member/step.ts';
import {
  CLUSTER_ID,
  ID,
  cluster,
  inEtcd,
  member,
  other,
  pod,
  running,
  self,
} from '../support/member-world.ts';

const m = member({ version: '3.5.16' }, { memberID: ID, isVoter: true, version: '3.4.23' });
const oldPod = (ready = true): V1Pod => ({
  ...pod(m, { uid: 'old-pod', ready }),
  spec: { containers: [{ name: 'etcd', image: 'quay.io/coreos/etcd:v3.4.23' }] },
});
const third = inEtcd({
  id: '00000000000000bb',
  name: 'demo-2',
  peerURLs: ['http://demo-2.demo.prod.svc:2380'],
  clientURLs: ['http://demo-2.demo.prod.svc:2379'],
});
const view = (members = [inEtcd(), other, third]) => ({ members, clusterId: CLUSTER_ID });
const leading = self({ version: '3.4.23', isLeader: true, leaderId: ID, raftTerm: 7 });
const following = self({ version: '3.4.23' });
/** demo-2 already runs the target release, demo-0 not yet. */
const upgradedCluster = cluster({
  clusterID: CLUSTER_ID,
  members: [
    { name: 'demo-0', ready: true, role: 'voter', version: '3.4.23' },
    { name: 'demo-1', ready: true, role: 'voter', version: '3.4.23' },
    { name: 'demo-2', ready: true, role: 'voter', version: '3.5.16' },
  ],
} as never);

describe('an upgrade stops the Pod only once the member says it follows', () => {
  const rows: { name: string; state: Partial<MemberState>; want: string }[] = [
    { name: 'it follows: the Pod is replaced', state: { self: following, etcd: view() }, want: 'delete-pod' },
    {
      name: 'it leads: leadership moves first, to the upgraded voter',
      state: { self: leading, etcd: view(), cluster: upgradedCluster },
      want: 'move-leader 00000000000000bb',
    },
    {
      name: 'it leads, nobody upgraded yet: leadership moves to another started voter',
      state: { self: leading, etcd: view() },
      want: 'move-leader 00000000000000aa',
    },
    {
      name: 'it leads, the other voter has not started (a learner cannot lead): waits, retried',
      state: {
        self: leading,
        etcd: view([inEtcd(), { ...other, started: false }, { ...third, isLearner: true }]),
      },
      want: 'wait retry',
    },
    {
      name: 'it leads and etcd did not list the members: waits, retried',
      state: { self: leading },
      want: 'wait retry',
    },
    {
      name: 'its own endpoint did not answer: waits, retried (it might lead)',
      state: { etcd: view() },
      want: 'wait retry',
    },
    {
      name: 'a 1-member cluster: nobody to hand over to, the Pod is replaced',
      state: { self: leading, etcd: view([inEtcd()]) },
      want: 'delete-pod',
    },
    {
      name: 'its Pod is not ready: it serves nothing, the Pod is replaced',
      state: { pod: oldPod(false) },
      want: 'delete-pod',
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const p = planMember(running(m, { pod: oldPod(), ...row.state }));
      const a = p.action;
      const got =
        a.kind === 'move-leader'
          ? `move-leader ${a.toId}`
          : a.kind === 'wait'
            ? `wait${a.retry ? ' retry' : ''}`
            : a.kind;
      assert.equal(got, row.want, JSON.stringify(a));
      if (a.kind === 'move-leader') {
        assert.equal(a.fromId, ID);
        assert.match(a.reason, /demo-1 leads etcd \(term 7\) just before its Pod would be stopped/);
        assert.deepEqual(p.events, [], 'no UpgradingMember Event before the Pod is really replaced');
      }
    });
  }

  it('whether it leads is always read fresh when an upgrade is pending', () => {
    assert.equal(needsEtcd({ member: m, cluster: cluster(), pod: oldPod() }), true);
    // Even when the member's status already records all there is to know about the old Pod.
    const recorded = member(
      { version: '3.5.16' },
      { memberID: ID, isVoter: true, version: '3.4.23', podUID: 'old-pod' },
    );
    assert.equal(needsEtcd({ member: recorded, cluster: cluster(), pod: oldPod() }), true);
    const current = {
      ...oldPod(),
      spec: { containers: [{ name: 'etcd', image: 'quay.io/coreos/etcd:v3.5.16' }] },
    };
    const known = member(
      { version: '3.5.16' },
      { memberID: ID, isVoter: true, version: '3.5.16', podUID: 'old-pod' },
    );
    assert.equal(needsEtcd({ member: known, cluster: cluster(), pod: current }), false);
  });
});
