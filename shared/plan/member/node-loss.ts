// A member whose node is gone (its Node object deleted: the machine was removed, or a cloud's node
// controller deleted it after the instance vanished). Pure: reconcile-member observes which of the
// nodes the member depends on no longer exist (confirmed by a read of its own) and which nodes its
// volume can be used on; this file decides.
// - The member's volume is tied to the gone node (a local volume: its PersistentVolume's required
//   node affinity names only nodes that are gone; local-path, local PV, TopoLVM, OpenEBS LocalPV),
//   or its data was in memory in a Pod on that node: the data went with the node. No Pod can ever
//   start with it again (kube-scheduler: "volume node affinity conflict"), so it is evidence of
//   lost data, `NodeLost`, and the member is replaced with a new member ID under reconcile-cluster's
//   quorum guard, as for a lost PVC.
// - The Pod was on the gone node but the volume is not tied to it (network or zonal storage): the
//   data is safe and can follow the Pod. The Pod is deleted at once with no grace (nothing on the
//   gone node will confirm a graceful stop; kube-controller-manager's pod GC would do the same after
//   40 s), and the next one is scheduled on a node that is left, with the same member ID and data.
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { isMemoryMedium } from '../../builders/storage.ts';
import { pvcName } from '../../names.ts';
import { isBeingDeleted, ownershipOf } from './pod.ts';
import type { MemberState } from './step.ts';

export const NODE_LOST = 'NodeLost';

export type NodeLoss =
  | { kind: 'data'; node: string; message: string }
  | { kind: 'move-pod'; node: string; podName: string; uid: string; message: string };

export function nodeLoss(state: MemberState): NodeLoss | undefined {
  const { member, nodes } = state;
  if (!nodes || nodes.gone.length === 0) return undefined;
  const name = member.metadata.name ?? '';
  const gone = (n: string | undefined): n is string => n !== undefined && nodes.gone.includes(n);
  const pvc = state.pvc && ownershipOf(state.pvc, member) === 'ours' ? state.pvc : undefined;
  const local = nodes.volumeNodes;
  if (pvc && !isMemoryMedium(member.spec.storage) && local && local.length > 0 && local.every(gone)) {
    return {
      kind: 'data',
      node: local.join(', '),
      message: `${local.length === 1 ? 'node' : 'nodes'} ${local.join(', ')}, the only place PVC ${pvcName(name)}'s local volume (${pvc.spec?.volumeName}) can be used, ${local.length === 1 ? 'is' : 'are'} gone (Node object deleted): ${name}'s data went with it`,
    };
  }
  const pod = state.pod && ownershipOf(state.pod, member) === 'ours' ? state.pod : undefined;
  const podNode = pod?.spec?.nodeName;
  if (!pod || !gone(podNode) || podNode !== nodes.podNode) return undefined;
  if (isMemoryMedium(member.spec.storage)) {
    return {
      kind: 'data',
      node: podNode,
      message: `node ${podNode}, where ${name}'s Pod kept its data in memory, is gone (Node object deleted)`,
    };
  }
  if (isBeingDeleted(pod) && pod.metadata?.deletionGracePeriodSeconds === 0) return undefined;
  return {
    kind: 'move-pod',
    node: podNode,
    podName: pod.metadata?.name ?? name,
    uid: pod.metadata?.uid ?? '',
    message: `node ${podNode}, where ${name}'s Pod ran, is gone (Node object deleted); its volume is not tied to that node, so the Pod is deleted at once and the next one starts on another node with the same data and member ID`,
  };
}

/** The nodes a volume's required node affinity allows by kubernetes.io/hostname, if it names any. */
export function hostnameAffinity(pv: V1PersistentVolume): string[] | undefined {
  const terms = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  const hosts = terms.flatMap(t =>
    (t.matchExpressions ?? [])
      .filter(e => e.key === 'kubernetes.io/hostname' && e.operator === 'In')
      .flatMap(e => e.values ?? []),
  );
  // A term that does not pin to hostnames (a zone, for example) lets the volume go elsewhere.
  const pinnedEveryTerm =
    terms.length > 0 &&
    terms.every(t =>
      (t.matchExpressions ?? []).some(e => e.key === 'kubernetes.io/hostname' && e.operator === 'In'),
    );
  return pinnedEveryTerm && hosts.length > 0 ? hosts : undefined;
}
