// Which EtcdMember an event is about, for reconcile-member. Pure: the event is only a hint, the
// function reads the member itself. A Pod is named like its member; a PVC `data-<member>`.
import { API_VERSION, ETCD_MEMBER } from '../../shared/api/group.ts';
import type { OperatorEvent } from '../../shared/events/types.ts';

export const FUNCTION_NAME = 'reconcile-member';

export type MemberTarget =
  | { kind: 'member'; namespace: string; name: string }
  /** The resync tick: every member, so one whose Pod events were lost still gets its Pod back. */
  | { kind: 'all-members' }
  /** Nothing for this function to do; answered done with `summary`. */
  | { kind: 'ignore'; summary: string };

const PVC_PREFIX = 'data-';

export function memberTarget(event: OperatorEvent): MemberTarget {
  if (event.kind === 'tick') return { kind: 'all-members' };
  const { apiVersion, kind, namespace, name } = event.ref;
  if (apiVersion === API_VERSION && kind === ETCD_MEMBER.kind) return member(namespace, name);
  // A deleted Pod maps to its member too: the member recreates it.
  if (apiVersion === 'v1' && kind === 'Pod') return member(namespace, name);
  if (apiVersion === 'v1' && kind === 'PersistentVolumeClaim') {
    if (name.startsWith(PVC_PREFIX) && name.length > PVC_PREFIX.length) {
      return member(namespace, name.slice(PVC_PREFIX.length));
    }
    return ignore(`PersistentVolumeClaim ${namespace}/${name} is not a member's data volume (data-<member>)`);
  }
  return ignore(`${kind} (${apiVersion}) ${namespace}/${name}: not for this function`);
}

const member = (namespace: string, name: string): MemberTarget => ({ kind: 'member', namespace, name });
const ignore = (summary: string): MemberTarget => ({ kind: 'ignore', summary });
