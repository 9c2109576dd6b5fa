import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { needsEtcd, planMember } from '../../shared/plan/member/plan.ts';
import { podJoinSettings, podNotReadyMessage } from '../../shared/plan/member/pod.ts';
import {
  CLIENT,
  CLUSTER_ID,
  ID,
  LATER,
  NOW,
  PEER,
  cluster,
  inEtcd,
  member,
  other,
  pod,
  pvc,
  ready,
  running,
  self,
  state,
  written,
} from '../support/member-world.ts';

describe('planMember: members it leaves alone', () => {
  it('a member being deleted is finalize-member’s job: nothing, no status write', () => {
    const m = member({}, { podName: 'demo-1' }, true);
    const p = planMember(running(m, { pod: pod(m) }));
    assert.equal(p.action.kind, 'none');
    assert.equal(p.statusChanged, false);
    assert.deepEqual(p.status, m.status);
  });

  it('a member whose cluster is gone is left to the garbage collector', () => {
    const m = member();
    const p = planMember({ now: NOW, member: m });
    assert.equal(p.action.kind, 'none');
    assert.match((p.action as { reason: string }).reason, /EtcdCluster demo not found/);
    assert.equal(p.statusChanged, false);
  });

  it('a member of a cluster being deleted gets nothing new', () => {
    const m = member();
    const p = planMember(state(m, { cluster: cluster({}, true) }));
    assert.equal(p.action.kind, 'none');
    assert.equal(p.statusChanged, false);
  });
});

describe('planMember: a member not yet wired', () => {
  it('gets its PVC but no Pod, and says it is waiting to join', () => {
    const m = member({ initialCluster: '' });
    const p = planMember(state(m));
    assert.equal(p.action.kind, 'create-pvc');
    assert.equal(p.action.kind === 'create-pvc' && p.action.pvc.metadata?.name, 'data-demo-1');
    assert.equal(planMember(running(m)).action.kind, 'none', 'with its PVC: no Pod');
    assert.equal(p.statusChanged, true);
    assert.deepEqual(ready(p), {
      type: 'Ready',
      status: 'False',
      reason: 'WaitingToJoin',
      message: 'not yet added to etcd',
      observedGeneration: 2,
      lastTransitionTime: '2026-11-22T10:00:00Z',
    });
    assert.equal(p.status.peerURL, PEER);
    assert.equal(p.status.clientURL, CLIENT);
    assert.equal(p.status.pvcName, 'data-demo-1');
    assert.equal(p.status.observedGeneration, 2);
  });

  it('is not rewritten while nothing changes', () => {
    const m = member({ initialCluster: '' });
    const first = planMember(running(m));
    const again = planMember({ ...running(written(m, first)), now: LATER });
    assert.equal(again.statusChanged, false);
    assert.equal(again.action.kind, 'none');
  });
});

describe('planMember: a dormant (paused) member', () => {
  it('has its Pod deleted, keeps its PVC, and clears podName/podUID', () => {
    const m = member(
      { dormant: true },
      { podName: 'demo-1', podUID: 'pod-uid', memberID: ID, isVoter: true },
    );
    const p = planMember(running(m, { pod: pod(m) }));
    assert.deepEqual(p.action, {
      kind: 'delete-pod',
      name: 'demo-1',
      uid: 'pod-uid',
      reason: 'demo-1 is paused (spec.dormant): deleting its Pod, keeping its data',
    });
    assert.equal(p.status.podName, undefined);
    assert.equal(p.status.podUID, undefined);
    assert.equal(p.status.memberID, ID, 'the member ID survives the pause');
    assert.equal(p.status.pvcName, 'data-demo-1');
    const c = ready(p);
    assert.equal(c?.reason, 'Paused');
    assert.equal(c?.message, 'paused; Pod deleted, data kept on data-demo-1');
  });

  it('waits for a Pod already terminating (its deletion event comes)', () => {
    const m = member({ dormant: true });
    const p = planMember(running(m, { pod: pod(m, { deleting: true }) }));
    assert.deepEqual(p.action, { kind: 'wait', reason: 'Pod demo-1 is being deleted', retry: false });
  });

  it('with no Pod left, is steady', () => {
    const m = member({ dormant: true });
    const first = planMember(running(m));
    assert.equal(first.action.kind, 'none');
    const again = planMember(running(written(m, first)));
    assert.equal(again.statusChanged, false);
  });

  it('deletes a stale Pod of the same name but never a foreign one', () => {
    const m = member({ dormant: true });
    assert.equal(planMember(running(m, { pod: pod(m, { owner: 'stale' }) })).action.kind, 'delete-pod');
    assert.equal(planMember(running(m, { pod: pod(m, { owner: 'foreign' }) })).action.kind, 'none');
  });

  it('is resumed on the same member: dormant=false creates the Pod again', () => {
    const m = member({ dormant: false }, { memberID: ID, isVoter: true, role: 'voter' });
    const p = planMember(running(m));
    assert.equal(p.action.kind, 'create-pod');
  });
});

