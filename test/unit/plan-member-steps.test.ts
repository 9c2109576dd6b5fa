// planMember as a table: for each world, the exact step (with the reason the invocation reports),
// the Ready condition a person reads and the Events. Written against the mutants StrykerJS left
// alive (npm run mutation): each row pins one decision or one word a user sees.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planMember, type MemberPlan, type MemberState } from '../../shared/plan/member/plan.ts';
import { cluster, member, pod, pvc, ready, running, state } from '../support/member-world.ts';

interface Row {
  name: string;
  world: () => MemberState;
  /** The action without its built objects (a Pod or PVC is checked elsewhere). */
  action: Record<string, unknown>;
  /** [status, reason, message] of Ready, or undefined when the status is left as it was. */
  ready?: [string, string, string];
  events?: MemberPlan['events'];
  statusChanged?: boolean;
}

const memory = { storage: { size: '1Gi', medium: 'Memory' as const } };

const rows: Row[] = [
  {
    name: 'a member being deleted',
    world: () => running(member({}, undefined, true)),
    action: { kind: 'none', reason: "demo-1 is being deleted: finalize-member's job" },
    statusChanged: false,
  },
  {
    name: 'a member whose cluster is gone',
    world: () => ({ now: new Date(0), member: member() }),
    action: { kind: 'none', reason: 'EtcdCluster demo not found: demo-1 is garbage-collected with it' },
    statusChanged: false,
  },
  {
    name: 'a member of a cluster being deleted',
    world: () => state(member(), { cluster: cluster({}, true) }),
    action: { kind: 'none', reason: 'EtcdCluster demo is being deleted' },
    statusChanged: false,
  },
  {
    name: 'not wired yet, no PVC: the PVC is created while it waits to join (no Pod)',
    world: () => state(member({ initialCluster: '' })),
    action: { kind: 'create-pvc' },
    ready: ['False', 'WaitingToJoin', 'not yet added to etcd'],
  },
  {
    name: 'not wired yet, with its PVC: nothing (no Pod)',
    world: () => running(member({ initialCluster: '' })),
    action: { kind: 'none', reason: 'demo-1 is not yet added to etcd; reconcile-cluster wires it' },
    ready: ['False', 'WaitingToJoin', 'not yet added to etcd'],
  },
  {
    name: 'not wired yet, Memory medium: nothing (no volume to prepare, no Pod)',
    world: () => state(member({ initialCluster: '', ...memory })),
    action: { kind: 'none', reason: 'demo-1 is not yet added to etcd; reconcile-cluster wires it' },
    ready: ['False', 'WaitingToJoin', 'not yet added to etcd'],
  },
  {
    name: 'paused with its Pod: the Pod is deleted, the data kept',
    world: () => {
      const m = member({ dormant: true });
      return running(m, { pod: pod(m) });
    },
    action: {
      kind: 'delete-pod',
      name: 'demo-1',
      uid: 'pod-uid',
      reason: 'demo-1 is paused (spec.dormant): deleting its Pod, keeping its data',
    },
    ready: ['False', 'Paused', 'paused; Pod deleted, data kept on data-demo-1'],
  },
  {
    name: 'a paused Memory member says its data is gone',
    world: () => state(member({ dormant: true, ...memory })),
    action: { kind: 'none', reason: 'demo-1 is paused' },
    ready: ['False', 'Paused', 'paused; Pod deleted, its data was in memory and is gone'],
  },
  {
    name: 'paused, with a foreign Pod of its name: left alone',
    world: () => {
      const m = member({ dormant: true });
      return running(m, { pod: pod(m, { owner: 'foreign' }) });
    },
    action: { kind: 'none', reason: 'demo-1 is paused' },
  },
  {
    name: 'paused, its Pod terminating',
    world: () => {
      const m = member({ dormant: true });
      return running(m, { pod: pod(m, { deleting: true }) });
    },
    action: { kind: 'wait', reason: 'Pod demo-1 is being deleted', retry: false },
  },
  {
    // As a PVC member's: evidence in status, and reconcile-cluster replaces it under its quorum guard.
    name: 'a Memory member whose Pod is gone records its data as lost, with a Warning',
    world: () => state(member(memory, { podUID: 'pod-uid' })),
    action: {
      kind: 'wait',
      reason:
        'demo-1: demo-1 kept its data in memory and its Pod is gone; demo-1 is not restarted under its member ID and is replaced by a new member once the others keep quorum',
      retry: false,
    },
    ready: [
      'False',
      'DataLost',
      'demo-1 kept its data in memory and its Pod is gone; demo-1 is not restarted under its member ID and is replaced by a new member once the others keep quorum',
    ],
    events: [
      {
        type: 'Warning',
        reason: 'MemberDataLost',
        message:
          'demo-1 kept its data in memory and its Pod is gone; demo-1 is not restarted under its member ID and is replaced by a new member once the others keep quorum',
      },
    ],
  },
  {
    name: 'a Memory member whose Pod was replaced: that Pod is stopped, the member not restarted',
    world: () => {
      const m = member(memory, { podUID: 'old-pod-uid' });
      return state(m, { pod: pod(m) });
    },
    action: {
      kind: 'delete-pod',
      name: 'demo-1',
      uid: 'pod-uid',
      reason: 'demo-1 kept its data in memory and its Pod was replaced: stopping demo-1',
    },
  },
  {
    name: 'a Memory member whose Pod of the recorded uid is stale (not ours) has lost its data too',
    world: () => {
      const m = member(memory, { podUID: 'pod-uid' });
      return state(m, { pod: pod(m, { owner: 'stale' }) });
    },
    action: {
      kind: 'wait',
      reason:
        'demo-1: demo-1 kept its data in memory and its Pod was replaced; demo-1 is not restarted under its member ID and is replaced by a new member once the others keep quorum',
      retry: false,
    },
    events: [
      {
        type: 'Warning',
        reason: 'MemberDataLost',
        message:
          'demo-1 kept its data in memory and its Pod was replaced; demo-1 is not restarted under its member ID and is replaced by a new member once the others keep quorum',
      },
    ],
  },
  {
    name: 'the volume being deleted is waited for',
    world: () => {
      const m = member();
      return state(m, { pvc: pvc(m, 'ours', true) });
    },
    action: {
      kind: 'wait',
      reason: 'PVC data-demo-1 is being deleted; a new one is created once it is gone',
      retry: false,
    },
    ready: ['False', 'PodNotReady', 'PVC data-demo-1 is being deleted; a new one is created once it is gone'],
  },
  {
    name: 'a stale volume of the same name: never deleted, the member says why and waits for the event',
    world: () => {
      const m = member();
      return state(m, { pvc: pvc(m, 'stale') });
    },
    action: {
      kind: 'wait',
      reason:
        'PVC data-demo-1 exists but does not belong to demo-1 (left by an earlier member of the same name?); delete it to let the member start',
      retry: false,
    },
    ready: [
      'False',
      'VolumeConflict',
      'PVC data-demo-1 exists but does not belong to demo-1 (left by an earlier member of the same name?); delete it to let the member start',
    ],
  },
  {
    name: 'a foreign volume of the same name: never deleted, retried (no event will come)',
    world: () => {
      const m = member();
      return state(m, { pvc: pvc(m, 'foreign') });
    },
    action: {
      kind: 'wait',
      reason: 'PVC data-demo-1 exists but does not belong to demo-1; delete it to let the member start',
      retry: true,
    },
  },
  {
    name: 'its own Pod terminating',
    world: () => {
      const m = member();
      return running(m, { pod: pod(m, { deleting: true }) });
    },
    action: {
      kind: 'wait',
      reason: 'Pod demo-1 is being deleted; it is recreated once it is gone',
      retry: false,
    },
    ready: ['False', 'PodNotReady', 'Pod demo-1 is being deleted; it is recreated once it is gone'],
  },
  {
    name: 'a foreign Pod of its name',
    world: () => {
      const m = member();
      return running(m, { pod: pod(m, { owner: 'foreign' }) });
    },
    action: {
      kind: 'wait',
      reason: "a Pod named demo-1 exists and is not etcdfn's; delete or rename it to let the member start",
      retry: true,
    },
    ready: [
      'False',
      'PodConflict',
      "a Pod named demo-1 exists and is not etcdfn's; delete or rename it to let the member start",
    ],
  },
  {
    name: 'a stale Pod of its name being deleted is waited for',
    world: () => {
      const m = member();
      return running(m, { pod: pod(m, { owner: 'stale', deleting: true }) });
    },
    action: {
      kind: 'wait',
      reason: 'Pod demo-1 belongs to an earlier member of the same name; it is replaced',
      retry: false,
    },
    ready: [
      'False',
      'PodConflict',
      'Pod demo-1 belongs to an earlier member of the same name; it is replaced',
    ],
  },
  {
    name: 'ready, but etcd has not reported the member ID: retried',
    world: () => {
      const m = member({}, { isVoter: true, role: 'voter' });
      return running(m, { pod: pod(m, { role: 'voter' }) });
    },
    action: {
      kind: 'wait',
      reason: 'demo-1 is ready but etcd did not report its member ID yet',
      retry: true,
    },
  },
];

