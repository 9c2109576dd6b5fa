// Names, labels, finalizers and URLs of everything etcdfn creates, and the few constants every layer
// shares, in one place at the bottom of the library (test/unit/import-graph.test.ts), so that the
// functions, the sandbox and the tests can never disagree about them.

export const LABEL_PREFIX = 'etcdfn.io/';
export const CLUSTER_LABEL = 'etcdfn.io/cluster';
export const MEMBER_LABEL = 'etcdfn.io/member';
/** Pods labelled `etcdfn.io/client=<cluster>` may reach that cluster's client port (NetworkPolicy). */
export const CLIENT_LABEL = 'etcdfn.io/client';
export const ROLE_LABEL = 'etcdfn.io/role';
/**
 * The operator's own Pods (the functions, the standalone Deployment) carry
 * `etcdfn.io/component=operator`: each cluster's NetworkPolicy admits only those Pods of the
 * operator's namespace to the client port, not every Pod there.
 */
export const COMPONENT_LABEL = 'etcdfn.io/component';
export const OPERATOR_COMPONENT = 'operator';
export const MEMBER_FINALIZER = 'etcdfn.io/member-cleanup';
export const MANAGED_BY = 'etcdfn';

export type MemberRole = 'voter' | 'learner';

export const CLIENT_PORT = 2379;
export const PEER_PORT = 2380;
export const METRICS_PORT = 2381;
/**
 * With client mutual TLS only: a second, plain-HTTP metrics listener that the readiness probe reads
 * /health from (the kubelet cannot present a client certificate). The NetworkPolicy admits no Pod to it.
 */
export const PROBE_PORT = 2382;

/** Labels carried by every object that belongs to a cluster (selector of `kubectl get -l`). */
export function clusterLabels(cluster: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'etcd',
    'app.kubernetes.io/instance': cluster,
    'app.kubernetes.io/managed-by': MANAGED_BY,
    [CLUSTER_LABEL]: cluster,
  };
}

/** Labels of a member's Pod and PVC; the role label is added only once etcd says what it is. */
export function memberLabels(cluster: string, member: string, role?: MemberRole): Record<string, string> {
  const labels: Record<string, string> = { ...clusterLabels(cluster), [MEMBER_LABEL]: member };
  if (role) labels[ROLE_LABEL] = role;
  return labels;
}

/** The label selector written to status.selector (used by /scale and by `kubectl get -l`). */
export function clusterSelector(cluster: string): string {
  return `${CLUSTER_LABEL}=${cluster}`;
}

/** Merges user metadata under ours: operator keys win and the etcdfn.io/ prefix is reserved. */
export function mergeMetadata(
  user: Record<string, string> | undefined,
  ours: Record<string, string>,
): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const [key, value] of Object.entries(user ?? {})) {
    if (!key.startsWith(LABEL_PREFIX)) merged[key] = value;
  }
  return { ...merged, ...ours };
}

export const headlessServiceName = (cluster: string): string => cluster;
export const clientServiceName = (cluster: string): string => `${cluster}-client`;
export const podDisruptionBudgetName = (cluster: string): string => cluster;
export const networkPolicyName = (cluster: string): string => cluster;
export const pvcName = (member: string): string => `data-${member}`;
/** Members are named by the API server from this prefix (generateName). */
export const memberNamePrefix = (cluster: string): string => `${cluster}-`;

/** Cluster token: unique per incarnation of a cluster, so a recreated cluster never joins old peers. */
export function clusterToken(namespace: string, cluster: string, uid: string): string {
  return `${namespace}-${cluster}-${uid}`;
}

export interface UrlOptions {
  namespace: string;
  cluster: string;
  member: string;
  tls?: boolean;
}

/** A member's stable DNS name: `<member>.<headless service>.<namespace>.svc`. */
export function memberHost(o: Omit<UrlOptions, 'tls'>): string {
  return `${o.member}.${headlessServiceName(o.cluster)}.${o.namespace}.svc`;
}

export function peerUrl(o: UrlOptions): string {
  return `${o.tls ? 'https' : 'http'}://${memberHost(o)}:${PEER_PORT}`;
}

export function clientUrl(o: UrlOptions): string {
  return `${o.tls ? 'https' : 'http'}://${memberHost(o)}:${CLIENT_PORT}`;
}

/** The client Service's URL: the one endpoint clients (and the operator) use for the whole cluster. */
export function clusterClientUrl(namespace: string, cluster: string, tls = false): string {
  return `${tls ? 'https' : 'http'}://${clientServiceName(cluster)}.${namespace}.svc:${CLIENT_PORT}`;
}

/** `--initial-cluster` value: `name=peerURL` pairs in a stable order. */
export function initialCluster(members: { name: string; peerUrl: string }[]): string {
  return [...members]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map(m => `${m.name}=${m.peerUrl}`)
    .join(',');
}

/**
 * The name a peer certificate of this cluster must be valid for: any name under the headless
 * Service, which the peer certificate covers with its wildcard (Go's VerifyHostname takes a
 * concrete name and matches it against the wildcard).
 */
export function peerPinHostname(cluster: string, namespace: string): string {
  return `member.${headlessServiceName(cluster)}.${namespace}.svc`;
}

/** The name a client certificate of this cluster must carry: its client Service's. */
export function clientPinHostname(cluster: string, namespace: string): string {
  return `${clientServiceName(cluster)}.${namespace}.svc`;
}

/** The etcd user the operator acts as when auth is on. */
export const ROOT_USER = 'root';
/** The operator's own Secret: the root password etcd had at the last change it saw succeed. */
export const appliedRootSecretName = (cluster: string): string => `${cluster}-etcd-root-applied`;

/** Where a member's etcd keeps its data, inside the member's volume. */
export const DATA_DIR = '/var/lib/etcd';
