// The Pod of one etcd member: the etcd container with the flags of its minor release, stable DNS
// through the headless Service, the restricted Pod Security profile, and probes that let Ready
// follow etcd's own view of its health without ever restarting a member that only lost quorum.
import { v2storeCheckContainers } from './v2store-check.ts';
import type {
  V1Affinity,
  V1Container,
  V1EnvVar,
  V1Pod,
  V1PodSecurityContext,
  V1ResourceRequirements,
  V1SecurityContext,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import type { ResourceRequirements } from '../api/common.ts';
import type { EtcdMember } from '../api/etcd-member.ts';
import { DEFAULT_MEMORY_LIMIT_BYTES, DEFAULT_RESOURCE_REQUESTS } from '../api/defaults.ts';
import {
  CLIENT_PORT,
  CLUSTER_LABEL,
  headlessServiceName,
  memberLabels,
  METRICS_PORT,
  PEER_PORT,
  PROBE_PORT,
  pvcName,
  type MemberRole,
  DATA_DIR,
} from '../names.ts';
import { parseQuantity, quantityCeil, type Quantity } from '../quantity.ts';
import {
  CLIENT_TLS_DIR,
  etcdFlags,
  INITIAL_CLUSTER_ANNOTATION,
  INITIAL_CLUSTER_ENV,
  INITIAL_CLUSTER_STATE_ANNOTATION,
  INITIAL_CLUSTER_STATE_ENV,
  PEER_TLS_DIR,
} from './etcd-flags.ts';
import { healthEndpoint, POD_IP_ENV, type PodIPFamily } from './etcd-listen.ts';
import { objectMetadata } from './metadata.ts';
import { DEFAULT_OPERATOR_IMAGE, restoreInitContainers, restoreVolumes } from './restore-pod.ts';
import { controllerRef } from './owner.ts';
import { isMemoryMedium, storageBytes, storageSize } from './storage.ts';

export const DEFAULT_ETCD_IMAGE_REPOSITORY = 'quay.io/coreos/etcd';
export const ETCD_CONTAINER = 'etcd';
/** The non-root user and group of the etcd images (distroless "nonroot"). */
export const ETCD_UID = 65532;

export interface BuildMemberPodOptions {
  namespace: string;
  /** The cluster's ID is recorded in status (see etcdFlags: decides `new` vs `existing`). */
  clusterFormed: boolean;
  /** etcd counts the member as a voter; a member known to etcd but not a voter is a learner. */
  isVoter: boolean;
  /** Repository of the etcd images for the whole operator; the tag is `v<version>`. */
  etcdImageRepository?: string;
  /** Digests of etcd images by release (ETCD_IMAGE_DIGESTS): a listed release runs by digest. */
  etcdImageDigests?: Readonly<Record<string, string>>;
  /** The operator's image, which runs the restore's fetch and commit steps. */
  operatorImage?: string;
  /** The family of the Pods' IPs (etcd listens on the Pod IP; IPv6 goes in brackets); IPv4 when unset. */
  podIPFamily?: PodIPFamily;
  /** The operator's S3 endpoint allow-list setting (for a restoring seed's fetch step). */
  s3AllowedEndpoints?: string;
  /** The operator's denied address ranges for S3 (the same step). */
  s3DeniedRanges?: string;
}

/** `<repository>:v<version>`, and `@<digest>` when the release's digest is given (pinned by content). */
export function etcdImage(
  version: string,
  repository = DEFAULT_ETCD_IMAGE_REPOSITORY,
  digests: Readonly<Record<string, string>> = {},
): string {
  const digest = Object.hasOwn(digests, version) ? digests[version] : undefined;
  return `${repository}:v${version}${digest ? `@${digest}` : ''}`;
}

/**
 * ETCD_IMAGE_DIGESTS: `3.5.16=sha256:<64 hex>,3.5.17=sha256:<64 hex>`. Anything else is an error
 * naming the entry, so a typo never silently runs an unpinned image.
 */
export function parseEtcdImageDigests(text: string | undefined): Record<string, string> {
  const digests: Record<string, string> = {};
  for (const entry of (text ?? '')
    .split(',')
    .map(e => e.trim())
    .filter(Boolean)) {
    const match = /^(\d+\.\d+\.\d+)=(sha256:[0-9a-f]{64})$/.exec(entry);
    if (!match) {
      throw new Error(
        `ETCD_IMAGE_DIGESTS: "${entry.slice(0, 100)}" is not <version>=sha256:<64 hex digits> (e.g. 3.5.16=sha256:…)`,
      );
    }
    digests[match[1]] = match[2];
  }
  return digests;
}

export function buildMemberPod(member: EtcdMember, opts: BuildMemberPodOptions): V1Pod {
  const name = member.metadata.name;
  if (!name) throw new Error('buildMemberPod: the member has no name yet (create it first)');
  const cluster = member.spec.clusterName;
  // The member ID, once recorded, comes from member.status (see initialClusterState).
  const { flags, annotations } = joinFromAnnotations(
    etcdFlags(member, {
      namespace: opts.namespace,
      clusterFormed: opts.clusterFormed,
      ...(opts.podIPFamily && { podIPFamily: opts.podIPFamily }),
    }),
  );
  const spec = member.spec;
  const initContainers = restoreInitContainers(member, {
    operatorImage: opts.operatorImage ?? DEFAULT_OPERATOR_IMAGE,
    etcdImage: etcdImage(spec.version, opts.etcdImageRepository, opts.etcdImageDigests),
    peerURL: flagValue(flags, '--initial-advertise-peer-urls'),
    securityContext: containerSecurityContext(),
    resources: containerResources(spec.resources),
    ...(opts.s3AllowedEndpoints && { s3AllowedEndpoints: opts.s3AllowedEndpoints }),
    ...(opts.s3DeniedRanges && { s3DeniedRanges: opts.s3DeniedRanges }),
  });
  initContainers.push(
    ...v2storeCheckContainers(member, {
      image: version => etcdImage(version, opts.etcdImageRepository),
      common: {
        resources: containerResources(spec.resources),
        securityContext: containerSecurityContext(),
        terminationMessagePolicy: 'FallbackToLogsOnError',
      },
    }),
  );

  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: opts.namespace,
      ...objectMetadata(
        spec.additionalMetadata,
        memberLabels(cluster, name, podRole(member, opts.isVoter)),
        annotations,
      ),
      ownerReferences: [controllerRef(member)],
    },
    spec: {
      hostname: name,
      subdomain: headlessServiceName(cluster),
      affinity: hasAffinity(spec.affinity) ? structuredClone(spec.affinity) : defaultAffinity(cluster),
      ...(spec.topologySpreadConstraints?.length && {
        topologySpreadConstraints: structuredClone(spec.topologySpreadConstraints),
      }),
      ...(spec.imagePullSecrets?.length && {
        imagePullSecrets: spec.imagePullSecrets.map(s => ({ name: s.name })),
      }),
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: podSecurityContext(),
      terminationGracePeriodSeconds: 30,
      ...(initContainers.length > 0 && { initContainers }),
      containers: [
        etcdContainer(
          member,
          flags,
          etcdImage(spec.version, opts.etcdImageRepository, opts.etcdImageDigests),
        ),
      ],
      volumes: volumes(member),
    },
  };
}