describe('planMember: each world, its step and the words a user reads', () => {
  for (const row of rows) {
    it(row.name, () => {
      const plan = planMember(row.world());
      const { pod: _pod, pvc: _pvc, ...action } = plan.action as Record<string, unknown>;
      assert.deepEqual(action, row.action);
      if (row.ready) {
        const r = ready(plan);
        assert.deepEqual([r?.status, r?.reason, r?.message], row.ready);
      }
      if (row.events) assert.deepEqual(plan.events, row.events);
      else if (plan.action.kind !== 'delete-pod') assert.deepEqual(plan.events, []);
      if (row.statusChanged !== undefined) assert.equal(plan.statusChanged, row.statusChanged);
    });
  }
});

describe('planMember: a Pod that runs its course', () => {
  it('a terminal Pod is replaced, and said so in an Event', () => {
    const m = member();
    const plan = planMember(running(m, { pod: pod(m, { phase: 'Failed', ready: false }) }));
    assert.equal(plan.action.kind, 'delete-pod');
    const reason = (plan.action as { reason: string }).reason;
    assert.match(reason, /; a kubelet does not restart it, so it is replaced$/);
    assert.deepEqual(plan.events, [{ type: 'Normal', reason: 'ReplacingPod', message: reason }]);
    assert.deepEqual(
      [ready(plan)?.status, ready(plan)?.reason, ready(plan)?.message],
      ['False', 'PodNotReady', reason],
    );
  });

  it('a Pod not ready yet: nothing to do, waiting said in the reason', () => {
    const m = member({}, { isVoter: true, role: 'voter', memberID: 'a1' });
    const plan = planMember(running(m, { pod: pod(m, { ready: false, role: 'voter' }) }));
    assert.deepEqual(plan.action, { kind: 'none', reason: 'demo-1: waiting for its Pod to be ready' });
  });
});
