// NetworkPolicy semantics as a network plugin applies them to ingress, as a pure check: may a Pod
// (its namespace and labels) reach a port of the Pods a policy selects? Until the sandbox enforces
// policies for real, this is how each Pod etcdfn creates is checked against the policy it creates.
import type { V1LabelSelector, V1NetworkPolicy, V1NetworkPolicyPeer } from '@kubernetes/client-node';

export interface PodSource {
  namespace: string;
  labels: Record<string, string>;
}

/** Kubernetes label selector semantics; an empty selector matches everything. */
export function selects(selector: V1LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const inValues = has && (e.values ?? []).includes(labels[e.key]);
    const ok =
      e.operator === 'Exists'
        ? has
        : e.operator === 'DoesNotExist'
          ? !has
          : e.operator === 'In'
            ? inValues
            : e.operator === 'NotIn'
              ? !inValues
              : false;
    if (!ok) return false;
  }
  return true;
}

/** The labels the API server sets on every namespace. */
const namespaceLabels = (name: string) => ({ 'kubernetes.io/metadata.name': name });

function peerAdmits(peer: V1NetworkPolicyPeer, policyNamespace: string, source: PodSource): boolean {
  if (peer.ipBlock) return false; // Pod IPs are not modelled: only selectors count here
  if (peer.namespaceSelector) {
    if (!selects(peer.namespaceSelector, namespaceLabels(source.namespace))) return false;
    return peer.podSelector ? selects(peer.podSelector, source.labels) : true;
  }
  return source.namespace === policyNamespace && selects(peer.podSelector, source.labels);
}

/**
 * Whether `source` may open a TCP connection to `port` of a Pod the policy selects: some ingress
 * rule names the port (or no port) and the source (or no source). client-node's model calls the
 * field `_from`; a parsed manifest has `from`.
 */
export function admits(policy: V1NetworkPolicy, source: PodSource, port: number): boolean {
  const namespace = policy.metadata?.namespace ?? '';
  if (!(policy.spec?.policyTypes ?? ['Ingress']).includes('Ingress')) return true;
  return (policy.spec?.ingress ?? []).some(rule => {
    const ports = rule.ports ?? [];
    if (ports.length > 0 && !ports.some(p => (p.protocol ?? 'TCP') === 'TCP' && p.port === port))
      return false;
    const from = rule._from ?? (rule as { from?: V1NetworkPolicyPeer[] }).from;
    if (!from || from.length === 0) return true;
    return from.some(peer => peerAdmits(peer, namespace, source));
  });
}
