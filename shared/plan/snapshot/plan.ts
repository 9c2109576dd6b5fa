// run-snapshot's decision: given one EtcdSnapshot and what surrounds it (its cluster, which of the
// cluster's Pods are ready, whether the credentials Secret holds its keys, the endpoint policy's
// verdict, and the time), the single next step, with the snapshot status that goes with it. Pure:
// no I/O, no clock.
//
// The life of an on-demand snapshot:
//   (no phase) ──claim──▶ Started ──uploaded, read back and verified──▶ Complete (Verified True)
//        │                   │  ├──refused by S3, object already at the key──▶ Failed
//        │                   │  └──read back differs / etcd's hash fails──▶ Failed (Verified False, object kept)
//        │                   └──etcd/S3 unavailable──▶ Pending (retried after a delay, on the tick)
//        └──cluster missing / no ready member──▶ Pending (retried on the tick)
//   A Started snapshot whose attempt outlived the attempt timeout (its invocation crashed) is claimed
//   again; the object key is fixed by the snapshot's UID, and the retake deletes what the crashed
//   attempt left there (only an object naming this snapshot as owner) before writing it again.
//   Anything not Complete by the deadline, and anything a person must fix (a PVC destination, the
//   Secret missing or lacking keys, an endpoint the policy refuses), ends Failed with a message
//   saying what to do.
//   deletionPolicy Delete: a finalizer is added before the claim; on deletion the object is deleted
//   (only the one this snapshot wrote) and the finalizer removed.
import type { EtcdCluster } from '../../api/etcd-cluster.ts';
import type { EtcdSnapshot, EtcdSnapshotStatus, SnapshotPhase } from '../../api/etcd-snapshot.ts';
import { findCondition, setCondition, toKubeTime } from '../../conditions.ts';
import { CREDENTIAL_KEYS, ownerOf, snapshotTarget, type S3Target } from '../../s3/location.ts';
import { pvcUri, snapshotFilePath } from '../../snapshot-file/result.ts';
import { memberUrls } from '../cluster/members.ts';
import { jobOutcome, unscheduledOutcome } from './job.ts';
import {
  type SnapshotTimings,
  type SnapshotState,
  type SnapshotSource,
  type SnapshotStep,
  type SnapshotPlan,
  SNAPSHOT_READY,
  SNAPSHOT_FINALIZER,
} from './types.ts';

const FINAL: readonly (SnapshotPhase | undefined)[] = ['Complete', 'Failed'];

export function isFinished(snapshot: Pick<EtcdSnapshot, 'status'>): boolean {
  return FINAL.includes(snapshot.status?.phase);
}

