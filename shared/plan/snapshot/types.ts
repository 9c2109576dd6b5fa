// The vocabulary of run-snapshot's decision, shared by its deciders (plan.ts, job.ts, outcome.ts) and
// by the act layer: what is observed, the closed union of steps, the plan returned, the conditions.
// No decision here, and no import of a decider.
import type { EtcdCluster } from '../../api/etcd-cluster.ts';
import type { EtcdSnapshot, EtcdSnapshotStatus } from '../../api/etcd-snapshot.ts';
import type { EventContent } from '../../builders/k8s-event.ts';
import type { EndpointVerdict } from '../../s3/endpoint-policy.ts';
import { type S3Target } from '../../s3/location.ts';
import type { SnapshotArtifact } from '../../api/etcd-snapshot.ts';

export const SNAPSHOT_READY = 'Ready';

export const SNAPSHOT_VERIFIED = 'Verified';

/** On EtcdSnapshots with deletionPolicy Delete: the object is deleted before the EtcdSnapshot goes. */
export const SNAPSHOT_FINALIZER = 'etcdfn.io/snapshot-object';

/** How long things may take; from the environment (snapshotTimingsFromEnv). */
export interface SnapshotTimings {
  /** One attempt (stream + upload) is abandoned by its own invocation after this long. */
  attemptTimeoutMs: number;
  /** A Started snapshot older than this was left by an invocation that died: take it again. */
  staleAfterMs: number;
  /** After a failed attempt (etcd or S3 unavailable), wait this long before the next. */
  retryDelayMs: number;
  /** A snapshot not Complete this long after its creation is Failed. */
  deadlineMs: number;
}

export interface SnapshotState {
  now: Date;
  snapshot: EtcdSnapshot;
  /** The EtcdCluster named by spec.clusterRef; undefined when it does not exist. */
  cluster?: EtcdCluster;
  /** Names of the cluster's Pods that are Ready and not being deleted. */
  readyPods: readonly string[];
  /** Keys of the credentials Secret that have a non-empty value; undefined when there is no such Secret. */
  secretKeys?: readonly string[];
  /** The endpoint policy's verdict on destination.s3.endpoint; undefined when not checked. */
  endpoint?: EndpointVerdict;
  /** destination.pvc: whether the claim exists; undefined when not checked. */
  claimFound?: boolean;
  /** destination.pvc, phase Started: the Job of the attempt; undefined when not checked. */
  job?: AttemptJob;
  timings: SnapshotTimings;
}

/** A member to stream the snapshot from. */
export interface SnapshotSource {
  member: string;
  endpoint: string;
  leader: boolean;
}

export type SnapshotStep =
  /** Nothing to do now; the status stays as it is. */
  | { kind: 'nothing'; reason: string }
  /** Stay Pending until something changes (the tick comes back); the status says why. */
  | { kind: 'wait'; reason: string }
  /** Final: the status says Failed and why. */
  | { kind: 'fail'; reason: string }
  /**
   * Write the status (Started) with a compare-and-swap; if it lands, stream from the first source
   * that serves a snapshot (followers first) to `target`.
   */
  | { kind: 'claim'; retake: boolean; sources: SnapshotSource[]; target: S3Target; reason: string }
  /**
   * destination.pvc: write the status (Started) with a compare-and-swap; if it lands, create the
   * attempt's Job (shared/builders/snapshot-job.ts), which streams from the first of `sources`.
   */
  | { kind: 'claim-job'; sources: SnapshotSource[]; uri: string; reason: string }
  /** destination.pvc, Started, the attempt's Job missing (a crash after the claim): create it. */
  | { kind: 'start-job'; sources: SnapshotSource[]; reason: string }
  /** destination.pvc: the attempt's Job finished: write the status for `outcome`, then delete the Job. */
  | { kind: 'record-job'; job: string; outcome: TakeOutcome; reason: string }
  /** Add SNAPSHOT_FINALIZER (deletionPolicy Delete), before anything is written to the store. */
  | { kind: 'add-finalizer'; reason: string }
  /**
   * The EtcdSnapshot is being deleted and holds SNAPSHOT_FINALIZER: delete `object` (when set; only
   * if it names this snapshot as owner and, when recorded, has the recorded ETag), then remove the
   * finalizer.
   */
  | { kind: 'release'; object?: { target: S3Target; etag?: string }; reason: string };

export interface SnapshotPlan {
  step: SnapshotStep;
  status: EtcdSnapshotStatus;
  statusChanged: boolean;
  /** Kubernetes Events about the snapshot, recorded once the status is written. */
  events: EventContent[];
}

/** A stored snapshot's record: everything but the ETag, which only S3 has. */
export type StoredArtifact = Required<Omit<SnapshotArtifact, 'etag'>> & Pick<SnapshotArtifact, 'etag'>;

/** The outcome of one attempt, as the adapter reports it. */
export type TakeOutcome =
  /** Uploaded, read back from the store and verified: `verification` says what was checked. */
  | { kind: 'verified'; source: string; artifact: StoredArtifact; verification: string }
  /**
   * Uploaded, but what the store returns is not what was sent, or fails etcd's integrity check, or
   * cannot be read back: final, unverified, the object kept (recorded in `artifact`).
   */
  | {
      kind: 'verify-failed';
      source: string;
      /** What is known of the kept object (a PVC step that failed its check reports only where). */
      artifact: SnapshotArtifact;
      reason: 'ChecksumMismatch' | 'IntegrityCheckFailed' | 'ObjectChanged' | 'ReadBackRefused';
      message: string;
    }
  /** An object this snapshot did not write is at the key: final, nothing overwritten. */
  | { kind: 'object-exists'; message: string }
  /** The PVC is full or cannot be written (VolumeFull, VolumeReadOnly): final. */
  | { kind: 'volume-refused'; reason: string; message: string }
  /** The endpoint policy refused the endpoint: final. */
  | { kind: 'endpoint-refused'; reason: string; message: string }
  /** No member served a snapshot, or the stream broke off. */
  | { kind: 'etcd-unavailable'; message: string }
  /** The store refused (4xx): final. */
  | { kind: 's3-refused'; code: string; message: string }
  /** The store was unreachable or failed (network, 5xx): retried. */
  | { kind: 's3-unavailable'; message: string }
  /** The attempt ran out of time and was aborted: retried. */
  | { kind: 'timed-out'; message: string }
  /** The credentials Secret changed between planning and the attempt: final, like a missing one. */
  | { kind: 'credentials-invalid'; message: string }
  /** Anything else that went wrong during the attempt (an API call failed, say): retried. */
  | { kind: 'error'; message: string };

/** The Job of the attempt in progress, as observed. */
export type AttemptJob =
  | { name: string; state: 'absent' }
  | {
      name: string;
      state: 'running';
      /** The Job's Pod is not scheduled (PodScheduled False): since when, and the scheduler's words. */
      unscheduled?: { since: string; message: string };
    }
  | {
      name: string;
      state: 'finished';
      succeeded: boolean;
      /** The Job's Failed condition reason (BackoffLimitExceeded, DeadlineExceeded). */
      jobReason?: string;
      /** The save container's termination message; undefined when its Pod is gone. */
      report?: string;
    };
