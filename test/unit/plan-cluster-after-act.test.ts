// The status a reconcile-cluster step leaves once it ran (shared/plan/cluster/after-act.ts): whether
// auth runs after it, auth's record in status.authEnabled, and a step to be retried saying why in
// Progressing. The adapter writes what these return and edits nothing itself.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import type { Condition } from '../../shared/conditions.ts';
import {
  authDue,
  statusAfterAct,
  withRetrying,
  type ActOutcome,
} from '../../shared/plan/cluster/after-act.ts';
import type { ClusterPlan } from '../../shared/plan/cluster/step.ts';

const NOW = new Date('2026-11-29T09:00:00Z');
const EARLIER = '2026-11-29T08:00:00Z';
const condition = (type: string, status: Condition['status'], message = 'm'): Condition => ({
  type,
  status,
  reason: type === 'Progressing' ? 'AddingMember' : 'R',
  message,
  lastTransitionTime: EARLIER,
});

describe('authDue: auth runs only after a step with nothing left to do on an Available cluster', () => {
  const plan = (kind: 'none' | 'wait', conditions?: Condition[]): ClusterPlan => ({
    action: kind === 'none' ? { kind } : { kind, reason: 'r' },
    status: conditions ? { conditions } : {},
    events: [],
  });
  const rows: [string, ClusterPlan, boolean][] = [
    ['nothing to do, Available', plan('none', [condition('Available', 'True')]), true],
    [
      'nothing to do, Available among the other conditions (Progressing False: reconciled)',
      plan('none', [condition('Available', 'True'), condition('Progressing', 'False')]),
      true,
    ],
    ['nothing to do, not Available', plan('none', [condition('Available', 'False')]), false],
    ['nothing to do, no conditions yet', plan('none'), false],
    ['only Progressing True', plan('none', [condition('Progressing', 'True')]), false],
    ['a wait, Available', plan('wait', [condition('Available', 'True')]), false],
  ];
  for (const [name, p, due] of rows) it(name, () => assert.equal(authDue(p), due));
});

describe('statusAfterAct', () => {
  const planned = (): EtcdClusterStatus => ({
    phase: 'Running',
    authEnabled: true,
    conditions: [condition('Available', 'True'), condition('Progressing', 'True', 'adding member demo-2')],
  });
  const progressing = (s: EtcdClusterStatus) => s.conditions?.find(c => c.type === 'Progressing');
  const rows: {
    name: string;
    outcome: ActOutcome;
    authEnabled: boolean | undefined;
    message: string;
  }[] = [
    {
      name: 'finished, no auth: as planned',
      outcome: {},
      authEnabled: true,
      message: 'adding member demo-2',
    },
    {
      name: 'auth ran and says off',
      outcome: { authEnabled: false },
      authEnabled: false,
      message: 'adding member demo-2',
    },
    {
      name: 'the step is retried: Progressing says why',
      outcome: { retrying: 'etcd did not answer' },
      authEnabled: true,
      message: 'adding member demo-2; retrying: etcd did not answer',
    },
    {
      name: 'auth failed: its record kept, and the retry said',
      outcome: { authEnabled: true, retrying: 'auth: enable-auth: refused' },
      authEnabled: true,
      message: 'adding member demo-2; retrying: auth: enable-auth: refused',
    },
  ];
  for (const row of rows)
    it(row.name, () => {
      const status = statusAfterAct(planned(), row.outcome, NOW);
      assert.equal(status.authEnabled, row.authEnabled);
      assert.equal(progressing(status)?.message, row.message);
      assert.equal(progressing(status)?.lastTransitionTime, EARLIER, 'still True: no transition');
      assert.equal(status.phase, 'Running');
    });

  it('nothing to add: the planned status itself', () => {
    const p = planned();
    assert.equal(statusAfterAct(p, {}, NOW), p);
  });
  it('does not change the planned status it is given', () => {
    const p = planned();
    statusAfterAct(p, { authEnabled: false, retrying: 'x' }, NOW);
    assert.deepEqual(p, planned());
  });
  it('no Progressing condition to say it in: unchanged', () => {
    const s: EtcdClusterStatus = { conditions: [condition('Available', 'True')] };
    assert.equal(withRetrying(s, 'x', NOW), s);
    assert.equal(withRetrying({}, 'x', NOW).conditions, undefined);
  });
});