export function planSnapshot(state: SnapshotState): SnapshotPlan {
  // Over 80 lines: one ordered pass of checks, each returning early, whose order plan-snapshot*.test.ts
  // pins (release, finished, claim in flight, source, credentials, claim). Splitting it is left open
  // (issue 31).
  const { snapshot, now, timings } = state;
  const name = snapshot.metadata.name ?? '';
  const status = snapshot.status ?? {};
  if (snapshot.metadata.deletionTimestamp) return planRelease(snapshot);
  if (isFinished(snapshot)) return nothing(snapshot, `EtcdSnapshot ${name} is ${status.phase}`);

  const destination = snapshot.spec.destination;
  if (!destination.s3 && !destination.pvc) {
    return fail(state, 'InvalidDestination', 'destination has neither s3 nor pvc; set one of them');
  }

  if (status.phase === 'Started' && destination.pvc) {
    // The Job has its own deadline (activeDeadlineSeconds): its result is recorded whenever it comes.
    const job = state.job;
    if (job?.state === 'finished') {
      const outcome = jobOutcome(snapshot, job);
      return {
        step: {
          kind: 'record-job',
          job: job.name,
          outcome,
          reason: `EtcdSnapshot ${name}: Job ${job.name} finished`,
        },
        status,
        statusChanged: false,
        events: [],
      };
    }
    const stuck = job?.state === 'running' ? unscheduledOutcome(snapshot, job, now) : undefined;
    if (stuck && job) {
      return {
        step: {
          kind: 'record-job',
          job: job.name,
          outcome: stuck,
          reason: `EtcdSnapshot ${name}: the Pod of Job ${job.name} cannot be scheduled`,
        },
        status,
        statusChanged: false,
        events: [],
      };
    }
    if (job?.state === 'running' || job === undefined) {
      return nothing(
        snapshot,
        `EtcdSnapshot ${name} is being taken by Job ${job?.name ?? '(not observed)'} since ${status.startTime}`,
      );
    }
  } else if (status.phase === 'Started') {
    const started = timeOf(status.startTime);
    if (started !== undefined && now.getTime() - started < timings.staleAfterMs) {
      return nothing(snapshot, `EtcdSnapshot ${name} is being taken since ${status.startTime}`);
    }
  }

  const deadline = deadlineOf(snapshot, timings);
  if (deadline !== undefined && now.getTime() >= deadline) {
    const last = findCondition(status.conditions, SNAPSHOT_READY)?.message;
    const minutes = Math.round(timings.deadlineMs / 60_000);
    return fail(
      state,
      'DeadlineExceeded',
      `not taken within ${minutes} minute${minutes === 1 ? '' : 's'} of its creation` +
        (status.phase === 'Started' ? `: the attempt started at ${status.startTime} never finished` : '') +
        (last && status.phase !== 'Started' ? `; last: ${last}` : '') +
        '; create a new EtcdSnapshot to try again',
    );
  }

  const secretProblem = credentialsProblem(state);
  if (secretProblem) return fail(state, 'CredentialsInvalid', secretProblem);
  if (state.endpoint && !state.endpoint.allowed) {
    return fail(state, state.endpoint.reason, `${state.endpoint.message}; then create a new EtcdSnapshot`);
  }
  if (destination.pvc && state.claimFound === false) {
    return fail(
      state,
      'ClaimNotFound',
      `PersistentVolumeClaim ${destination.pvc.claimName} (destination.pvc.claimName) not found in namespace ${snapshot.metadata.namespace ?? ''}; create it, then create a new EtcdSnapshot`,
    );
  }
  if (needsFinalizer(snapshot)) {
    return {
      step: {
        kind: 'add-finalizer',
        reason: `EtcdSnapshot ${name}: deletionPolicy Delete: adding ${SNAPSHOT_FINALIZER} before anything is stored`,
      },
      status,
      statusChanged: false,
      events: [],
    };
  }

  const clusterName = snapshot.spec.clusterRef.name;
  const ns = snapshot.metadata.namespace ?? '';
  const { cluster } = state;
  const until = deadline !== undefined ? ` (until ${toKubeTime(new Date(deadline))})` : '';
  if (!cluster) {
    return wait(
      state,
      'ClusterNotFound',
      `EtcdCluster ${clusterName} not found in namespace ${ns}; the snapshot is taken once it exists and has a ready member${until}`,
    );
  }
  if (cluster.metadata.deletionTimestamp) {
    return fail(state, 'ClusterDeleted', `EtcdCluster ${clusterName} is being deleted`);
  }
  // Client TLS and auth are fine: an S3 stream is dialled with the cluster's access
  // (shared/runtime/cluster-etcd.ts), and a PVC Job mounts the same Secrets (the CA, the operator's
  // client certificate, root's applied password: shared/builders/snapshot-job.ts).
  const sources = snapshotSources(cluster, state.readyPods);
  if (sources.length === 0) {
    return wait(
      state,
      'NoReadyMember',
      `EtcdCluster ${clusterName} has no ready voting member to take the snapshot from` +
        `${cluster.status?.phase ? ` (cluster phase ${cluster.status.phase})` : ''}; retried every minute${until}`,
    );
  }

  if (status.phase === 'Started' && destination.pvc) {
    return {
      step: {
        kind: 'start-job',
        sources,
        reason: `EtcdSnapshot ${name}: the Job of the attempt started at ${status.startTime} is missing; creating it`,
      },
      status,
      statusChanged: false,
      events: [],
    };
  }

  if (status.phase !== 'Started' && status.startTime) {
    const last = timeOf(status.startTime);
    if (last !== undefined && now.getTime() - last < timings.retryDelayMs) {
      const next = toKubeTime(new Date(last + timings.retryDelayMs));
      return nothing(
        snapshot,
        `EtcdSnapshot ${name}: the attempt of ${status.startTime} failed; next attempt after ${next}`,
      );
    }
  }

  if (destination.pvc) {
    const uri = pvcUri(
      destination.pvc.claimName,
      snapshotFilePath(destination.pvc.subPath, ownerOf(snapshot)),
    );
    return claim(state, uri, reason => ({ kind: 'claim-job', sources, uri, reason }));
  }
  const target = snapshotTarget(destination.s3!, ownerOf(snapshot));
  const retake = status.phase === 'Started';
  return claim(state, target.uri, reason => ({ kind: 'claim', retake, sources, target, reason }));
}

