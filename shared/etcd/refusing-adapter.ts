// An adapter that dials nothing: every call fails with the same message. Used when a cluster's
// access cannot be resolved (a Secret missing or incomplete), so callers see an ordinary failure.
import type { EtcdAdapter } from './adapter.ts';

export function refusingAdapter(message: string): EtcdAdapter {
  const fail = () => Promise.resolve({ kind: 'error' as const, message });
  return {
    listMembers: fail,
    addLearner: fail,
    promote: fail,
    remove: fail,
    moveLeader: fail,
    memberStatus: fail,
    clusterStatus: endpoints =>
      Promise.resolve(endpoints.map(endpoint => ({ kind: 'error' as const, message, endpoint }))),
    snapshot: fail,
    listAlarms: fail,
    disarmAlarm: fail,
    compact: fail,
    defragment: fail,
    healthRead: fail,
    storageState: fail,
    enableDowngrade: fail,
  };
}
