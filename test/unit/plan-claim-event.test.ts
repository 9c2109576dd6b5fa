// The Event a carried-out add-member operation records: a static bootstrap names every initial
// member it created, a seed names itself, a learner says it joined as a learner.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { claimEvent } from '../../shared/plan/cluster/claim-event.ts';

const startedAt = '2026-11-27T00:00:00Z';

describe('claimEvent', () => {
  const cases = [
    {
      name: 'static bootstrap of three: every initial member named',
      op: {
        type: 'add-member' as const,
        member: 'demo-0',
        bootstrap: true,
        initialMembers: ['demo-0', 'demo-1', 'demo-2'],
        startedAt,
      },
      reason: 'SeedCreated',
      message: 'created the initial members demo-0, demo-1, demo-2 together (static bootstrap)',
    },
    {
      name: 'a lone seed (one member, or a restore)',
      op: { type: 'add-member' as const, member: 'demo-0', bootstrap: true, startedAt },
      reason: 'SeedCreated',
      message: 'created seed member demo-0',
    },
    {
      name: 'a one-name initial list is a seed',
      op: {
        type: 'add-member' as const,
        member: 'demo-0',
        bootstrap: true,
        initialMembers: ['demo-0'],
        startedAt,
      },
      reason: 'SeedCreated',
      message: 'created seed member demo-0',
    },
    {
      name: 'a member joining a formed cluster',
      op: { type: 'add-member' as const, member: 'demo-3', bootstrap: false, startedAt },
      reason: 'MemberAdded',
      message: 'added demo-3 to etcd as a learner',
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      assert.deepEqual(claimEvent(c.op), { type: 'Normal', reason: c.reason, message: c.message });
    });
});