/**
 * Members to stream from, in order of preference: ready voters that are not the leader (a snapshot
 * reads the whole backend; the leader has enough to do), then the leader. Learners are left out:
 * their data may lag. Readiness is the Pod's own, the freshest fact there is.
 */
export function snapshotSources(cluster: EtcdCluster, readyPods: readonly string[]): SnapshotSource[] {
  const ready = new Set(readyPods);
  return (cluster.status?.members ?? [])
    .filter(m => m.role !== 'learner' && ready.has(m.name))
    .map(m => ({ member: m.name, endpoint: memberUrls(cluster, m.name).client, leader: m.leader === true }))
    .sort((a, b) => Number(a.leader) - Number(b.leader) || a.member.localeCompare(b.member));
}

/** deletionPolicy Delete needs the finalizer before anything is stored. */
export function needsFinalizer(snapshot: EtcdSnapshot): boolean {
  return (
    snapshot.spec.deletionPolicy === 'Delete' &&
    !snapshot.metadata.deletionTimestamp &&
    !(snapshot.metadata.finalizers ?? []).includes(SNAPSHOT_FINALIZER)
  );
}

/** An EtcdSnapshot being deleted: release its finalizer, deleting its object first under deletionPolicy Delete. */
function planRelease(snapshot: EtcdSnapshot): SnapshotPlan {
  const name = snapshot.metadata.name ?? '';
  const status = snapshot.status ?? {};
  if (!(snapshot.metadata.finalizers ?? []).includes(SNAPSHOT_FINALIZER)) {
    return nothing(snapshot, `EtcdSnapshot ${name} is being deleted`);
  }
  const s3 = snapshot.spec.destination.s3;
  const release = (
    object: { target: S3Target; etag?: string } | undefined,
    reason: string,
  ): SnapshotPlan => ({
    step: { kind: 'release', ...(object && { object }), reason: `EtcdSnapshot ${name}: ${reason}` },
    status,
    statusChanged: false,
    events: [],
  });
  if (snapshot.spec.deletionPolicy !== 'Delete' || !s3) {
    return release(undefined, 'deletionPolicy Retain: the stored object is kept');
  }
  const target = snapshotTarget(s3, ownerOf(snapshot));
  const recorded = status.artifact;
  // Never claimed (no attempt ever started), so nothing was stored: no store to ask (its Secret may
  // well be what is missing).
  if (!recorded && !status.startTime)
    return release(undefined, 'no attempt was ever made: nothing to delete');
  if (recorded && recorded.uri !== target.uri) {
    return release(undefined, `status records ${recorded.uri}, not ${target.uri}: no object is deleted`);
  }
  // Without a recorded ETag (an attempt that stopped before recording), the owner metadata decides.
  const etag = recorded?.etag;
  return release(
    { target, ...(etag && { etag }) },
    `deletionPolicy Delete: deleting ${target.uri} (only if this snapshot wrote it)`,
  );
}

