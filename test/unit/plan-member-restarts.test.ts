// The member's record of its etcd exits (shared/plan/member/restarts.ts): each exit noted once as
// the Pod shows it, the newest five kept, started again with a new Pod, unchanged (so no status
// write) when nothing new is seen; and the crash-loop rule read from it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { MemberRestarts } from '../../shared/api/etcd-member.ts';
import { isCrashLoop, recordRestarts } from '../../shared/plan/member/restarts.ts';
import { planMember } from '../../shared/plan/member/plan.ts';
import { ID, member, pod, running } from '../support/member-world.ts';

const T = (s: number) => new Date(Date.UTC(2026, 10, 22, 10, 0, s));
const iso = (s: number) => T(s).toISOString();

function podWith(etcd: Partial<V1ContainerStatus>, uid = 'pod-uid'): V1Pod {
  const m = member();
  return {
    ...pod(m, { uid }),
    status: {
      phase: 'Running',
      containerStatuses: [
        { name: 'etcd', image: 'etcd', imageID: '', ready: false, restartCount: 0, ...etcd },
      ],
    },
  };
}
const exited = (restarts: number, at: number, code = 1, now: 'waiting' | 'terminated' = 'waiting') =>
  podWith({
    restartCount: restarts,
    ...(now === 'terminated'
      ? { state: { terminated: { exitCode: code, finishedAt: T(at) } } }
      : {
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: { exitCode: code, finishedAt: T(at) } },
        }),
  });
const record = (restartCount: number, ...exits: [number, number][]): MemberRestarts => ({
  podUID: 'pod-uid',
  restartCount,
  exits: exits.map(([s, exitCode]) => ({ at: iso(s), exitCode })),
});

describe('recordRestarts: the exits seen in the current Pod', () => {
  const rows: [string, MemberRestarts | undefined, V1Pod | undefined, MemberRestarts | undefined][] = [
    ['no Pod: the record is kept', record(1, [0, 1]), undefined, record(1, [0, 1])],
    ['a Pod that never exited: no record', undefined, podWith({ state: { running: {} } }), undefined],
    ['the first exit, seen as it happens', undefined, exited(0, 5, 1, 'terminated'), record(0, [5, 1])],
    [
      'the same exit seen again after the restart: not counted twice',
      record(0, [5, 1]),
      exited(1, 5),
      record(1, [5, 1]),
    ],
    ['a new exit is added', record(1, [5, 1]), exited(2, 20, 2), record(2, [5, 1], [20, 2])],
    [
      'the newest five are kept',
      record(5, [1, 1], [2, 1], [3, 1], [4, 1], [5, 1]),
      exited(6, 6),
      record(6, [2, 1], [3, 1], [4, 1], [5, 1], [6, 1]),
    ],
    [
      'a new Pod starts the record again',
      record(3, [1, 1], [2, 1], [3, 1]),
      { ...exited(1, 9), metadata: { uid: 'new-pod' } },
      { podUID: 'new-pod', restartCount: 1, exits: [{ at: iso(9), exitCode: 1 }] },
    ],
    [
      'a new Pod that has not exited: no record',
      record(3, [1, 1]),
      podWith({ state: { running: {} } }, 'new-pod'),
      undefined,
    ],
    [
      'nothing new: the very same record (no status write)',
      record(2, [5, 1], [20, 2]),
      exited(2, 20, 2),
      record(2, [5, 1], [20, 2]),
    ],
  ];
  for (const [what, before, p, after] of rows)
    it(what, () => assert.deepEqual(recordRestarts(before, p), after));
});

describe('isCrashLoop', () => {
  const rows: [string, MemberRestarts | undefined, boolean][] = [
    ['no record', undefined, false],
    [
      '5 failures with code 1 within 4 minutes',
      record(5, [0, 1], [60, 1], [120, 1], [180, 1], [240, 1]),
      true,
    ],
    ['4 failures', record(4, [0, 1], [60, 1], [120, 1], [180, 1]), false],
    ['5 failures over 10 minutes and 1 s', record(5, [0, 1], [150, 1], [300, 1], [450, 1], [601, 1]), false],
    ['5 exits with two codes', record(5, [0, 1], [10, 1], [20, 137], [30, 1], [40, 1]), false],
    ['5 clean exits (code 0)', record(5, [0, 0], [10, 0], [20, 0], [30, 0], [40, 0]), false],
  ];
  for (const [what, r, loop] of rows) it(what, () => assert.equal(isCrashLoop(r), loop));
});

describe('planMember keeps the record in status, written only when it changes', () => {
  it('a new exit is written; seeing the same Pod again writes nothing', () => {
    const m = member(
      {},
      { memberID: ID, isVoter: true, role: 'voter', podName: 'demo-1', podUID: 'pod-uid' },
    );
    const first = planMember(running(m, { pod: exited(1, 5) }));
    assert.deepEqual(first.status.restarts, record(1, [5, 1]));
    assert.equal(first.statusChanged, true);
    const again = planMember(running({ ...m, status: first.status }, { pod: exited(1, 5) }));
    assert.equal(again.statusChanged, false);
  });
});
