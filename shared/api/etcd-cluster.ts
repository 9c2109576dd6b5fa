// EtcdCluster (crds/etcdfn.io_etcdclusters.yaml): the resource users write.
import type { DefragScheduleStatus, MaintenanceSpec } from './maintenance.ts';
import type { V1Affinity, V1TopologySpreadConstraint } from '@kubernetes/client-node';
import type { MemberRole } from '../names.ts';
import type {
  AdditionalMetadata,
  Condition,
  EtcdfnObject,
  EtcdOptions,
  IntOrString,
  LocalObjectReference,
  ObjectList,
  ResourceRequirements,
  RestoreSpec,
  StorageSpec,
} from './common.ts';
import type { ClusterOperation } from './cluster-operation.ts';

export type IssuerKind = 'Issuer' | 'ClusterIssuer';

/** A cert-manager Issuer or ClusterIssuer (group cert-manager.io). */
export interface IssuerReference {
  name: string;
  kind?: IssuerKind;
}

/** Operator-issued certificates; an empty object turns the mode on. */
export type AutoTLS = Record<string, never>;

/** Exactly one of serverSecretRef, certManager or auto. */
export interface ClientTLS {
  serverSecretRef?: LocalObjectReference;
  operatorClientSecretRef?: LocalObjectReference;
  certManager?: { serverIssuerRef: IssuerReference; operatorClientIssuerRef?: IssuerReference };
  auto?: AutoTLS;
}

/** Exactly one of secretRef, certManager or auto. */
export interface PeerTLS {
  secretRef?: LocalObjectReference;
  certManager?: { issuerRef: IssuerReference };
  auto?: AutoTLS;
}

export interface EtcdClusterTLS {
  client?: ClientTLS;
  peer?: PeerTLS;
}

export interface AuthSpec {
  enabled?: boolean;
  rootCredentialsSecretRef?: LocalObjectReference;
}

export interface BootstrapSpec {
  restore?: RestoreSpec;
}

/** A request to return the running cluster to a snapshot (written by `kubectl etcdfn restore`). */
export interface InPlaceRestoreRequest {
  /** New for every request: a request whose ID is recorded in status.inPlaceRestore is done. */
  requestID: string;
  snapshotRef: LocalObjectReference;
}

/** Fields with a schema default are optional here; see defaults.ts for their values. */
export interface EtcdClusterSpec {
  replicas?: number;
  version: string;
  storage?: StorageSpec;
  progressDeadlineSeconds?: number;
  tls?: EtcdClusterTLS;
  auth?: AuthSpec;
  bootstrap?: BootstrapSpec;
  resources?: ResourceRequirements;
  additionalMetadata?: AdditionalMetadata;
  affinity?: V1Affinity;
  topologySpreadConstraints?: V1TopologySpreadConstraint[];
  options?: EtcdOptions;
  imagePullSecrets?: LocalObjectReference[];
  networkPolicy?: NetworkPolicySpec;
  inPlaceRestore?: InPlaceRestoreRequest;
  recovery?: RecoverySpec;
  maintenance?: MaintenanceSpec;
}

/**
 * What the operator does when quorum is lost. ReportOnly (the default): the QuorumLost condition
 * says what happened and what the user can do; nothing changes. ForceNewCluster: the most advanced
 * surviving member restarts with --force-new-cluster and the others rejoin as new learners.
 * RestoreLatestSnapshot: the newest verified EtcdSnapshot of this cluster is restored in place.
 */
export type RecoveryPolicy = 'ReportOnly' | 'ForceNewCluster' | 'RestoreLatestSnapshot';

export interface RecoverySpec {
  policy?: RecoveryPolicy;
}

/** The cluster's NetworkPolicy (shared/builders/network-policy.ts). */
export interface NetworkPolicySpec {
  /** Default true. */
  enabled?: boolean;
  /** A namespace whose Pods may scrape the metrics port (2381); unset: none. */
  metricsNamespace?: string;
}

export type ClusterPhase =
  'Pending' | 'Bootstrapping' | 'Running' | 'Scaling' | 'Upgrading' | 'Paused' | 'Degraded' | 'Failed';

export interface ClusterMemberStatus {
  name: string;
  /** etcd member ID in hex. */
  id?: string;
  role?: MemberRole;
  ready?: boolean;
  version?: string;
  leader?: boolean;
  /** The member's PVC: requested size and reported capacity. */
  volume?: { requested?: string; capacity?: string };
  /** Bytes of the backend database file and of it in use, as etcd reports them (settled: see plan/space/volume-growth.ts). */
  dbSize?: number;
  dbSizeInUse?: number;
}

/** The target locked from spec while the operator works towards it. */
export interface ObservedClusterSpec {
  replicas: number;
  version: string;
  storage: { size?: IntOrString; medium?: string; storageClassName?: string };
  resources?: ResourceRequirements;
  affinity?: V1Affinity;
  topologySpreadConstraints?: V1TopologySpreadConstraint[];
  additionalMetadata?: AdditionalMetadata;
  options?: EtcdOptions;
  imagePullSecrets?: LocalObjectReference[];
}

export interface MemberReplacementStatus {
  /** The member whose data was lost, and its etcd member ID. */
  member: string;
  oldID?: string;
  /** The evidence, as the member recorded it. */
  reason: string;
  /**
   * Why it is replaced: DataLost (the default); CrashLoop: it crash-loops with start settings
   * (options, resources, image pull secrets) the cluster no longer asks for; NodeLost: its data was
   * on a node that is gone (a local volume, or memory).
   */
  cause?: 'DataLost' | 'CrashLoop' | 'NodeLost';
  /** The member added in its place, once claimed. */
  newMember?: string;
  /** RFC 3339 time. */
  startedAt: string;
}

