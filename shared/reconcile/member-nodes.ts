// reconcile-member's reads for shared/plan/member/node-loss.ts: the node the member's Pod is bound
// to, the nodes its PersistentVolume can be used on, and which of them no longer exist. Only read
// while the Pod is not running and ready (a Pod running on a node shows the node is there), so a
// steady member costs no extra call.
import type { V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { KubeObject } from '../k8s/objects.ts';
import { isPodReady } from '../plan/member/pod.ts';
import { hostnameAffinity } from '../plan/member/node-loss.ts';
import type { Context } from '../runtime/context.ts';
import type { MemberNodes } from '../plan/member/types.ts';

export async function observeMemberNodes(
  ctx: Context,
  pod: V1Pod | undefined,
  pvc: V1PersistentVolumeClaim | undefined,
): Promise<MemberNodes | undefined> {
  if (pod && isPodReady(pod) && pod.status?.phase === 'Running') return undefined;
  const volumeName = pvc?.spec?.volumeName;
  const pv = volumeName
    ? await ctx.kube.find<V1PersistentVolume & KubeObject>({
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        namespace: '',
        name: volumeName,
      })
    : undefined;
  const volumeNodes = pv ? hostnameAffinity(pv) : undefined;
  const podNode = pod?.spec?.nodeName || undefined;
  const names = [...new Set([podNode, ...(volumeNodes ?? [])].filter((n): n is string => !!n))];
  if (names.length === 0) return undefined;
  const found = await Promise.all(
    names.map(name =>
      ctx.kube.find<V1Node & KubeObject>({ apiVersion: 'v1', kind: 'Node', namespace: '', name }),
    ),
  );
  return {
    ...(podNode && { podNode }),
    ...(volumeNodes && { volumeNodes }),
    gone: names.filter((_, i) => found[i] === undefined),
  };
}
