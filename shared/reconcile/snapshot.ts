// run-snapshot's I/O: observe one EtcdSnapshot and what surrounds it, plan
// (shared/plan/snapshot/plan.ts), then write the status (compare-and-swap) and, after a successful
// claim, stream the snapshot from a ready member to S3 and record the result.
//
// Crash safety: the claim is in status before any byte moves; the object key is fixed by the
// snapshot's UID and the object names the snapshot as its owner, so a retake finds (and replaces)
// only its own leftover; a snapshot is Complete only after the stored object was read back and
// verified; the result is written with a compare-and-swap against the claim, so an invocation whose
// claim was taken over (it outlived the stale timeout) cannot record its result over the newer
// attempt's. Crash points (shared/runtime/crash.ts) follow each side effect.
import { metrics } from '../runtime/metrics.ts';
import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import type { EtcdSnapshot } from '../api/etcd-snapshot.ts';
import type { EtcdMember } from '../api/etcd-member.ts';
import { API_VERSION, ETCD_CLUSTER, ETCD_MEMBER, ETCD_SNAPSHOT } from '../api/group.ts';
import type { HandlerOutcome } from '../events/handler.ts';
import type { KubeObject, ObjectRef } from '../k8s/objects.ts';
import { clusterSelector } from '../names.ts';
import { ownMembers, podsOfMembers } from '../plan/cluster/members.ts';
import { isPodReady } from '../plan/member/pod.ts';
import { planSnapshot } from '../plan/snapshot/plan.ts';
import { planOutcome } from '../plan/snapshot/outcome.ts';
import { clusterEtcd } from '../runtime/cluster-etcd.ts';
import type { Context } from '../runtime/context.ts';
import { crashPoint } from '../runtime/crash.ts';
import { secretValues } from '../k8s/secrets.ts';
import { endpointVerdict } from '../s3/client.ts';
import { deleteOwnedObject } from '../s3/delete.ts';
import { ACCESS_KEY_ID, credentialsIn, SECRET_ACCESS_KEY } from '../s3/location.ts';
import { uploadStream } from '../s3/upload.ts';
import { emitEvents } from './member-events.ts';
import { claimExists, deleteAttemptJob, observeAttemptJob, startAttemptJob } from './snapshot-job.ts';
import { noteLogContext } from '../log-context.ts';
import {
  SNAPSHOT_FINALIZER,
  type SnapshotPlan,
  type SnapshotState,
  type TakeOutcome,
} from '../plan/snapshot/types.ts';
import type { ClaimStep } from './snapshot-verify.ts';
import { verify } from './snapshot-verify.ts';

export interface SnapshotRef {
  namespace: string;
  name: string;
}

type Snapshot = EtcdSnapshot & KubeObject;

const INSTANCE = 'run-snapshot';
/** Result writes retried after a conflict that left our claim in place (someone edited labels, say). */
const RESULT_WRITE_ATTEMPTS = 3;

export async function reconcileSnapshot(ctx: Context, ref: SnapshotRef): Promise<HandlerOutcome> {
  const observed = await observeSnapshot(ctx, ref);
  if (!observed) return { result: 'done', summary: `EtcdSnapshot ${ref.namespace}/${ref.name} not found` };
  const { snapshot, state, secret } = observed;
  const plan = planSnapshot(state);
  const { step } = plan;
  noteLogContext({ cluster: snapshot.spec.clusterRef.name, snapshot: ref.name, step: step.kind });
  if (step.kind === 'nothing') return { result: 'done', summary: step.reason };
  if (step.kind === 'add-finalizer') return addFinalizer(ctx, snapshot, step.reason);
  if (step.kind === 'release') return release(ctx, snapshot, step, secret ?? {});
  if (step.kind === 'start-job') {
    return {
      result: 'done',
      summary: `${step.reason}: ${await startAttemptJob(ctx, snapshot, step.sources, state.cluster)}`,
    };
  }
  if (step.kind === 'record-job') return recordJob(ctx, snapshot, step);
  if (!plan.statusChanged) return { result: 'done', summary: step.reason };
  const written = await ctx.kube.replaceStatus<Snapshot>({ ...snapshot, status: plan.status });
  switch (written.kind) {
    case 'conflict':
      // Another invocation wrote first (a claim, most likely); its write brings the next event.
      return {
        result: 'done',
        summary: `EtcdSnapshot ${ref.name} changed meanwhile (another invocation has it): ${written.message}`,
      };
    case 'not-found':
      return { result: 'done', summary: `EtcdSnapshot ${ref.namespace}/${ref.name} is gone` };
    case 'invalid':
      throw new Error(`status of EtcdSnapshot ${ref.name} refused: ${written.message}`);
    case 'written':
      break;
  }
  countFinished(snapshot, written.object);
  await emitEvents(ctx, written.object, plan.events, INSTANCE);
  if (step.kind === 'claim-job') {
    await crashPoint('snapshot:claimed');
    return {
      result: 'done',
      summary: `${step.reason}: ${await startAttemptJob(ctx, written.object, step.sources, state.cluster)}`,
    };
  }
  if (step.kind !== 'claim') return { result: 'done', summary: step.reason };
  await crashPoint('snapshot:claimed');
  return takeAndRecord(ctx, written.object, step, secret ?? {});
}