describe('planMember: the data volume', () => {
  it('is created first, named data-<member>, owned by the member', () => {
    const m = member();
    const p = planMember(state(m));
    assert.equal(p.action.kind, 'create-pvc');
    if (p.action.kind !== 'create-pvc') return;
    assert.equal(p.action.pvc.metadata?.name, 'data-demo-1');
    assert.equal(p.action.pvc.metadata?.ownerReferences?.[0]?.uid, 'member-uid');
    assert.equal(p.action.pvc.spec?.resources?.requests?.storage, '1Gi');
    assert.equal(ready(p)?.message, 'Pod demo-1 not created yet');
  });

  it('is not used by a Memory member (no PVC, no pvcName)', () => {
    const m = member({ storage: { size: '256Mi', medium: 'Memory' } }, { pvcName: 'data-demo-1' });
    const p = planMember(state(m));
    assert.equal(p.action.kind, 'create-pod');
    assert.equal(p.status.pvcName, undefined);
  });

  it('being deleted is waited for; its deletion event brings the next step', () => {
    const m = member();
    const p = planMember(state(m, { pvc: pvc(m, 'ours', true) }));
    assert.equal(p.action.kind, 'wait');
    assert.equal((p.action as { retry: boolean }).retry, false);
  });

  it('that belongs to someone else is never deleted: the member waits and says so', () => {
    const m = member();
    const stale = planMember(state(m, { pvc: pvc(m, 'stale') }));
    assert.equal(stale.action.kind, 'wait');
    assert.equal(
      (stale.action as { retry: boolean }).retry,
      false,
      'etcdfn-labelled: its deletion is an event',
    );
    assert.equal(ready(stale)?.reason, 'VolumeConflict');
    assert.match(
      ready(stale)?.message ?? '',
      /PVC data-demo-1 exists but does not belong to demo-1.*delete it/,
    );
    const foreign = planMember(state(m, { pvc: pvc(m, 'foreign') }));
    assert.equal((foreign.action as { retry: boolean }).retry, true, 'no event will come for a foreign PVC');
  });
});

describe('planMember: creating the Pod', () => {
  it('the seed of a cluster not formed yet starts with --initial-cluster-state=new, as a voter', () => {
    const m = member({ bootstrap: true, initialCluster: `demo-1=${PEER}` });
    const p = planMember(running(m, { cluster: cluster({}) }));
    assert.equal(p.action.kind, 'create-pod');
    if (p.action.kind !== 'create-pod') return;
    assert.equal(p.action.clusterFormed, false);
    assert.equal(p.action.isVoter, true);
    assert.equal(podJoinSettings(p.action.pod)?.state, 'new');
    assert.equal(p.action.pod.metadata?.name, 'demo-1');
    assert.equal(p.action.pod.metadata?.ownerReferences?.[0]?.uid, 'member-uid');
    assert.equal(p.action.pod.metadata?.labels?.['etcdfn.io/role'], 'voter');
    assert.equal(p.status.isVoter, true);
    assert.equal(p.status.role, 'voter');
  });

  it('once the cluster has formed, even the seed restarts with existing (an empty data dir must not found a new cluster)', () => {
    const m = member({ bootstrap: true, initialCluster: `demo-1=${PEER}` });
    const p = planMember(running(m));
    assert.equal(p.action.kind, 'create-pod');
    if (p.action.kind !== 'create-pod') return;
    assert.equal(p.action.clusterFormed, true);
    assert.equal(podJoinSettings(p.action.pod)?.state, 'existing');
  });

  it('a learner gets the learner label and the member ID etcd reports', () => {
    const m = member();
    const etcd = {
      members: [other, inEtcd({ name: '', isLearner: true, started: false, clientURLs: [] })],
      clusterId: CLUSTER_ID,
    };
    const p = planMember(running(m, { etcd }));
    assert.equal(p.action.kind, 'create-pod');
    if (p.action.kind !== 'create-pod') return;
    assert.equal(p.action.isVoter, false);
    assert.equal(p.action.pod.metadata?.labels?.['etcdfn.io/role'], 'learner');
    assert.equal(podJoinSettings(p.action.pod)?.state, 'existing');
    assert.equal(p.status.memberID, ID);
    assert.equal(p.status.role, 'learner');
    assert.equal(p.status.isVoter, false);
  });

  it('uses the operator-wide image repository', () => {
    const m = member();
    const p = planMember(running(m, { etcdImageRepository: 'registry.local/etcd' }));
    if (p.action.kind !== 'create-pod') return assert.fail(p.action.kind);
    assert.equal(p.action.pod.spec?.containers[0]?.image, 'registry.local/etcd:v3.5.16');
    const digest = `sha256:${'e'.repeat(64)}`;
    const pinned = planMember(running(m, { etcdImageDigests: { '3.5.16': digest } }));
    if (pinned.action.kind !== 'create-pod') return assert.fail(pinned.action.kind);
    assert.equal(pinned.action.pod.spec?.containers[0]?.image, `quay.io/coreos/etcd:v3.5.16@${digest}`);
  });

  it('a Pod that cannot be built is reported on the member, not retried', () => {
    const m = member({ version: '3.3.27' });
    const p = planMember(running(m));
    assert.equal(p.action.kind, 'wait');
    assert.equal((p.action as { retry: boolean }).retry, false);
    assert.equal(ready(p)?.reason, 'PodSpecInvalid');
    assert.match(ready(p)?.message ?? '', /etcd version "3\.3\.27" is not supported/);
  });
});

