// Where the sandbox's scheduler puts a Pod (pure; scheduler.ts is the loop around it). It keeps the
// parts of kube-scheduler that decide where an etcd member can run:
// - nodes: only Node objects that exist (a deleted Node is a machine that is gone);
// - volumes pinned to a node, as local volumes are (local-path, TopoLVM, OpenEBS LocalPV): a claim
//   of a StorageClass with volumeBindingMode WaitForFirstConsumer is provisioned on the node its
//   first Pod is scheduled to, which the scheduler records on the claim in the annotation
//   volume.kubernetes.io/selected-node; the volume's node affinity then binds every later Pod using
//   the claim to that node. With that node gone no node fits, and the Pod stays Pending with the
//   scheduler's own words (VolumeBinding: "node(s) had volume node affinity conflict");
// - spreading (the default PodTopologySpread / SelectorSpread score): among the nodes that fit, the
//   one with the fewest Pods selected by the same Services as this Pod, then the fewest Pods, then
//   the name.
// Not modelled: resources, taints, node selectors and (anti-)affinity of the Pod itself.
import type { KObj, Pod, Pvc, Service } from './types.ts';

export const SELECTED_NODE_ANNOTATION = 'volume.kubernetes.io/selected-node';
export const WAIT_FOR_FIRST_CONSUMER = 'WaitForFirstConsumer';

export interface PlacementInput {
  pod: Pod;
  /** Node objects that exist and this sandbox runs Pods for */
  nodes: string[];
  /** Pods that are not finished (for spreading) */
  pods: Pod[];
  services: Service[];
  claim(namespace: string, name: string): Pvc | undefined;
  /** a PersistentVolume by name */
  volume(name: string): KObj | undefined;
  /** volumeBindingMode of a StorageClass, undefined when the class does not exist */
  bindingMode(className: string): string | undefined;
}

export type Placement =
  | {
      kind: 'bind';
      node: string;
      /** claims to pin to the node first (WaitForFirstConsumer) */ pin: string[];
    }
  | { kind: 'unschedulable'; message: string };

/**
 * kube-scheduler's FailedScheduling text for `n` nodes, each refused for one of `reasons` (1.27–1.31
 * end it with two periods: the fit error's own and the preemption part's).
 */
export function noNodeMessage(n: number, reasons: string[]): string {
  if (n === 0) return 'no nodes available to schedule pods';
  const counts = new Map<string, number>();
  for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  const parts = [...counts].map(([r, c]) => `${c} ${r}`).sort();
  return `0/${n} nodes are available: ${parts.join(', ')}. preemption: 0/${n} nodes are available: ${n} Preemption is not helpful for scheduling..`;
}

const VOLUME_CONFLICT = 'node(s) had volume node affinity conflict';

export function placePod(input: PlacementInput): Placement {
  const { pod, nodes } = input;
  const ns = pod.metadata.namespace ?? 'default';
  const claims = (pod.spec.volumes ?? [])
    .map(v => v.persistentVolumeClaim?.claimName)
    .filter((c): c is string => !!c)
    .map(name => ({ name, pvc: input.claim(ns, name) }));
  const pinnedTo = claims
    .map(c => c.pvc && pinnedNodes(c.pvc, v => input.volume(v)))
    .filter((n): n is string[] => n !== undefined);
  const fits = nodes.filter(n => pinnedTo.every(p => p.includes(n)));
  if (fits.length === 0)
    return {
      kind: 'unschedulable',
      message: noNodeMessage(
        nodes.length,
        nodes.map(() => VOLUME_CONFLICT),
      ),
    };
  const node = [...fits].sort((a, b) => compareNodes(spreadCount(input, a), spreadCount(input, b), a, b))[0];
  const pin = claims
    .filter(c => c.pvc && !c.pvc.metadata.annotations?.[SELECTED_NODE_ANNOTATION])
    .filter(c => input.bindingMode(c.pvc?.spec?.storageClassName ?? '') === WAIT_FOR_FIRST_CONSUMER)
    .map(c => c.name);
  return { kind: 'bind', node, pin };
}

interface NodeAffinityJson {
  required?: {
    nodeSelectorTerms?: { matchExpressions?: { key: string; operator: string; values?: string[] }[] }[];
  };
}

/**
 * The nodes a claim's volume can be used on, or undefined when any: the bound volume's required
 * node affinity on kubernetes.io/hostname (VolumeBinding's check), or, before it is bound, the
 * node the scheduler pinned it to.
 */
export function pinnedNodes(pvc: Pvc, volume: (name: string) => KObj | undefined): string[] | undefined {
  const pv = pvc.spec?.volumeName ? volume(pvc.spec.volumeName) : undefined;
  if (pv) {
    const terms =
      (pv as { spec?: { nodeAffinity?: NodeAffinityJson } }).spec?.nodeAffinity?.required
        ?.nodeSelectorTerms ?? [];
    const hosts = terms.flatMap(t =>
      (t.matchExpressions ?? [])
        .filter(e => e.key === 'kubernetes.io/hostname' && e.operator === 'In')
        .flatMap(e => e.values ?? []),
    );
    return hosts.length > 0 ? hosts : undefined;
  }
  const selected = pvc.metadata.annotations?.[SELECTED_NODE_ANNOTATION];
  return selected ? [selected] : undefined;
}

function compareNodes(a: [number, number], b: [number, number], an: string, bn: string): number {
  return a[0] - b[0] || a[1] - b[1] || an.localeCompare(bn);
}

/** [Pods on `node` selected by a Service that selects this Pod, all Pods on `node`] */
function spreadCount(input: PlacementInput, node: string): [number, number] {
  const { pod } = input;
  const ns = pod.metadata.namespace ?? 'default';
  const selectors = input.services
    .filter(s => (s.metadata.namespace ?? 'default') === ns)
    .map(s => s.spec?.selector)
    .filter((s): s is Record<string, string> => !!s && Object.keys(s).length > 0 && selects(s, pod));
  const onNode = input.pods.filter(p => p.spec.nodeName === node && p.metadata.uid !== pod.metadata.uid);
  const peers = onNode.filter(
    p => (p.metadata.namespace ?? 'default') === ns && selectors.some(s => selects(s, p)),
  );
  return [peers.length, onNode.length];
}

function selects(selector: Record<string, string>, obj: KObj): boolean {
  return Object.entries(selector).every(([k, v]) => obj.metadata.labels?.[k] === v);
}