/**
 * The snapshot and the facts its plan needs, plus the credentials Secret's values for the upload;
 * undefined when the snapshot does not exist.
 */
export async function observeSnapshot(
  ctx: Context,
  ref: SnapshotRef,
): Promise<{ snapshot: Snapshot; state: SnapshotState; secret?: Record<string, string> } | undefined> {
  const read = await ctx.kube.get<Snapshot>(
    objectRef(API_VERSION, ETCD_SNAPSHOT.kind, ref.namespace, ref.name),
  );
  if (read.kind === 'not-found') return undefined;
  const snapshot = read.object;
  const state: SnapshotState = {
    now: ctx.now(),
    snapshot,
    readyPods: [],
    timings: ctx.settings.snapshot,
  };
  const secretName = snapshot.spec.destination.s3?.credentialsSecretRef.name;
  if (snapshot.metadata.deletionTimestamp) {
    // Releasing the finalizer may delete the object: the Secret's keys are all it needs.
    const secret = secretName
      ? await ctx.kube.find<V1Secret & KubeObject>(objectRef('v1', 'Secret', ref.namespace, secretName))
      : undefined;
    return { snapshot, state, ...(secret && { secret: secretValues(secret) }) };
  }
  // Finished snapshots need nothing else (the tick skips them too, but events still come).
  if (snapshot.status?.phase === 'Complete' || snapshot.status?.phase === 'Failed')
    return { snapshot, state };
  const clusterName = snapshot.spec.clusterRef.name;
  const endpoint = snapshot.spec.destination.s3?.endpoint;
  if (endpoint) state.endpoint = await endpointVerdict(endpoint, ctx.settings.s3AllowList);
  if (snapshot.spec.destination.pvc) {
    state.claimFound = await claimExists(ctx, snapshot);
    if (snapshot.status?.phase === 'Started') state.job = await observeAttemptJob(ctx, snapshot);
  }
  const selector = clusterSelector(clusterName);
  const [cluster, members, pods, secret] = await Promise.all([
    ctx.kube.find<EtcdCluster & KubeObject>(
      objectRef(API_VERSION, ETCD_CLUSTER.kind, ref.namespace, clusterName),
    ),
    ctx.kube.list<EtcdMember & KubeObject>(API_VERSION, ETCD_MEMBER.kind, ref.namespace, selector),
    ctx.kube.list<V1Pod & KubeObject>('v1', 'Pod', ref.namespace, selector),
    secretName
      ? ctx.kube.find<V1Secret & KubeObject>(objectRef('v1', 'Secret', ref.namespace, secretName))
      : undefined,
  ]);
  if (cluster) state.cluster = cluster;
  // Only Pods of this cluster's members: one left by an earlier cluster of the same name holds its data.
  const own = cluster ? podsOfMembers(ownMembers(cluster, members), pods) : [];
  state.readyPods = own.filter(isPodReady).map(p => p.metadata.name ?? '');
  if (!secret) return { snapshot, state };
  const values = secretValues(secret);
  state.secretKeys = Object.keys(values);
  return { snapshot, state, secret: values };
}

async function takeAndRecord(
  ctx: Context,
  claimed: Snapshot,
  step: ClaimStep,
  secret: Record<string, string>,
): Promise<HandlerOutcome> {
  // Whatever goes wrong, the claim is settled here rather than left to go stale.
  const outcome = await take(ctx, claimed, step, secret).catch((err: unknown): TakeOutcome => ({
    kind: 'error',
    message: err instanceof Error ? err.message : String(err),
  }));
  const plan = planOutcome(claimed, outcome, ctx.now());
  const recorded = await writeResult(ctx, claimed, plan);
  if (recorded !== 'written') {
    return {
      result: 'done',
      summary: `EtcdSnapshot ${claimed.metadata.name}: ${recorded}; result not recorded`,
    };
  }
  return { result: 'done', summary: plan.step.reason };
}

