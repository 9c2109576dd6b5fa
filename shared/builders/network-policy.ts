// The NetworkPolicy of a cluster: its members accept the client port only from Pods labelled as the
// cluster's clients (the operator's snapshot Jobs are labelled so), from the operator's function
// Pods (etcdfn.io/component=operator in the operator's namespace) and from each other; the peer port only from
// each other; the metrics port only from a namespace the user names. On by default
// (spec.networkPolicy.enabled: false turns it off, and the operator then removes it).
import type {
  V1NetworkPolicy,
  V1NetworkPolicyIngressRule,
  V1NetworkPolicyPeer,
} from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import {
  CLIENT_LABEL,
  CLIENT_PORT,
  CLUSTER_LABEL,
  COMPONENT_LABEL,
  MEMBER_LABEL,
  METRICS_PORT,
  networkPolicyName,
  OPERATOR_COMPONENT,
  PEER_PORT,
} from '../names.ts';
import { clusterNameOf, clusterOwnedMetadata } from './cluster-meta.ts';

/** Where the operator runs when nothing says otherwise (knative/ installs it there). */
export const DEFAULT_OPERATOR_NAMESPACE = 'etcdfn-system';
/** Set on every namespace by the API server (Kubernetes 1.21+), so a namespace can be selected by name. */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

export interface NetworkPolicyOptions {
  /** Namespace of the operator's functions (they dial the client port). */
  operatorNamespace?: string;
}

export function networkPolicyEnabled(cluster: EtcdCluster): boolean {
  return cluster.spec.networkPolicy?.enabled !== false;
}

/** undefined when the cluster turned the policy off: the caller deletes any existing one. */
export function buildNetworkPolicy(
  cluster: EtcdCluster,
  opts: NetworkPolicyOptions = {},
): V1NetworkPolicy | undefined {
  if (!networkPolicyEnabled(cluster)) return undefined;
  const name = clusterNameOf(cluster);
  const members: V1NetworkPolicyPeer = {
    podSelector: {
      matchLabels: { [CLUSTER_LABEL]: name },
      matchExpressions: [{ key: MEMBER_LABEL, operator: 'Exists' }],
    },
  };
  const clients: V1NetworkPolicyPeer = { podSelector: { matchLabels: { [CLIENT_LABEL]: name } } };
  // The operator's function Pods, not every Pod of its namespace (both selectors must match).
  const operator: V1NetworkPolicyPeer = {
    namespaceSelector: {
      matchLabels: { [NAMESPACE_NAME_LABEL]: opts.operatorNamespace || DEFAULT_OPERATOR_NAMESPACE },
    },
    podSelector: { matchLabels: { [COMPONENT_LABEL]: OPERATOR_COMPONENT } },
  };
  const tcp = (port: number) => [{ protocol: 'TCP', port }];
  // client-node's model names the field `_from` and writes it as `from`; a plain `from` would be
  // dropped on the way out, leaving a rule that admits everyone.
  const ingress: V1NetworkPolicyIngressRule[] = [
    { ports: tcp(CLIENT_PORT), _from: [clients, operator, members] },
    { ports: tcp(PEER_PORT), _from: [members] },
  ];
  const metricsNamespace = cluster.spec.networkPolicy?.metricsNamespace;
  if (metricsNamespace) {
    ingress.push({
      ports: tcp(METRICS_PORT),
      _from: [{ namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: metricsNamespace } } }],
    });
  }
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: clusterOwnedMetadata(cluster, networkPolicyName(name)),
    spec: {
      podSelector: members.podSelector!,
      policyTypes: ['Ingress'],
      ingress,
    },
  };
}

/** A merge patch that sets the spec to the desired one, or undefined when it is already so. */
export function networkPolicyDrift(
  existing: V1NetworkPolicy,
  desired: V1NetworkPolicy,
): { spec: V1NetworkPolicy['spec'] } | undefined {
  return canonical(normalise(existing.spec)) === canonical(normalise(desired.spec))
    ? undefined
    : { spec: desired.spec };
}

/** What we set, with the API server's defaults filled in the same way on both sides. */
function normalise(spec: V1NetworkPolicy['spec'] | undefined): unknown {
  return {
    podSelector: spec?.podSelector,
    policyTypes: spec?.policyTypes,
    ingress: (spec?.ingress ?? []).map(r => ({
      ports: (r.ports ?? []).map(p => ({ protocol: p.protocol ?? 'TCP', port: p.port })),
      from: r._from ?? [],
    })),
  };
}

/** JSON with object keys sorted and undefined/empty members dropped: a read-back object (whose keys
 * come in the client's model order, with nulls for what is unset) compares equal to a built one. */
function canonical(value: unknown): string {
  const clean = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(clean);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) {
        const inner = clean((v as Record<string, unknown>)[key]);
        if (inner !== undefined && inner !== null) out[key] = inner;
      }
      return out;
    }
    return v;
  };
  return JSON.stringify(clean(value));
}