describe('planMember: a Pod that is not the member’s own', () => {
  it('a stale etcdfn Pod (earlier member of the same name) is deleted, then waited for', () => {
    const m = member();
    const p = planMember(running(m, { pod: pod(m, { owner: 'stale', uid: 'old-pod' }) }));
    assert.deepEqual(p.action, {
      kind: 'delete-pod',
      name: 'demo-1',
      uid: 'old-pod',
      reason: 'Pod demo-1 belongs to an earlier member of the same name; it is replaced',
    });
    assert.equal(ready(p)?.reason, 'PodConflict');
    assert.equal(p.status.podUID, undefined, 'a Pod that is not ours is never recorded');
    const waiting = planMember(running(m, { pod: pod(m, { owner: 'stale', deleting: true }) }));
    assert.equal(waiting.action.kind, 'wait');
  });

  it('a foreign Pod is left alone; no event will come for it, so retry', () => {
    const m = member();
    const p = planMember(running(m, { pod: pod(m, { owner: 'foreign' }) }));
    assert.equal(p.action.kind, 'wait');
    assert.equal((p.action as { retry: boolean }).retry, true);
    assert.match(ready(p)?.message ?? '', /not etcdfn's; delete or rename it/);
  });
});

describe('planMember: the member’s own Pod', () => {
  it('terminating: wait for its deletion event', () => {
    const m = member();
    const p = planMember(running(m, { pod: pod(m, { deleting: true }) }));
    assert.deepEqual(p.action, {
      kind: 'wait',
      reason: 'Pod demo-1 is being deleted; it is recreated once it is gone',
      retry: false,
    });
  });

  for (const phase of ['Succeeded', 'Failed']) {
    it(`in terminal phase ${phase} is deleted (a kubelet will not restart it), with an Event`, () => {
      const m = member();
      const p = planMember(running(m, { pod: pod(m, { phase, ready: false, uid: 'dead' }) }));
      assert.equal(p.action.kind, 'delete-pod');
      assert.equal((p.action as { uid: string }).uid, 'dead');
      assert.equal(p.events[0]?.reason, 'ReplacingPod');
      assert.match(ready(p)?.message ?? '', new RegExp(`Pod demo-1 is ${phase}`));
    });
  }

  it('not ready: nothing to do, and the condition says why, from the Pod', () => {
    const m = member({}, { isVoter: true, memberID: ID });
    const status: V1Pod['status'] = {
      phase: 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: '0/3 nodes are available',
        },
      ],
    };
    const p = planMember(running(m, { pod: pod(m, { status, role: 'voter' }) }));
    assert.equal(p.action.kind, 'none');
    assert.deepEqual(
      { reason: ready(p)?.reason, message: ready(p)?.message },
      {
        reason: 'PodNotReady',
        message: 'Pod demo-1 is Pending; not scheduled: Unschedulable (0/3 nodes are available)',
      },
    );
    assert.equal(p.status.podName, 'demo-1');
    assert.equal(p.status.podUID, 'pod-uid');
  });

  it('ready: Ready=True/PodReady, with ID, role and running version from etcd', () => {
    const m = member();
    const p = planMember(
      running(m, {
        pod: pod(m, { role: 'voter' }),
        etcd: { members: [other, inEtcd()], clusterId: CLUSTER_ID },
        self: self({ version: '3.5.17' }),
      }),
    );
    assert.equal(p.action.kind, 'none');
    assert.equal(ready(p)?.status, 'True');
    assert.equal(ready(p)?.reason, 'PodReady');
    assert.equal(ready(p)?.message, 'etcd member is ready');
    assert.deepEqual(
      {
        memberID: p.status.memberID,
        role: p.status.role,
        isVoter: p.status.isVoter,
        version: p.status.version,
        podName: p.status.podName,
        podUID: p.status.podUID,
        pvcName: p.status.pvcName,
      },
      {
        memberID: ID,
        role: 'voter',
        isVoter: true,
        version: '3.5.17',
        podName: 'demo-1',
        podUID: 'pod-uid',
        pvcName: 'data-demo-1',
      },
    );
  });

  it('steady: the same world twice writes nothing and keeps lastTransitionTime', () => {
    const m = member();
    const world = {
      pod: pod(m, { role: 'voter' }),
      etcd: { members: [other, inEtcd()], clusterId: CLUSTER_ID },
      self: self(),
    };
    const first = planMember(running(m, world));
    assert.equal(first.statusChanged, true);
    const again = planMember({ ...running(written(m, first), world), now: LATER });
    assert.equal(again.statusChanged, false);
    assert.equal(again.action.kind, 'none');
    assert.equal(ready(again)?.lastTransitionTime, '2026-11-22T10:00:00Z');
  });

  it('follows a promotion: etcd says voter, the Pod still says learner → relabel', () => {
    const m = member({}, { memberID: ID, isVoter: false, role: 'learner' });
    const p = planMember(
      running(m, {
        pod: pod(m, { role: 'learner' }),
        etcd: { members: [other, inEtcd()], clusterId: CLUSTER_ID },
      }),
    );
    assert.deepEqual(p.action, {
      kind: 'patch-pod-metadata',
      name: 'demo-1',
      labels: { 'etcdfn.io/role': 'voter' },
      reason: 'labelling Pod demo-1 etcdfn.io/role=voter, as etcd counts it',
    });
    assert.equal(p.status.isVoter, true);
    assert.equal(p.status.role, 'voter');
  });

  it('follows reconcile-cluster’s status patch when etcd is not asked', () => {
    const m = member({}, { memberID: ID, isVoter: true, role: 'voter' });
    const p = planMember(running(m, { pod: pod(m, { role: 'learner' }) }));
    assert.equal(p.action.kind, 'patch-pod-metadata');
    assert.deepEqual((p.action as { labels: unknown }).labels, { 'etcdfn.io/role': 'voter' });
  });

  it('labels a learner as a learner', () => {
    const m = member();
    const etcd = { members: [other, inEtcd({ isLearner: true })], clusterId: CLUSTER_ID };
    const p = planMember(running(m, { pod: pod(m), etcd }));
    assert.deepEqual((p.action as { labels: unknown }).labels, { 'etcdfn.io/role': 'learner' });
  });

  it('never takes a voter back to learner on a stale view (etcd cannot demote)', () => {
    const m = member({}, { memberID: ID, isVoter: true, role: 'voter' });
    const etcd = { members: [other, inEtcd({ isLearner: true })], clusterId: CLUSTER_ID };
    const p = planMember(running(m, { pod: pod(m, { role: 'voter' }), etcd }));
    assert.equal(p.status.isVoter, true);
    assert.equal(p.action.kind, 'none');
  });

  it('leaves the role label alone while the role is unknown', () => {
    const m = member();
    const p = planMember(running(m, { pod: pod(m, { ready: false }) }));
    assert.equal(p.action.kind, 'none');
    assert.equal(p.status.role, undefined);
  });

  it('ready but no member ID known (etcd did not answer): retry, nothing else will bring it', () => {
    const m = member();
    const p = planMember(running(m, { pod: pod(m) }));
    assert.equal(p.action.kind, 'wait');
    assert.equal((p.action as { retry: boolean }).retry, true);
    assert.equal(ready(p)?.status, 'True');
  });

  it('takes the member ID from its own endpoint when the membership list is not available', () => {
    const m = member({}, { isVoter: true });
    const p = planMember(running(m, { pod: pod(m, { role: 'voter' }), self: self() }));
    assert.equal(p.status.memberID, ID);
    assert.equal(p.action.kind, 'none');
  });

  it('finds itself by peer URL before it has started (etcd lists no name yet)', () => {
    const m = member();
    const etcd = {
      members: [other, inEtcd({ name: '', started: false, isLearner: true })],
      clusterId: CLUSTER_ID,
    };
    const p = planMember(running(m, { pod: pod(m, { ready: false }), etcd }));
    assert.equal(p.status.memberID, ID);
    assert.equal(p.status.role, 'learner');
  });

  it('ignores a view of another etcd cluster (different cluster ID)', () => {
    const m = member();
    const etcd = { members: [inEtcd({ isLearner: true })], clusterId: 'ffffffffffffffff' };
    const p = planMember(running(m, { pod: pod(m, { ready: false }), etcd }));
    assert.equal(p.status.memberID, undefined);
    assert.equal(p.status.role, undefined);
  });
});

