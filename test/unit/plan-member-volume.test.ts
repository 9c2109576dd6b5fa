// A member's volume as reconcile-member decides it, in the words a person reads: the PVC created for
// a new member; the evidence when the PVC that held the data is gone, replaced or being deleted
// (exact message, Warning, the member's Pod stopped, never restarted under its member ID); a PVC of
// the same name that is not the member's is not taken as evidence. Written against the mutants
// StrykerJS left alive in shared/plan/member/volume-plan.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { EtcdMember, EtcdMemberStatus } from '../../shared/api/etcd-member.ts';
import { planMember } from '../../shared/plan/member/plan.ts';
import { ID, NOW, member, pod, pvc, ready, state, type Owner } from '../support/member-world.ts';

const RECORDED = 'pvc-uid-1';
const withUid = (p: V1PersistentVolumeClaim, uid: string): V1PersistentVolumeClaim => ({
  ...p,
  metadata: { ...p.metadata, uid },
});
const claimOf = (m: EtcdMember, uid: string, owner: Owner = 'ours', deleting = false) =>
  withUid(pvc(m, owner, deleting), uid);
const ran = (status: EtcdMemberStatus = {}) =>
  member({}, { isVoter: true, memberID: ID, pvcUID: RECORDED, ...status });
const consequence = (id = ` ${ID}`) =>
  `demo-1 is not restarted under its member ID${id} and is replaced by a new member once the others keep quorum`;

describe('a new member', () => {
  it('gets its PVC before its Pod, and says the Pod is not created yet', () => {
    const m = member();
    const plan = planMember(state(m));
    assert.equal(plan.action.kind, 'create-pvc');
    const r = ready(plan);
    assert.deepEqual(
      [r?.status, r?.reason, r?.message],
      ['False', 'PodNotReady', 'Pod demo-1 not created yet'],
    );
  });
});

describe('the PVC that held the data is lost', () => {
  const rows: {
    name: string;
    pvc?: (m: EtcdMember) => V1PersistentVolumeClaim;
    reason: string;
    loss: string;
  }[] = [
    {
      name: 'gone',
      reason: 'PVCMissing',
      loss: "PVC data-demo-1, which held demo-1's data, is gone",
    },
    {
      name: 'replaced by another of the same name',
      pvc: m => claimOf(m, 'pvc-uid-2'),
      reason: 'PVCReplaced',
      loss: "PVC data-demo-1 was replaced (UID pvc-uid-2, recorded pvc-uid-1): demo-1's data is not on it",
    },
    {
      name: 'being deleted',
      pvc: m => claimOf(m, RECORDED, 'ours', true),
      reason: 'PVCDeleted',
      loss: "PVC data-demo-1, which holds demo-1's data, is being deleted",
    },
  ];
  for (const row of rows) {
    it(`${row.name}, its Pod running: the Pod is stopped, the evidence recorded, a Warning`, () => {
      const m = ran();
      const plan = planMember(state(m, { pod: pod(m), ...(row.pvc && { pvc: row.pvc(m) }) }));
      const message = `${row.loss}; ${consequence()}`;
      assert.deepEqual(plan.action, {
        kind: 'delete-pod',
        name: 'demo-1',
        uid: 'pod-uid',
        reason: `${row.loss}: stopping demo-1`,
      });
      assert.deepEqual(plan.status.dataLoss, {
        reason: row.reason,
        message: row.loss,
        detectedAt: '2026-11-22T10:00:00Z',
      });
      const r = ready(plan);
      assert.deepEqual([r?.status, r?.reason, r?.message], ['False', 'DataLost', message]);
      assert.deepEqual(plan.events, [{ type: 'Warning', reason: 'MemberDataLost', message }]);
      assert.equal(plan.statusChanged, true);
    });
  }

  it('gone with its Pod: waits for the replacement, nothing retried', () => {
    const m = ran();
    const plan = planMember(state(m));
    const message = `PVC data-demo-1, which held demo-1's data, is gone; ${consequence()}`;
    assert.deepEqual(plan.action, { kind: 'wait', reason: `demo-1: ${message}`, retry: false });
  });

  it('a member that never learned its ID: the message names none', () => {
    const m = member({}, { pvcUID: RECORDED });
    const plan = planMember(state(m));
    assert.equal(
      ready(plan)?.message,
      `PVC data-demo-1, which held demo-1's data, is gone; ${consequence('')}`,
    );
  });

  it('recorded before, with Ready still saying True: the status is rewritten, no second Warning', () => {
    const loss = "PVC data-demo-1, which held demo-1's data, is gone";
    const m = ran({
      dataLoss: { reason: 'PVCMissing', message: loss, detectedAt: '2026-11-22T09:00:00Z' },
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'PodReady',
          message: 'etcd member is ready',
          lastTransitionTime: '2026-11-22T08:00:00Z',
        },
      ],
    });
    const plan = planMember(state(m, { now: NOW }));
    assert.equal(plan.statusChanged, true);
    assert.equal(ready(plan)?.reason, 'DataLost');
    assert.equal(plan.status.dataLoss?.detectedAt, '2026-11-22T09:00:00Z', 'the first detection is kept');
    assert.deepEqual(plan.events, []);
  });
  it('recorded, and status already says so: nothing is rewritten', () => {
    const m = ran();
    const first = planMember(state(m));
    const again = planMember(state({ ...m, status: first.status }));
    assert.equal(again.statusChanged, false);
    assert.deepEqual(again.events, []);
    assert.deepEqual(again.status.dataLoss, first.status.dataLoss);
  });
});

