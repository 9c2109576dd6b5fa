// Object shapes the kubelet reads and writes, as plain JSON (times are RFC 3339 strings).
// Specs reuse @kubernetes/client-node's model types, which have no Date fields in those parts.
import type {
  V1PersistentVolumeClaimSpec,
  V1PodSpec,
  V1ServiceSpec,
  V1EndpointSubset,
} from '@kubernetes/client-node';

export interface Meta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }[];
  generateName?: string;
}

export interface KObj {
  apiVersion?: string;
  kind?: string;
  metadata: Meta;
}

export interface ContainerStateJson {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt?: string };
  terminated?: {
    exitCode: number;
    signal?: number;
    reason?: string;
    message?: string;
    startedAt?: string;
    finishedAt?: string;
    containerID?: string;
  };
}

export interface ContainerStatusJson {
  name: string;
  state: ContainerStateJson;
  lastState: ContainerStateJson;
  ready: boolean;
  started?: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
}

export interface PodConditionJson {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastProbeTime: string | null;
  lastTransitionTime: string;
}

export interface PodStatusJson {
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
  conditions?: PodConditionJson[];
  message?: string;
  reason?: string;
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  initContainerStatuses?: ContainerStatusJson[];
  containerStatuses?: ContainerStatusJson[];
  qosClass?: string;
}

export interface Pod extends KObj {
  spec: V1PodSpec;
  status?: PodStatusJson;
}

export interface Service extends KObj {
  spec?: V1ServiceSpec;
}

export interface Endpoints extends KObj {
  subsets?: V1EndpointSubset[];
}

export interface Pvc extends KObj {
  spec?: V1PersistentVolumeClaimSpec;
  status?: {
    phase?: string;
    capacity?: Record<string, string>;
    accessModes?: string[];
    conditions?: { type: string; status: string; message?: string; lastTransitionTime?: string }[];
  };
}

/** `namespace/name`, the key of every cache. */
export function keyOf(obj: KObj): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}

export function nowIso(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** A logger: one line per call. */
export type Logger = (message: string) => void;