describe('planMember: a Memory member that lost its Pod', () => {
  const memory = { storage: { size: '256Mi', medium: 'Memory' as const } };

  it('records its data as lost (MemoryLost) for reconcile-cluster to replace, never restarted under the same ID', () => {
    const m = member(memory, { podName: 'demo-1', podUID: 'pod-uid', memberID: ID, isVoter: true });
    const p = planMember(state(m));
    assert.equal(p.action.kind, 'wait');
    assert.equal(p.status.dataLoss?.reason, 'MemoryLost');
    assert.equal(p.status.dataLoss?.message, 'demo-1 kept its data in memory and its Pod is gone');
    assert.equal(p.statusChanged, true);
    assert.equal(ready(p)?.reason, 'DataLost');
    assert.equal(p.events[0]?.reason, 'MemberDataLost');
    assert.equal(p.events[0]?.type, 'Warning');
    // Sticky: the next invocation neither creates a Pod nor reports it again.
    const again = planMember(state({ ...m, status: p.status }));
    assert.equal(again.action.kind, 'wait');
    assert.deepEqual(again.events, []);
  });

  it('a Pod with another uid is a restart on empty data too: stopped, evidence recorded', () => {
    const m = member(memory, { podUID: 'pod-uid', memberID: ID, isVoter: true });
    const p = planMember(state(m, { pod: pod(m, { uid: 'new-pod' }) }));
    assert.equal(p.action.kind, 'delete-pod');
    assert.equal(p.status.dataLoss?.reason, 'MemoryLost');
  });

  it('the Pod it ran in, still there, is business as usual', () => {
    const m = member(memory, { podUID: 'pod-uid', memberID: ID, isVoter: true });
    const p = planMember(state(m, { pod: pod(m, { role: 'voter' }) }));
    assert.equal(p.action.kind, 'none');
  });

  it('before its first Pod is recorded it gets one', () => {
    const m = member(memory);
    assert.equal(planMember(state(m)).action.kind, 'create-pod');
  });
});