/** destination.pvc: the attempt's Job finished; its result goes into the status, then the Job goes. */
async function recordJob(
  ctx: Context,
  snapshot: Snapshot,
  step: Extract<SnapshotPlan['step'], { kind: 'record-job' }>,
): Promise<HandlerOutcome> {
  const plan = planOutcome(snapshot, step.outcome, ctx.now());
  const recorded = await writeResult(ctx, snapshot, plan);
  if (recorded !== 'written') {
    return {
      result: 'done',
      summary: `EtcdSnapshot ${snapshot.metadata.name}: ${recorded}; result not recorded`,
    };
  }
  await deleteAttemptJob(ctx, snapshot, step.job);
  return { result: 'done', summary: `${plan.step.reason}; Job ${step.job} deleted` };
}

/** One attempt: the first member that serves a snapshot, streamed to S3 with the Secret's keys. */
async function take(
  ctx: Context,
  snapshot: Snapshot,
  step: ClaimStep,
  secret: Record<string, string>,
): Promise<TakeOutcome> {
  // The planner claims only when both keys are there; this guards the types, not a real case.
  const credentials = credentialsIn(secret);
  if (!credentials) {
    const message = `Secret ${step.target.secretName} lacks ${ACCESS_KEY_ID} or ${SECRET_ACCESS_KEY}; fix it, then create a new EtcdSnapshot`;
    return { kind: 'credentials-invalid', message };
  }
  const timeout = AbortSignal.timeout(ctx.settings.snapshot.attemptTimeoutMs);
  const failures: string[] = [];
  const namespace = snapshot.metadata.namespace ?? '';
  const etcd = clusterEtcd(ctx, () =>
    ctx.kube.find<EtcdCluster & KubeObject>(
      objectRef(API_VERSION, ETCD_CLUSTER.kind, namespace, snapshot.spec.clusterRef.name),
    ),
  );
  for (const source of step.sources) {
    if (timeout.aborted) break;
    const opened = await etcd.snapshot(source.endpoint);
    if (opened.kind !== 'ok') {
      failures.push(`${source.member}: ${opened.message}`);
      continue;
    }
    const uploaded = await uploadStream(step.target, credentials, opened.stream, {
      signal: timeout,
      allowList: ctx.settings.s3AllowList,
      onStreaming: () => crashPoint('snapshot:streaming'),
    });
    switch (uploaded.kind) {
      case 'uploaded': {
        await crashPoint('snapshot:uploaded');
        const artifact = {
          uri: uploaded.uri,
          sizeBytes: uploaded.sizeBytes,
          checksum: `sha256:${uploaded.sha256}`,
          revision: opened.revision,
          etag: uploaded.etag,
        };
        return verify(ctx, step, { credentials, member: source.member, artifact, signal: timeout });
      }
      case 'refused':
        return { kind: 's3-refused', code: uploaded.code, message: uploaded.message };
      case 'unavailable':
        return { kind: 's3-unavailable', message: uploaded.message };
      case 'aborted':
        return { kind: 'timed-out', message: uploaded.message };
      case 'source-failed':
        return {
          kind: 'etcd-unavailable',
          message: `the stream from ${source.member} broke off: ${uploaded.message}`,
        };
      case 'object-exists':
        return { kind: 'object-exists', message: uploaded.message };
      case 'endpoint-refused':
        return { kind: 'endpoint-refused', reason: uploaded.reason, message: uploaded.message };
    }
  }
  if (timeout.aborted) {
    const seconds = Math.round(ctx.settings.snapshot.attemptTimeoutMs / 1000);
    return { kind: 'timed-out', message: `no member served a snapshot within ${seconds} s` };
  }
  return { kind: 'etcd-unavailable', message: `no member served a snapshot (${failures.join('; ')})` };
}

/** deletionPolicy Delete: the finalizer goes on before anything is stored. */
async function addFinalizer(ctx: Context, snapshot: Snapshot, reason: string): Promise<HandlerOutcome> {
  const finalizers = [...(snapshot.metadata.finalizers ?? []), SNAPSHOT_FINALIZER];
  const written = await ctx.kube.replace<Snapshot>({
    ...snapshot,
    metadata: { ...snapshot.metadata, finalizers },
  });
  if (written.kind === 'invalid')
    throw new Error(`EtcdSnapshot ${snapshot.metadata.name}: ${written.message}`);
  if (written.kind === 'written') await crashPoint('snapshot:finalizer-added');
  // The update brings the next event, which claims.
  return { result: 'done', summary: written.kind === 'written' ? reason : `${reason}: ${written.kind}` };
}

