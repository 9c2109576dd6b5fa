// What reconcile-cluster observes before it decides: the cluster, its members and their Pods, the
// objects it owns, and etcd's own view of the membership. Gathered fresh on every invocation.
import type { V1NetworkPolicy, V1PodDisruptionBudget, V1Service } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../api/etcd-cluster.ts';
import type { EtcdMember } from '../../api/etcd-member.ts';
import type { EtcdMember as EtcdMembership } from '../../etcd/members.ts';
import type { MemberStatus as SelfReport } from '../../etcd/status.ts';
import type { RecoverySnapshot } from '../recovery/types.ts';
import type { RestoreResolution } from '../restore/types.ts';
import type { MemberSpace } from '../space/types.ts';
import type { CertificateObservation } from '../tls/types.ts';

export interface PodFacts {
  name: string;
  ready: boolean;
  phase: string;
  deleting: boolean;
  /** Why a container cannot run (e.g. "ErrImagePull: …", "CrashLoopBackOff: …"), if it cannot. */
  problem?: string;
  /** The last failed restore step of a restoring seed (its termination message, parsed). */
  restoreFailure?: { reason: string; message: string };
  /** Its etcd starts with --force-new-cluster (a quorum-loss recovery's survivor, for one start). */
  forceNewCluster?: boolean;
  /** The --snapshot-count its etcd runs with, read from the Pod (absent when it carries none). */
  snapshotCount?: number;
}

/** etcd's membership as seen through the members' client URLs. */
export type EtcdView =
  | {
      reachable: true;
      members: EtcdMembership[];
      clusterId: string;
      leaderId?: string;
      /** Alarms the answering member reports for the cluster (etcd replicates them). */
      alarms?: ('NOSPACE' | 'CORRUPT')[];
      /** Read only while a member runs a newer minor than the target (a downgrade). */
      downgrade?: DowngradeFacts;
    }
  | { reachable: false; error: string };

/** etcd's downgrade state, as its members report it (shared/etcd/downgrade.ts). */
export interface DowngradeFacts {
  /** Whether a downgrade is enabled (any member says so). */
  enabled: boolean;
  /** Storage version (e.g. "3.7.0") by etcd member ID (hex), for the members that answered. */
  storage: Record<string, string>;
}

export interface ClusterState {
  now: Date;
  cluster: EtcdCluster;
  /** EtcdMembers labelled with this cluster, including those being deleted. */
  members: EtcdMember[];
  pods: PodFacts[];
  /** Undefined when there was no member to ask. */
  etcd?: EtcdView;
  services: { headless?: V1Service; client?: V1Service };
  pdb?: V1PodDisruptionBudget;
  /** spec.bootstrap.restore resolved, while the cluster has not formed (shared/plan/restore/source.ts). */
  restore?: RestoreResolution;
  /** spec.inPlaceRestore resolved, while status has not recorded the request (plan/restore/in-place.ts). */
  inPlaceRestore?: RestoreResolution;
  /** spec.recovery.policy RestoreLatestSnapshot while quorum looks lost: the snapshot it would restore. */
  recoverySnapshot?: RecoverySnapshot;
  networkPolicy?: V1NetworkPolicy;
  /**
   * What each running member's own endpoint says about itself (by member name; only those that
   * answered), asked only while a ForceNewCluster recovery chooses its survivor.
   */
  selfReports?: Record<string, SelfReport>;
  /** etcd's dbSize and dbSizeInUse per ready member, by member name (plan/space/volume-growth.ts). */
  dbSizes?: Record<string, { dbSize: number; dbSizeInUse: number }>;
  /** Where the operator runs (its functions reach the members' client port from there). */
  operatorNamespace?: string;
  /** Each running member's database size by member name, read only under a defragmentation policy. */
  space?: Record<string, MemberSpace | undefined>;
  /**
   * Each ready member's raft indexes as it reports them itself, by member name (only those that
   * answered); read only while the etcd 3.5 entries guard needs them (../upgrade/wal-guard.ts).
   */
  raftIndexes?: Record<string, RaftIndexes>;
  /**
   * The certificate Secrets as they are after this invocation kept them issued (reconcile/
   * certificates.ts), for status.certificates; unset when nobody observed them, and status keeps
   * what it has.
   */
  certificates?: CertificateObservation;
}

/** What one member says of its raft log: its committed index and the index it has applied. */
export interface RaftIndexes {
  raftIndex: number;
  applied: number;
}