describe('needsEtcd', () => {
  const m = member();
  it('is false where etcd cannot change the plan', () => {
    assert.equal(needsEtcd({ member: member({}, undefined, true), cluster: cluster() }), false);
    assert.equal(needsEtcd({ member: m }), false);
    assert.equal(needsEtcd({ member: m, cluster: cluster({}, true) }), false);
    assert.equal(needsEtcd({ member: member({ initialCluster: '' }), cluster: cluster() }), false);
    assert.equal(needsEtcd({ member: member({ dormant: true }), cluster: cluster() }), false);
  });

  it('is true until the member is a recorded voter with the version of its current Pod', () => {
    assert.equal(needsEtcd({ member: m, cluster: cluster() }), true);
    const voter = member({}, { isVoter: true, memberID: ID, podUID: 'pod-uid', version: '3.5.16' });
    assert.equal(needsEtcd({ member: voter, cluster: cluster(), pod: pod(voter) }), false);
    assert.equal(needsEtcd({ member: voter, cluster: cluster(), pod: pod(voter, { uid: 'new' }) }), true);
    assert.equal(needsEtcd({ member: voter, cluster: cluster() }), false);
    const learner = member({}, { isVoter: false, role: 'learner', memberID: ID });
    assert.equal(needsEtcd({ member: learner, cluster: cluster(), pod: pod(learner) }), true);
  });
});