describe('a PVC of the same name that is not the member’s is not evidence of loss', () => {
  it("someone else's PVC: a conflict the person resolves; nothing recorded", () => {
    const m = ran();
    const plan = planMember(state(m, { pvc: claimOf(m, 'other-uid', 'foreign') }));
    assert.equal(plan.status.dataLoss, undefined);
    const message = 'PVC data-demo-1 exists but does not belong to demo-1; delete it to let the member start';
    assert.deepEqual(plan.action, { kind: 'wait', reason: message, retry: true });
    assert.equal(ready(plan)?.reason, 'VolumeConflict');
  });
  it("an earlier member's PVC being deleted: waited for, nothing recorded", () => {
    const m = ran();
    const plan = planMember(state(m, { pvc: claimOf(m, 'old-uid', 'stale', true) }));
    assert.equal(plan.status.dataLoss, undefined);
    assert.deepEqual(plan.action, {
      kind: 'wait',
      reason: 'PVC data-demo-1 is being deleted; a new one is created once it is gone',
      retry: false,
    });
  });
});

describe("etcd's own words and the PVC's evidence together", () => {
  const exited = (m: EtcdMember, log: string): V1Pod => {
    const p = pod(m, {
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'False' }],
        containerStatuses: [
          {
            name: 'etcd',
            image: 'quay.io/coreos/etcd:v3.5.16',
            imageID: '',
            ready: false,
            restartCount: 1,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 1, message: log } },
          },
        ],
      },
    });
    return { ...p, spec: { containers: [{ name: 'etcd', command: ['etcd', '--name=demo-1'] }] } };
  };

  it("etcd's refusal is the evidence recorded, even on a replaced PVC", () => {
    const m = ran({ hasData: true });
    const plan = planMember(
      state(m, {
        pod: exited(m, 'could not retrieve cluster information from the given URLs'),
        pvc: claimOf(m, 'pvc-uid-2'),
      }),
    );
    assert.equal(plan.status.dataLoss?.reason, 'DataDirEmpty');
    assert.equal(plan.action.kind, 'delete-pod');
  });

  it('a member with no status yet whose etcd finds its data corrupt: recorded, the message names no ID', () => {
    const m = member();
    const plan = planMember(state(m, { pod: exited(m, 'invalid database'), pvc: claimOf(m, RECORDED) }));
    assert.equal(plan.status.dataLoss?.reason, 'DataCorrupt');
    assert.match(ready(plan)?.message ?? '', new RegExp(`; ${consequence('')}$`));
  });
});
