// decideLease: what a replica does with the Lease it read (standalone/leader.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideLease, type Lease } from '../../standalone/leader.ts';

const lease = (holderIdentity: string, leaseDurationSeconds = 15): Lease => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name: 'etcdfn-standalone', namespace: 'ns' },
  spec: { holderIdentity, leaseDurationSeconds, renewTime: '2026-11-25T03:00:00.000000Z' },
});

describe('decideLease', () => {
  const cases: [string, Lease | undefined, number, ReturnType<typeof decideLease>][] = [
    ['no Lease yet: create it', undefined, 0, { kind: 'create' }],
    ['I hold it: renew', lease('me'), 0, { kind: 'renew' }],
    ['I hold it, even if unchanged for long: renew', lease('me'), 60_000, { kind: 'renew' }],
    ['released by its holder: take over at once', lease(''), 0, { kind: 'take-over', why: 'released' }],
    ['another holds it, just renewed: wait', lease('other'), 0, { kind: 'wait', holder: 'other' }],
    [
      'another holds it, unchanged just under the duration: wait',
      lease('other'),
      14_999,
      { kind: 'wait', holder: 'other' },
    ],
    [
      'another holds it, unchanged for the whole duration: take over',
      lease('other'),
      15_000,
      { kind: 'take-over', why: 'expired' },
    ],
    ['a shorter duration is honoured', lease('other', 3), 3_000, { kind: 'take-over', why: 'expired' }],
  ];
  for (const [what, observed, unchangedForMs, want] of cases) {
    it(what, () => assert.deepEqual(decideLease(observed, 'me', unchangedForMs), want));
  }
});
