// The status the sandbox's disruption controller writes to a PodDisruptionBudget (pure).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../sandbox/apiserver/types.ts';
import { pdbStatus, pdbStatusChanged, type PdbStatus } from '../sandbox/disruption.ts';

const NS = 'default';
const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:01:00Z';

function pod(
  name: string,
  opts: { ready?: boolean; phase?: string; deleting?: boolean; ns?: string } = {},
): KObject {
  const { ready = true, phase = 'Running', deleting = false, ns = NS } = opts;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ns,
      labels: { app: 'demo' },
      ...(deleting && { deletionTimestamp: T0 }),
    },
    status: { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

function pdb(spec: Record<string, unknown>, status?: PdbStatus, generation = 1): KObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'demo', namespace: NS, generation },
    spec: { selector: { matchLabels: { app: 'demo' } }, ...spec },
    ...(status && { status }),
  };
}

const three = [pod('demo-0'), pod('demo-1'), pod('demo-2')];
// What the API server puts on a new PDB (builtin.ts).
const created = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };

describe('sandbox disruption controller: PDB status', () => {
  it('3 ready Pods under minAvailable 2: one disruption allowed, DisruptionAllowed True/SufficientPods', () => {
    const status = pdbStatus(pdb({ minAvailable: 2 }, created), three, T0);
    assert.deepEqual(status, {
      observedGeneration: 1,
      disruptionsAllowed: 1,
      currentHealthy: 3,
      desiredHealthy: 2,
      expectedPods: 3,
      conditions: [
        {
          type: 'DisruptionAllowed',
          status: 'True',
          reason: 'SufficientPods',
          message: '',
          lastTransitionTime: T0,
          observedGeneration: 1,
        },
      ],
    });
  });

  it('counts Pods being deleted or not Ready as expected but not healthy, and ignores finished Pods and other namespaces', () => {
    const pods = [
      pod('demo-0'),
      pod('demo-1'),
      pod('demo-2', { deleting: true }),
      pod('demo-3', { ready: false }),
      pod('demo-4', { phase: 'Succeeded', ready: false }),
      pod('demo-5', { ns: 'other' }),
    ];
    const status = pdbStatus(pdb({ minAvailable: 2 }), pods, T0);
    assert.equal(status.expectedPods, 4);
    assert.equal(status.currentHealthy, 2);
    assert.equal(status.desiredHealthy, 2);
    assert.equal(status.disruptionsAllowed, 0);
    assert.deepEqual(
      status.conditions?.map(c => [c.type, c.status, c.reason]),
      [['DisruptionAllowed', 'False', 'InsufficientPods']],
    );
  });

  it('handles maxUnavailable and percentages (rounded up), and a budget with no Pods', () => {
    assert.equal(pdbStatus(pdb({ maxUnavailable: 1 }), three, T0).desiredHealthy, 2);
    assert.equal(pdbStatus(pdb({ maxUnavailable: 1 }), three, T0).disruptionsAllowed, 1);
    assert.equal(pdbStatus(pdb({ minAvailable: '50%' }), three, T0).desiredHealthy, 2);
    assert.equal(pdbStatus(pdb({ maxUnavailable: '34%' }), three, T0).desiredHealthy, 1);
    const none = pdbStatus(pdb({ minAvailable: 1 }), [], T0);
    assert.deepEqual([none.expectedPods, none.currentHealthy, none.disruptionsAllowed], [0, 0, 0]);
    assert.equal(none.conditions?.[0].reason, 'InsufficientPods');
  });

  it('keeps lastTransitionTime while the condition holds, moves it when the status flips', () => {
    const first = pdbStatus(pdb({ minAvailable: 2 }, created), three, T0);
    const same = pdbStatus(pdb({ minAvailable: 2 }, first), three, T1);
    assert.equal(same.conditions?.[0].lastTransitionTime, T0);
    const flipped = pdbStatus(pdb({ minAvailable: 2 }, first), three.slice(0, 2), T1);
    assert.deepEqual(
      flipped.conditions?.map(c => [c.status, c.reason, c.lastTransitionTime]),
      [['False', 'InsufficientPods', T1]],
    );
  });

  it('keeps other conditions and disruptedPods as they are', () => {
    const other = {
      type: 'Other',
      status: 'True' as const,
      reason: 'X',
      message: 'm',
      lastTransitionTime: T0,
    };
    const status = pdbStatus(
      pdb({ minAvailable: 2 }, { ...created, conditions: [other], disruptedPods: { 'demo-0': T0 } }),
      three,
      T1,
    );
    assert.deepEqual(status.disruptedPods, { 'demo-0': T0 });
    assert.deepEqual(status.conditions?.[0], other);
    assert.equal(status.conditions?.[1].type, 'DisruptionAllowed');
  });

  it('asks for a write only when something changed: figures, generation or the condition', () => {
    const first = pdbStatus(pdb({ minAvailable: 2 }, created), three, T0);
    assert.equal(pdbStatusChanged(pdb({ minAvailable: 2 }, created), first), true);
    // Steady state: the same Pods a minute later need no write.
    const written = pdb({ minAvailable: 2 }, first);
    assert.equal(pdbStatusChanged(written, pdbStatus(written, three, T1)), false);
    // One Pod fewer.
    assert.equal(pdbStatusChanged(written, pdbStatus(written, three.slice(0, 2), T1)), true);
    // A spec change (generation 2) with the same figures still moves observedGeneration.
    const edited = pdb({ minAvailable: 2 }, first, 2);
    const next = pdbStatus(edited, three, T1);
    assert.equal(pdbStatusChanged(edited, next), true);
    assert.equal(next.observedGeneration, 2);
    assert.equal(next.conditions?.[0].observedGeneration, 2);
    assert.equal(next.conditions?.[0].lastTransitionTime, T0);
  });
});
