// Which EtcdMember an event is about, for finalize-member: EtcdMember events only. Pure: the event
// is only a hint, the function reads the member itself (a deletion with a finalizer arrives as an
// update that sets deletionTimestamp).
import { API_VERSION, ETCD_MEMBER } from '../../shared/api/group.ts';
import type { OperatorEvent } from '../../shared/events/types.ts';

export const FUNCTION_NAME = 'finalize-member';

export type FinalizeTarget =
  | { kind: 'member'; namespace: string; name: string }
  /** Nothing for this function to do; answered done with `summary`. */
  | { kind: 'ignore'; summary: string };

export function finalizeTarget(event: OperatorEvent): FinalizeTarget {
  if (event.kind === 'tick') {
    return {
      kind: 'ignore',
      summary: `a tick: nothing to do for ${FUNCTION_NAME}, which follows EtcdMember events`,
    };
  }
  const { apiVersion, kind, namespace, name } = event.ref;
  if (apiVersion === API_VERSION && kind === ETCD_MEMBER.kind) return { kind: 'member', namespace, name };
  return { kind: 'ignore', summary: `${kind} (${apiVersion}) ${namespace}/${name}: not for this function` };
}