const JOIN_SETTINGS = [
  { flag: '--initial-cluster', annotation: INITIAL_CLUSTER_ANNOTATION, env: INITIAL_CLUSTER_ENV },
  {
    flag: '--initial-cluster-state',
    annotation: INITIAL_CLUSTER_STATE_ANNOTATION,
    env: INITIAL_CLUSTER_STATE_ENV,
  },
] as const;

/**
 * etcd's join settings leave the command line for the Pod's annotations (see
 * INITIAL_CLUSTER_ANNOTATION): the flags without them, and the annotations that carry them.
 */
function joinFromAnnotations(all: string[]): { flags: string[]; annotations: Record<string, string> } {
  const annotations: Record<string, string> = {};
  const flags = all.filter(f => {
    const setting = JOIN_SETTINGS.find(s => f.startsWith(`${s.flag}=`));
    if (setting) annotations[setting.annotation] = f.slice(setting.flag.length + 1);
    return setting === undefined;
  });
  return { flags, annotations };
}

/** The etcd container's variables for its join settings, read from the Pod's annotations. */
function joinEnv(): V1EnvVar[] {
  return JOIN_SETTINGS.map(s => ({
    name: s.env,
    valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: `metadata.annotations['${s.annotation}']` } },
  }));
}

/** Learners carry `learner`, voters `voter`; a member not yet in etcd carries no role label. */
function podRole(member: EtcdMember, isVoter: boolean): MemberRole | undefined {
  if (isVoter) return 'voter';
  return member.status?.role === 'learner' || member.status?.memberID ? 'learner' : undefined;
}

