// EtcdMember (crds/etcdfn.io_etcdmembers.yaml): one etcd member, created by the operator.
import type { V1Affinity, V1TopologySpreadConstraint } from '@kubernetes/client-node';
import type { MemberRole } from '../names.ts';
import type {
  AdditionalMetadata,
  Condition,
  EtcdfnObject,
  EtcdOptions,
  LocalObjectReference,
  ObjectList,
  ResourceRequirements,
  RestoreSpec,
  StorageSpec,
} from './common.ts';

/** The TLS material the member mounts, resolved from the cluster's spec.tls. */
export interface EtcdMemberTLS {
  clientServerSecretRef?: LocalObjectReference;
  clientMTLS?: boolean;
  peerSecretRef?: LocalObjectReference;
  /** Client certificates must be valid for this name (--client-cert-allowed-hostname); mTLS only. */
  clientAllowedHostname?: string;
  /** Peer certificates must be valid for this name (--peer-cert-allowed-hostname). */
  peerAllowedHostname?: string;
}

export interface EtcdMemberSpec {
  clusterName: string;
  version: string;
  storage: StorageSpec;
  resources?: ResourceRequirements;
  additionalMetadata?: AdditionalMetadata;
  affinity?: V1Affinity;
  topologySpreadConstraints?: V1TopologySpreadConstraint[];
  options?: EtcdOptions;
  imagePullSecrets?: LocalObjectReference[];
  bootstrap?: boolean;
  /** Empty until the member has been added to etcd. */
  initialCluster: string;
  clusterToken: string;
  dormant?: boolean;
  /**
   * Quorum-loss recovery (ForceNewCluster): the member's next Pod starts etcd once with
   * --force-new-cluster; reconcile-cluster unsets it as soon as the forced start is seen.
   */
  forceNewCluster?: boolean;
  tls?: EtcdMemberTLS;
  restore?: RestoreSpec;
}

export interface MemberDataLoss {
  /** NodeLost, PVCMissing, PVCReplaced, PVCDeleted, MemoryLost, DataDirEmpty, RaftLogLost, MemberRemoved or DataCorrupt. */
  reason: string;
  message: string;
  /** RFC 3339 time of detection. */
  detectedAt: string;
}

/** The etcd container's exits in the member's current Pod, newest last (shared/plan/member/restarts.ts). */
export interface MemberRestarts {
  podUID: string;
  /** The Pod's restart count of the etcd container when last seen. */
  restartCount: number;
  /** The newest few exits: RFC 3339 time and exit code. */
  exits: { at: string; exitCode: number }[];
}

/** The member's PVC as it reports itself (shared/plan/member/volume-growth.ts). */
export interface MemberVolumeStatus {
  /** spec.resources.requests.storage of the PVC. */
  requested?: string;
  /** status.capacity.storage of the PVC. */
  capacity?: string;
  /** Resizing or FileSystemResizePending while the volume grows. */
  resizing?: string;
  /** The API server refused to grow the PVC to `size` (RFC 3339 `at`). */
  refused?: { size: string; message: string; at: string };
}

export interface EtcdMemberStatus {
  /** etcd member ID in hex. */
  memberID?: string;
  role?: MemberRole;
  isVoter?: boolean;
  podName?: string;
  podUID?: string;
  pvcName?: string;
  /** UID of the member's PVC when first seen: a PVC with another UID does not hold its data. */
  pvcUID?: string;
  /**
   * etcd has run as this member on its volume (it answered as this member, or etcd lists it as
   * started): from then on the member's Pods start etcd so that it refuses an empty data directory
   * instead of joining under the member's ID with no data.
   */
  hasData?: boolean;
  /** Why the member's data is gone or unusable, once detected (it stays until the member is replaced). */
  dataLoss?: MemberDataLoss;
  /** Recent exits of etcd in the current Pod (crash-loop evidence); absent until it first exits. */
  restarts?: MemberRestarts;
  volume?: MemberVolumeStatus;
  version?: string;
  peerURL?: string;
  clientURL?: string;
  observedGeneration?: number;
  conditions?: Condition[];
}

export type EtcdMember = EtcdfnObject<'EtcdMember', EtcdMemberSpec, EtcdMemberStatus>;
export type EtcdMemberList = ObjectList<EtcdMember>;
