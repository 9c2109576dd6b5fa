// The Event recorded once an add-member operation is carried out. A static bootstrap creates every
// initial member at once: its Event names them all, not only the first (which is no seed there).
import type { ClusterEvent } from './step.ts';
import type { AddMemberOperation } from '../../api/cluster-operation.ts';

export function claimEvent(op: AddMemberOperation): ClusterEvent {
  if (op.bootstrap && op.initialMembers && op.initialMembers.length > 1) {
    const names = op.initialMembers.join(', ');
    return {
      type: 'Normal',
      reason: 'SeedCreated',
      message: `created the initial members ${names} together (static bootstrap)`,
    };
  }
  if (op.bootstrap)
    return { type: 'Normal', reason: 'SeedCreated', message: `created seed member ${op.member}` };
  return { type: 'Normal', reason: 'MemberAdded', message: `added ${op.member} to etcd as a learner` };
}