function hasAffinity(affinity: V1Affinity | undefined): affinity is V1Affinity {
  return !!(affinity?.nodeAffinity || affinity?.podAffinity || affinity?.podAntiAffinity);
}

/** Spread members over nodes when possible, without ever leaving a member unschedulable for it. */
export function defaultAffinity(cluster: string): V1Affinity {
  return {
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 100,
          podAffinityTerm: {
            topologyKey: 'kubernetes.io/hostname',
            labelSelector: { matchLabels: { [CLUSTER_LABEL]: cluster } },
          },
        },
      ],
    },
  };
}

export function podSecurityContext(): V1PodSecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: ETCD_UID,
    runAsGroup: ETCD_UID,
    fsGroup: ETCD_UID,
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

export function containerSecurityContext(): V1SecurityContext {
  return {
    runAsNonRoot: true,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    // etcd writes only to its data directory (a volume); everything else can be read-only.
    readOnlyRootFilesystem: true,
  };
}

function etcdContainer(member: EtcdMember, flags: string[], image: string): V1Container {
  const memoryVolumeBytes = isMemoryMedium(member.spec.storage) ? storageBytes(member.spec.storage) : 0n;
  const resources = containerResources(member.spec.resources, memoryVolumeBytes);
  const env = [
    // The address etcd listens on (shared/builders/etcd-listen.ts), expanded in its command: the
    // primary Pod IP, of the family the flags were built for (podIPFamily).
    { name: POD_IP_ENV, valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
    ...joinEnv(),
    ...goRuntimeEnv(resources, memoryVolumeBytes),
  ];
  return {
    name: ETCD_CONTAINER,
    image,
    command: ['etcd', ...flags],
    ports: [
      { name: 'client', containerPort: CLIENT_PORT, protocol: 'TCP' },
      { name: 'peer', containerPort: PEER_PORT, protocol: 'TCP' },
      { name: 'metrics', containerPort: METRICS_PORT, protocol: 'TCP' },
      // With client mTLS, /health for the readiness probe (shared/builders/etcd-listen.ts).
      ...(healthEndpoint(member.spec.tls).port === PROBE_PORT
        ? [{ name: 'probe', containerPort: PROBE_PORT, protocol: 'TCP' }]
        : []),
    ],
    env,
    resources,
    volumeMounts: volumeMounts(member),
    // Ready follows etcd's own /health (leader known, no alarm) within a second: promotions and the
    // next member wait on it, and /health is cheap. NOSPACE is excluded (3.4 and 3.5 take
    // ?exclude=): a full database still serves reads, and the operator must see its members ready
    // to compact and defragment them; a CORRUPT alarm still makes the member unready. Read on the
    // metrics port, or with client mTLS on the probe port (no client certificate needed there).
    readinessProbe: {
      httpGet: { path: '/health?exclude=NOSPACE', ...healthEndpoint(member.spec.tls) },
      periodSeconds: 1,
      timeoutSeconds: 2,
      failureThreshold: 3,
    },
    // Deliberately not quorum-aware: a member of a cluster that lost quorum is alive and must be
    // left running to rejoin; restarting it would only turn an outage into a crash loop.
    livenessProbe: {
      tcpSocket: { port: PEER_PORT },
      initialDelaySeconds: 15,
      periodSeconds: 10,
      failureThreshold: 3,
    },
    // A crashing etcd's last log lines end up in the Pod's status, where `kubectl describe` shows them.
    terminationMessagePolicy: 'FallbackToLogsOnError',
    securityContext: containerSecurityContext(),
  };
}

/**
 * spec.resources when it says anything, else modest requests and a memory limit (2Gi, plus the size
 * of a Memory-medium data volume) so that one member cannot take a node's memory.
 */
export function containerResources(
  resources: ResourceRequirements | undefined,
  memoryVolumeBytes = 0n,
): V1ResourceRequirements {
  const strings = (m: Record<string, string | number> | undefined): Record<string, string> | undefined =>
    m && Object.keys(m).length > 0
      ? Object.fromEntries(Object.entries(m).map(([k, v]) => [k, String(v)]))
      : undefined;
  const limits = strings(resources?.limits);
  const requests = strings(resources?.requests);
  const claims = resources?.claims?.length ? structuredClone(resources.claims) : undefined;
  if (!limits && !requests && !claims) {
    const memory = DEFAULT_MEMORY_LIMIT_BYTES + memoryVolumeBytes;
    const mi = 1024n ** 2n;
    const limit = memory % mi === 0n ? `${memory / mi}Mi` : String(memory);
    return { requests: { ...DEFAULT_RESOURCE_REQUESTS }, limits: { memory: limit } };
  }
  return { ...(limits && { limits }), ...(requests && { requests }), ...(claims && { claims }) };
}

/**
 * Tell the Go runtime what the container may use; it otherwise sizes itself from the node.
 * - GOMAXPROCS: the CPU limit rounded up (at least 1), so etcd does not run one thread per node
 *   core and get throttled by its CFS quota in the middle of a heartbeat.
 * - GOMEMLIMIT: 90% of the memory the Go heap may use, so the garbage collector works harder as
 *   the limit nears instead of the kernel OOM-killing the member. A Memory-medium data volume is
 *   charged to the same cgroup, so its size is taken off first; the 10% is room for what is not
 *   Go heap (stacks, the bbolt mmap's dirty pages). Go before 1.19 ignores it.
 */
export function goRuntimeEnv(resources: V1ResourceRequirements, memoryVolumeBytes = 0n): V1EnvVar[] {
  const env: V1EnvVar[] = [];
  const cpu = quantityOf(resources.limits?.cpu);
  if (cpu) {
    const cores = quantityCeil(cpu);
    env.push({ name: 'GOMAXPROCS', value: String(cores < 1n ? 1n : cores) });
  }
  const memory = quantityOf(resources.limits?.memory);
  if (memory) {
    const forGo = quantityCeil(memory) - memoryVolumeBytes;
    if (forGo > 0n) env.push({ name: 'GOMEMLIMIT', value: String((forGo * 9n) / 10n) });
  }
  return env;
}

function quantityOf(value: string | undefined): Quantity | undefined {
  return value === undefined ? undefined : parseQuantity(value);
}

function volumes(member: EtcdMember): V1Volume[] {
  const name = member.metadata.name ?? '';
  const storage = member.spec.storage;
  const list: V1Volume[] = [
    isMemoryMedium(storage)
      ? { name: 'data', emptyDir: { medium: 'Memory', sizeLimit: storageSize(storage) } }
      : { name: 'data', persistentVolumeClaim: { claimName: pvcName(name) } },
    ...restoreVolumes(member),
  ];
  const tls = member.spec.tls;
  // 0440: readable by the fsGroup (etcd's group) only, never by other users.
  if (tls?.clientServerSecretRef) {
    list.push({
      name: 'tls-client',
      secret: { secretName: tls.clientServerSecretRef.name, defaultMode: 0o440 },
    });
  }
  if (tls?.peerSecretRef) {
    list.push({ name: 'tls-peer', secret: { secretName: tls.peerSecretRef.name, defaultMode: 0o440 } });
  }
  return list;
}

function volumeMounts(member: EtcdMember): V1VolumeMount[] {
  const mounts: V1VolumeMount[] = [{ name: 'data', mountPath: DATA_DIR }];
  const tls = member.spec.tls;
  if (tls?.clientServerSecretRef)
    mounts.push({ name: 'tls-client', mountPath: CLIENT_TLS_DIR, readOnly: true });
  if (tls?.peerSecretRef) mounts.push({ name: 'tls-peer', mountPath: PEER_TLS_DIR, readOnly: true });
  return mounts;
}

function flagValue(flags: string[], name: string): string {
  return flags.find(f => f.startsWith(`${name}=`))?.slice(name.length + 1) ?? '';
}