function credentialsProblem(state: SnapshotState): string | undefined {
  const s3 = state.snapshot.spec.destination.s3;
  if (!s3) return undefined;
  const secret = s3.credentialsSecretRef.name;
  const ns = state.snapshot.metadata.namespace ?? '';
  const keys = CREDENTIAL_KEYS.join(' and ');
  const present = state.secretKeys;
  if (present === undefined) {
    return `Secret ${secret} (destination.s3.credentialsSecretRef) not found in namespace ${ns}; create it with the keys ${keys}, then create a new EtcdSnapshot`;
  }
  const missing = CREDENTIAL_KEYS.filter(k => !present.includes(k));
  if (missing.length > 0) {
    return `Secret ${secret} lacks ${missing.join(' and ')} (or they are empty); it must hold ${keys}; fix it, then create a new EtcdSnapshot`;
  }
  return undefined;
}

function claim(state: SnapshotState, uri: string, step: (reason: string) => SnapshotStep): SnapshotPlan {
  const { snapshot, now } = state;
  const status = snapshot.status ?? {};
  const name = snapshot.metadata.name ?? '';
  const retake = status.phase === 'Started';
  const message = retake
    ? `the attempt started at ${status.startTime} did not finish (its invocation stopped); taking the snapshot again to ${uri}`
    : `taking a snapshot of EtcdCluster ${snapshot.spec.clusterRef.name} to ${uri}`;
  const next: EtcdSnapshotStatus = {
    ...status,
    phase: 'Started',
    startTime: toKubeTime(now),
    conditions: setCondition(
      status.conditions,
      { type: SNAPSHOT_READY, status: 'False', reason: retake ? 'Retaking' : 'InProgress', message },
      now,
    ),
  };
  delete next.completionTime;
  delete next.artifact;
  return {
    step: step(`EtcdSnapshot ${name}: ${message}`),
    status: next,
    statusChanged: true,
    events: [
      {
        type: retake ? 'Warning' : 'Normal',
        reason: retake ? 'SnapshotRetaken' : 'SnapshotStarted',
        message,
      },
    ],
  };
}

function nothing(snapshot: EtcdSnapshot, reason: string): SnapshotPlan {
  return {
    step: { kind: 'nothing', reason },
    status: snapshot.status ?? {},
    statusChanged: false,
    events: [],
  };
}

function wait(state: SnapshotState, reason: string, message: string): SnapshotPlan {
  const status = state.snapshot.status ?? {};
  const conditions = setCondition(
    status.conditions,
    { type: SNAPSHOT_READY, status: 'False', reason, message },
    state.now,
  );
  const next: EtcdSnapshotStatus = { ...status, phase: 'Pending', conditions };
  const changed = status.phase !== 'Pending' || conditions !== status.conditions;
  return {
    step: { kind: 'wait', reason: `EtcdSnapshot ${state.snapshot.metadata.name}: ${message}` },
    status: changed ? next : status,
    statusChanged: changed,
    events: [],
  };
}

function fail(state: SnapshotState, reason: string, message: string): SnapshotPlan {
  const status = state.snapshot.status ?? {};
  const next: EtcdSnapshotStatus = {
    ...status,
    phase: 'Failed',
    completionTime: toKubeTime(state.now),
    conditions: setCondition(
      status.conditions,
      { type: SNAPSHOT_READY, status: 'False', reason, message },
      state.now,
    ),
  };
  return {
    step: { kind: 'fail', reason: `EtcdSnapshot ${state.snapshot.metadata.name}: ${message}` },
    status: next,
    statusChanged: true,
    events: [{ type: 'Warning', reason: 'SnapshotFailed', message }],
  };
}

function deadlineOf(snapshot: EtcdSnapshot, timings: SnapshotTimings): number | undefined {
  const created = timeOf(snapshot.metadata.creationTimestamp);
  return created === undefined ? undefined : created + timings.deadlineMs;
}

function timeOf(value: Date | string | undefined): number | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? undefined : ms;
}
