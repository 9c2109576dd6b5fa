// The one generic apply of owned objects (shared/reconcile/owned-apply.ts): each change goes to the
// one KubeObjects call it names, with what was planned and nothing else; a kind or verb outside the
// written-out list throws before any call (a bug, never a write); the answer comes back as the API
// server gave it. The changes themselves: test/unit/plan-owned-changes.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject, KubeObjects } from '../../shared/k8s/objects.ts';
import type { ObjectChange } from '../../shared/plan/owned/types.ts';
import { applyChange } from '../../shared/reconcile/owned-apply.ts';

/** Records each KubeObjects call and answers it with `answer`. */
function recorder(answer: unknown = { kind: 'done' }): {
  kube: KubeObjects;
  calls: [string, ...unknown[]][];
} {
  const calls: [string, ...unknown[]][] = [];
  const record =
    (method: string) =>
    (...args: unknown[]) => {
      calls.push([method, ...args]);
      return Promise.resolve(answer);
    };
  const kube = {
    create: record('create'),
    replace: record('replace'),
    mergePatch: record('mergePatch'),
    delete: record('delete'),
  } as unknown as KubeObjects;
  return { kube, calls };
}

const object = (kind: string, name = 'x'): KubeObject => ({
  apiVersion: 'v1',
  kind,
  metadata: { name, namespace: 'team-a', resourceVersion: '7' },
});
const ref = (kind: string) => ({ apiVersion: 'v1', kind, namespace: 'team-a', name: 'x' });

describe('applyChange', () => {
  const allowed: [ObjectChange['kind'], string[], string][] = [
    [
      'create',
      ['Service', 'PodDisruptionBudget', 'NetworkPolicy', 'PingSource', 'Secret', 'Certificate'],
      'create',
    ],
    ['patch', ['Service', 'PodDisruptionBudget', 'NetworkPolicy'], 'mergePatch'],
    ['replace', ['PingSource', 'Secret', 'Certificate'], 'replace'],
    ['delete', ['PodDisruptionBudget', 'NetworkPolicy', 'PingSource'], 'delete'],
  ];
  const change = (verb: ObjectChange['kind'], kind: string): ObjectChange =>
    verb === 'create' || verb === 'replace'
      ? { kind: verb, object: object(kind) }
      : verb === 'patch'
        ? { kind: verb, ref: ref(kind), patch: { spec: { a: 1 } } }
        : { kind: verb, ref: ref(kind) };
  const KINDS = [
    'Service',
    'PodDisruptionBudget',
    'NetworkPolicy',
    'PingSource',
    'Secret',
    'Certificate',
    'Pod',
  ];

  for (const [verb, kinds, method] of allowed) {
    it(`${verb}: ${kinds.join(', ')} through KubeObjects.${method}; any other kind throws before a call`, async () => {
      for (const kind of KINDS) {
        const { kube, calls } = recorder({ kind: 'answered' });
        if (kinds.includes(kind)) {
          assert.deepEqual(await applyChange(kube, change(verb, kind)), { kind: 'answered' }, kind);
          assert.equal(calls.length, 1, kind);
          assert.equal(calls[0][0], method, kind);
        } else {
          await assert.rejects(applyChange(kube, change(verb, kind)), /not a kind etcdfn/, `${verb} ${kind}`);
          assert.deepEqual(calls, [], `${verb} ${kind}`);
        }
      }
    });
  }

  it('passes what was planned as it is: the object, the ref and patch, the delete precondition', async () => {
    const { kube, calls } = recorder();
    const secret = object('Secret');
    await applyChange(kube, { kind: 'create', object: secret });
    await applyChange(kube, { kind: 'replace', object: secret });
    await applyChange(kube, { kind: 'patch', ref: ref('Service'), patch: { spec: { a: 1 } } });
    await applyChange(kube, { kind: 'delete', ref: ref('PingSource'), uid: 'u-1' });
    await applyChange(kube, { kind: 'delete', ref: ref('NetworkPolicy') });
    assert.deepEqual(calls, [
      ['create', secret],
      ['replace', secret],
      ['mergePatch', ref('Service'), { spec: { a: 1 } }],
      ['delete', ref('PingSource'), { uid: 'u-1' }],
      ['delete', ref('NetworkPolicy'), {}],
    ]);
  });
});