/** The EtcdSnapshot is being deleted: its object (deletionPolicy Delete, only if it wrote it), then the finalizer. */
async function release(
  ctx: Context,
  snapshot: Snapshot,
  step: Extract<SnapshotPlan['step'], { kind: 'release' }>,
  secret: Record<string, string>,
): Promise<HandlerOutcome> {
  const name = snapshot.metadata.name ?? '';
  let outcome = step.reason;
  if (step.object) {
    const { target, etag } = step.object;
    const credentials = credentialsIn(secret);
    const problem = (message: string) =>
      emitEvents(ctx, snapshot, [{ type: 'Warning', reason: 'SnapshotObjectNotDeleted', message }], INSTANCE);
    if (!credentials) {
      const message = `cannot delete ${target.uri}: Secret ${target.secretName} is missing or lacks ${ACCESS_KEY_ID} and ${SECRET_ACCESS_KEY}; restore it, or remove the finalizer ${SNAPSHOT_FINALIZER} to keep the object`;
      await problem(message);
      return { result: 'retry', reason: `EtcdSnapshot ${name}: ${message}`, status: 503 };
    }
    const deleted = await deleteOwnedObject(
      target,
      credentials,
      etag ? { etag } : {},
      ctx.settings.s3AllowList,
    );
    switch (deleted.kind) {
      case 'refused': {
        const message = `S3 refused to delete ${target.uri}: ${deleted.code}: ${deleted.message}; give the key in Secret ${target.secretName} s3:DeleteObject, or remove the finalizer ${SNAPSHOT_FINALIZER} to keep the object`;
        await problem(message);
        return { result: 'retry', reason: `EtcdSnapshot ${name}: ${message}`, status: 503 };
      }
      case 'unavailable':
        return {
          result: 'retry',
          reason: `EtcdSnapshot ${name}: deleting ${target.uri}: ${deleted.message}`,
          status: 503,
        };
      case 'kept':
        await emitEvents(
          ctx,
          snapshot,
          [{ type: 'Warning', reason: 'SnapshotObjectKept', message: deleted.message }],
          INSTANCE,
        );
        outcome = deleted.message;
        break;
      case 'deleted':
        await crashPoint('snapshot:object-deleted');
        outcome = `deleted ${target.uri}`;
        break;
      case 'gone':
        outcome = `${target.uri} was not there`;
        break;
    }
  }
  const finalizers = (snapshot.metadata.finalizers ?? []).filter(f => f !== SNAPSHOT_FINALIZER);
  const written = await ctx.kube.replace<Snapshot>({
    ...snapshot,
    metadata: { ...snapshot.metadata, finalizers },
  });
  if (written.kind === 'invalid') throw new Error(`EtcdSnapshot ${name}: ${written.message}`);
  return {
    result: 'done',
    summary: `EtcdSnapshot ${name}: ${outcome}; finalizer ${written.kind === 'written' ? 'removed' : written.kind}`,
  };
}

/**
 * Writes the attempt's result against the claim. A conflict that left the claim in place (the same
 * startTime, still Started) is retried on the fresh object; a claim taken over is left alone.
 */
async function writeResult(
  ctx: Context,
  claimed: Snapshot,
  plan: SnapshotPlan,
): Promise<'written' | 'claim lost' | 'gone'> {
  let current = claimed;
  for (let attempt = 0; attempt < RESULT_WRITE_ATTEMPTS; attempt++) {
    const written = await ctx.kube.replaceStatus<Snapshot>({ ...current, status: plan.status });
    if (written.kind === 'written') {
      countFinished(current, written.object);
      await crashPoint('snapshot:result-written');
      await emitEvents(ctx, written.object, plan.events, INSTANCE);
      return 'written';
    }
    if (written.kind === 'not-found') return 'gone';
    if (written.kind === 'invalid')
      throw new Error(`status of EtcdSnapshot ${claimed.metadata.name} refused: ${written.message}`);
    const read = await ctx.kube.get<Snapshot>(
      objectRef(
        API_VERSION,
        ETCD_SNAPSHOT.kind,
        claimed.metadata.namespace ?? '',
        claimed.metadata.name ?? '',
      ),
    );
    if (read.kind === 'not-found') return 'gone';
    const still =
      read.object.status?.phase === 'Started' && read.object.status.startTime === claimed.status?.startTime;
    if (!still) return 'claim lost';
    current = read.object;
  }
  throw new Error(
    `EtcdSnapshot ${claimed.metadata.name}: the result could not be written after ${RESULT_WRITE_ATTEMPTS} conflicts`,
  );
}

/** etcdfn_snapshots_total and _bytes_total: counted once, by the write that ended the snapshot. */
function countFinished(before: Snapshot, after: Snapshot): void {
  const phase = after.status?.phase;
  if ((phase !== 'Complete' && phase !== 'Failed') || before.status?.phase === phase) return;
  metrics.snapshots.inc({ outcome: phase });
  if (phase === 'Complete') metrics.snapshotBytes.inc(after.status?.artifact?.sizeBytes ?? 0);
}

function objectRef(apiVersion: string, kind: string, namespace: string, name: string): ObjectRef {
  return { apiVersion, kind, namespace, name };
}