export type InPlaceRestoreStep = 'Stopping' | 'Restoring' | 'Done';

export interface InPlaceRestoreStatus {
  requestID: string;
  /** The EtcdSnapshot named by the request. */
  snapshot: string;
  step: InPlaceRestoreStep;
  /** The snapshot resolved when the request was accepted: the exact object and its checksum. */
  source: RestoreSpec;
  /** The members whose data the restore discards. */
  members: string[];
  previousClusterID?: string;
  /** RFC 3339 times. */
  startedAt: string;
  finishedAt?: string;
  /** Set when etcdfn started the restore itself on quorum loss (shared/plan/recovery/restore-latest.ts). */
  recovery?: RestoreRecoveryRecord;
}

/** Why etcdfn restored on its own: spec.recovery.policy RestoreLatestSnapshot after quorum loss. */
export interface RestoreRecoveryRecord {
  policy: 'RestoreLatestSnapshot';
  /** RFC 3339: since when the cluster had no quorum. */
  quorumLostSince: string;
  /** The members whose data was lost, as they recorded it. */
  dataLost?: string[];
  /** The snapshot's etcd revision and completion time: every write after it is lost. */
  revision?: number;
  snapshotTime?: string;
  /** spec.inPlaceRestore's requestID at the time: done (or dropped) with this restore, never run after it. */
  supersedesRequestID?: string;
}

export type ForceNewClusterStep = 'Waiting' | 'Forcing' | 'Removing' | 'Rejoining' | 'Done';

/** A ForceNewCluster recovery (shared/plan/recovery/force-new-cluster.ts), step by step. */
export interface ForceNewClusterStatus {
  step: ForceNewClusterStep;
  /** When quorum was first seen lost (RFC 3339); the recovery starts a grace period after it. */
  detectedAt: string;
  /** The surviving member chosen, its etcd member ID, and why it was chosen. */
  member?: string;
  memberID?: string;
  reason?: string;
  /** The members given up on: removed, then replaced by new members with new IDs. */
  lost?: string[];
  previousClusterID?: string;
  /** The cluster ID the survivor answered with after its forced start (etcd keeps it). */
  clusterID?: string;
  /** RFC 3339 times: the survivor chosen, its forced start seen, the cluster whole again. */
  startedAt?: string;
  forcedAt?: string;
  finishedAt?: string;
}

export interface ClusterCertificateStatus {
  secret: string;
  role: 'server' | 'peer' | 'operator-client';
  /** RFC 3339 time; unset when the Secret holds no readable certificate. */
  notAfter?: string;
  /** RFC 3339 time the operator re-issues it; auto TLS only. */
  renewAfter?: string;
}

/**
 * The bootstrap attempt under way after an earlier one did not form a cluster by its deadline. Each
 * attempt has its own cluster token and its own members; the failed attempt's are deleted with their
 * data before the next one is created, so two attempts never mix.
 */
export interface BootstrapRetryStatus {
  /** The attempt being prepared or run (the first, unrecorded, is 1). */
  attempt: number;
  /** The failed attempt's members, while they are being deleted; absent once they are gone. */
  discarding?: string[];
  /** What went wrong with the previous attempt. */
  reason: string;
  /** RFC 3339 time the previous attempt was given up. */
  startedAt: string;
}

export interface EtcdClusterStatus {
  phase?: ClusterPhase;
  /** "ready/desired", e.g. "3/3", for kubectl get. */
  ready?: string;
  readyMembers?: number;
  selector?: string;
  clusterID?: string;
  clusterToken?: string;
  /** Members are named `<cluster>-<ordinal>`; ordinals are never reused. */
  nextMemberOrdinal?: number;
  authEnabled?: boolean;
  observedGeneration?: number;
  observed?: ObservedClusterSpec;
  /** RFC 3339 time. */
  progressDeadline?: string;
  members?: ClusterMemberStatus[];
  /** Each TLS certificate's expiry as read from its Secret (shared/reconcile/certificates.ts). */
  certificates?: ClusterCertificateStatus[];
  /** The member replacement under way (one at a time), recorded before the lost member is deleted. */
  replacement?: MemberReplacementStatus;
  /** The in-place restore under way or last done (shared/plan/restore/in-place.ts). */
  inPlaceRestore?: InPlaceRestoreStatus;
  /** A static bootstrap that did not form and is being retried (shared/plan/membership/bootstrap-retry.ts). */
  bootstrapRetry?: BootstrapRetryStatus;
  /** The ForceNewCluster recovery under way or last done (shared/plan/recovery/force-new-cluster.ts). */
  forceNewCluster?: ForceNewClusterStatus;
  /** The step claimed by the operator (shared/api/cluster-operation.ts). */
  operation?: ClusterOperation;
  /** spec.maintenance.defrag.schedule's runs: the next one, and the progress of the last. */
  defragSchedule?: DefragScheduleStatus;
  /** Where the members' raft logs may still hold entries of etcd 3.5 (shared/plan/upgrade/wal-guard.ts). */
  legacyRaftEntries?: LegacyRaftEntries;
  conditions?: Condition[];
}

/**
 * Entries etcd 3.5 wrote in its v2 request format (every 3.5 member's start, cluster version
 * changes) stay in a member's write-ahead log until it saves a raft snapshot past them, and etcd
 * 3.7 crashes replaying them. Absent while a member runs 3.5, or until every member has been seen
 * on 3.6 or later.
 */
export interface LegacyRaftEntries {
  /** No such entry lies above this raft index (0: the cluster formed on 3.6 or later, none at all). */
  upToIndex: number;
}

export type EtcdCluster = EtcdfnObject<'EtcdCluster', EtcdClusterSpec, EtcdClusterStatus>;
export type EtcdClusterList = ObjectList<EtcdCluster>;