describe('podNotReadyMessage', () => {
  const m = member();
  it('names the waiting reason and restarts of the etcd container', () => {
    const p = pod(m, {
      status: {
        phase: 'Running',
        containerStatuses: [
          {
            name: 'etcd',
            ready: false,
            restartCount: 3,
            image: 'etcd',
            imageID: '',
            state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s' } },
            lastState: { terminated: { exitCode: 1, reason: 'Error' } },
          },
        ],
      },
    });
    assert.equal(
      podNotReadyMessage(p),
      'Pod demo-1 is Running; container etcd waiting: CrashLoopBackOff; restarted 3 times, last exit: Error (code 1)',
    );
  });

  it('says when etcd runs but its health check fails', () => {
    const p = pod(m, {
      status: {
        phase: 'Running',
        containerStatuses: [
          { name: 'etcd', ready: false, restartCount: 0, image: 'etcd', imageID: '', state: { running: {} } },
        ],
      },
    });
    assert.equal(
      podNotReadyMessage(p),
      'Pod demo-1 is Running; container etcd running but not ready (etcd /health failing)',
    );
  });

  it('carries the Pod-level reason (eviction, node shutdown)', () => {
    const p = pod(m, {
      status: {
        phase: 'Failed',
        reason: 'Terminated',
        message: 'Pod was terminated in response to imminent node shutdown.',
      },
    });
    assert.equal(
      podNotReadyMessage(p),
      'Pod demo-1 is Failed; Terminated: Pod was terminated in response to imminent node shutdown.',
    );
  });
});

describe('planMember: upgrades', () => {
  const withImage = (p: V1Pod, image: string): V1Pod => ({
    ...p,
    spec: {
      containers: [
        { name: 'etcd', image },
        { name: 'sidecar', image: 'busybox:1.36' },
      ],
    },
  });

  it('replaces a Pod that runs another release than the member asks for, keeping the volume', () => {
    const m = member({ version: '3.5.16' }, { memberID: ID, isVoter: true, version: '3.4.23' });
    const p = planMember(
      running(m, {
        pod: withImage(pod(m, { uid: 'old-pod' }), 'quay.io/coreos/etcd:v3.4.23'),
        self: self({ version: '3.4.23' }),
      }),
    );
    assert.deepEqual(p.action, {
      kind: 'delete-pod',
      name: 'demo-1',
      uid: 'old-pod',
      reason: 'upgrading demo-1 from etcd 3.4.23 to 3.5.16: replacing its Pod, keeping its data',
    });
    assert.equal(ready(p)?.reason, 'Upgrading');
    assert.deepEqual(
      p.events.map(e => e.reason),
      ['UpgradingMember'],
    );
  });

  it('forgets the version the old Pod reported once a new Pod stands in, so the new one is asked', () => {
    const m = member(
      { version: '3.5.16' },
      { memberID: ID, isVoter: true, version: '3.4.23', podUID: 'old-pod', podName: 'demo-1' },
    );
    const fresh = withImage(
      pod(m, { uid: 'new-pod', ready: false, role: 'voter' }),
      'quay.io/coreos/etcd:v3.5.16',
    );
    const p = planMember(running(m, { pod: fresh }));
    assert.equal(p.status.podUID, 'new-pod');
    assert.equal(p.status.version, undefined);
    assert.equal(
      needsEtcd({
        member: written(m, p),
        cluster: cluster(),
        pod: withImage(pod(m, { uid: 'new-pod', role: 'voter' }), 'x:v3.5.16'),
      }),
      true,
    );
  });

  it('leaves a Pod alone when its tag matches, whatever the repository or a -0 suffix', () => {
    const m = member({ version: '3.5.16' }, { memberID: ID, isVoter: true, version: '3.5.16' });
    for (const image of ['registry.local/etcd:v3.5.16', 'registry.k8s.io/etcd:3.5.16-0', 'etcd@sha256:abc']) {
      const p = planMember(running(m, { pod: withImage(pod(m, { role: 'voter' }), image) }));
      assert.notEqual(p.action.kind, 'delete-pod', image);
    }
  });
});
