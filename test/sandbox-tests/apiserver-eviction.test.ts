// The sandbox API server's eviction decision: what a PodDisruptionBudget lets `kubectl drain` take.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evictionRefusal } from '../sandbox/apiserver/eviction.ts';
import { budgetOf } from '../sandbox/disruption.ts';
import type { KObject } from '../sandbox/apiserver/types.ts';

const NS = 'default';

function pod(
  name: string,
  opts: { ready?: boolean; phase?: string; deleting?: boolean; role?: string } = {},
): KObject {
  const { ready = true, phase = 'Running', deleting = false, role = 'voter' } = opts;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NS,
      labels: { 'etcdfn.io/cluster': 'demo', 'etcdfn.io/role': role },
      ...(deleting && { deletionTimestamp: '2026-11-22T00:00:00Z' }),
    },
    status: { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

function pdb(spec: Record<string, unknown>, name = 'demo'): KObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: NS },
    spec: { selector: { matchLabels: { 'etcdfn.io/cluster': 'demo', 'etcdfn.io/role': 'voter' } }, ...spec },
  };
}

const three = [pod('demo-0'), pod('demo-1'), pod('demo-2')];

describe('sandbox eviction against PodDisruptionBudgets', () => {
  it('lets one of three voters go under minAvailable 2, and refuses the next with the budget in the cause', () => {
    assert.equal(evictionRefusal(three[0], [pdb({ minAvailable: 2 })], three), undefined);
    const afterOne = [pod('demo-0', { deleting: true }), three[1], three[2]];
    const refusal = evictionRefusal(three[1], [pdb({ minAvailable: 2 })], afterOne);
    assert.equal(refusal?.code, 429);
    assert.equal(refusal?.reason, 'TooManyRequests');
    assert.equal(refusal?.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    assert.deepEqual(refusal?.details?.causes, [
      {
        reason: 'DisruptionBudget',
        message: 'The disruption budget demo needs 2 healthy pods and has 2 currently',
      },
    ]);
  });

  it('computes the figures for numbers and percentages (rounded up) of minAvailable and maxUnavailable', () => {
    const cases: [Record<string, unknown>, number][] = [
      [{ minAvailable: 2 }, 2],
      [{ minAvailable: '50%' }, 2],
      [{ minAvailable: '100%' }, 3],
      [{ maxUnavailable: 1 }, 2],
      [{ maxUnavailable: '34%' }, 1],
      [{}, 0],
    ];
    for (const [spec, desired] of cases) {
      const budget = budgetOf(pdb(spec), three);
      assert.deepEqual(
        [budget.expected, budget.healthy, budget.desired, budget.allowed],
        [3, 3, desired, 3 - desired],
        JSON.stringify(spec),
      );
    }
  });

  it('lets an unready Pod go while the budget is met, or always with AlwaysAllow', () => {
    const pods = [pod('demo-0'), pod('demo-1'), pod('demo-2', { ready: false })];
    assert.equal(evictionRefusal(pods[2], [pdb({ minAvailable: 2 })], pods), undefined);
    assert.equal(evictionRefusal(pods[2], [pdb({ minAvailable: 3 })], pods)?.code, 429);
    assert.equal(
      evictionRefusal(pods[2], [pdb({ minAvailable: 3, unhealthyPodEvictionPolicy: 'AlwaysAllow' })], pods),
      undefined,
    );
  });

  it('ignores budgets for Pods that are Pending, finished or already being deleted, and Pods not selected', () => {
    const strict = [pdb({ minAvailable: 3 })];
    for (const p of [
      pod('a', { phase: 'Pending' }),
      pod('b', { phase: 'Succeeded' }),
      pod('c', { deleting: true }),
    ]) {
      assert.equal(evictionRefusal(p, strict, [...three, p]), undefined, `pod ${p.metadata.name ?? ''}`);
    }
    const learner = pod('demo-3', { role: 'learner' });
    assert.equal(evictionRefusal(learner, strict, [...three, learner]), undefined);
  });

  it('refuses a Pod under two budgets, as the real server does', () => {
    const refusal = evictionRefusal(
      three[0],
      [pdb({ minAvailable: 1 }), pdb({ minAvailable: 1 }, 'other')],
      three,
    );
    assert.equal(refusal?.code, 500);
    assert.match(refusal?.message ?? '', /more than one PodDisruptionBudget/);
  });
});
