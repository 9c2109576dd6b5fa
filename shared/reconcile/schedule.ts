// run-snapshot's I/O for an EtcdSnapshotSchedule: observe the schedule, its cluster and the
// EtcdSnapshots it owns, plan (shared/plan/schedule/plan.ts), then write the status with a
// compare-and-swap (the claim of a run), create the run's EtcdSnapshot, and apply retention.
//
// Crash safety: the run is claimed in status before its snapshot is created and the snapshot's name
// is fixed by the run's time, so a duplicate invocation loses the claim (409) or, at worst, gets
// AlreadyExists. Retention deletes the S3 object before the EtcdSnapshot, so the object is never
// orphaned: a crash in between leaves the EtcdSnapshot, and the next invocation deletes the object
// again (NotFound = deleted) and then the EtcdSnapshot (by uid). An object is deleted only when it
// names the snapshot as owner and has the ETag status recorded; otherwise it is kept and said so.
import type { V1Secret } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import type { EtcdSnapshot } from '../api/etcd-snapshot.ts';
import type { EtcdSnapshotSchedule } from '../api/etcd-snapshot-schedule.ts';
import { API_VERSION, ETCD_CLUSTER, ETCD_SNAPSHOT, ETCD_SNAPSHOT_SCHEDULE } from '../api/group.ts';
import type { EventContent } from '../builders/k8s-event.ts';
import type { HandlerOutcome } from '../events/handler.ts';
import type { KubeObject, ObjectRef } from '../k8s/objects.ts';
import { secretValues } from '../k8s/secrets.ts';
import { planRetentionResult, planSchedule } from '../plan/schedule/plan.ts';
import { isOwnedBy } from '../plan/schedule/run.ts';
import { pruneFile } from './snapshot-prune.ts';
import type { Context } from '../runtime/context.ts';
import { crashPoint } from '../runtime/crash.ts';
import { deleteOwnedObject } from '../s3/delete.ts';
import { ACCESS_KEY_ID, credentialsIn, ownerOf, SECRET_ACCESS_KEY, snapshotTarget } from '../s3/location.ts';
import { emitEvents } from './member-events.ts';
import { noteLogContext } from '../log-context.ts';
import type { ScheduleDeletion, ScheduleState } from '../plan/schedule/types.ts';

export interface ScheduleRef {
  namespace: string;
  name: string;
}

type Schedule = EtcdSnapshotSchedule & KubeObject;
type Snapshot = EtcdSnapshot & KubeObject;

const INSTANCE = 'run-snapshot';

export async function reconcileSchedule(ctx: Context, ref: ScheduleRef): Promise<HandlerOutcome> {
  // Over 80 lines: observe, plan, claim, create, prune and record in the order of their crash points.
  const observed = await observeSchedule(ctx, ref);
  if (!observed)
    return { result: 'done', summary: `EtcdSnapshotSchedule ${ref.namespace}/${ref.name} not found` };
  let schedule = observed.schedule;
  const plan = planSchedule(observed.state);
  noteLogContext({
    cluster: schedule.spec.clusterRef.name,
    step: plan.create ? 'create-snapshot' : plan.deletions.length > 0 ? 'prune' : 'none',
  });
  const done: string[] = [plan.summary];

  if (plan.statusChanged) {
    const written = await ctx.kube.replaceStatus<Schedule>({ ...schedule, status: plan.status });
    switch (written.kind) {
      case 'conflict':
        // Another invocation wrote first; its write brings the next event.
        return {
          result: 'done',
          summary: `EtcdSnapshotSchedule ${ref.name} changed meanwhile (another invocation has it): ${written.message}`,
        };
      case 'not-found':
        return { result: 'done', summary: `EtcdSnapshotSchedule ${ref.namespace}/${ref.name} is gone` };
      case 'invalid':
        throw new Error(`status of EtcdSnapshotSchedule ${ref.name} refused: ${written.message}`);
      case 'written':
        schedule = written.object;
    }
    await emitEvents(ctx, schedule, plan.events, INSTANCE);
    if (plan.create) await crashPoint('schedule:claimed');
  }

  if (plan.create) {
    const created = await ctx.kube.create<Snapshot>(plan.create);
    if (created.kind === 'created') await crashPoint('schedule:snapshot-created');
    if (created.kind === 'invalid') {
      const message = `EtcdSnapshot ${plan.create.metadata.name} was refused by the API server: ${created.message}`;
      await emitEvents(
        ctx,
        schedule,
        [{ type: 'Warning', reason: 'SnapshotCreateFailed', message }],
        INSTANCE,
      );
      done.push(message);
    } else {
      done.push(created.kind === 'created' ? 'created' : 'it exists already');
    }
  }

  if (plan.deletions.length > 0) {
    const problems: string[] = [];
    const pending: string[] = [];
    const pruned: EventContent[] = [];
    const secrets = secretReader(ctx);
    for (const deletion of plan.deletions) {
      const snapshot = observed.snapshots.find(s => s.metadata.uid === deletion.uid);
      if (!snapshot) continue;
      const pruneResult = await prune(ctx, snapshot, deletion, secrets);
      if (pruneResult.problem) problems.push(pruneResult.problem);
      else if (pruneResult.pending) pending.push(pruneResult.pending);
      else {
        pruned.push({
          type: 'Normal',
          reason: 'SnapshotPruned',
          message: `deleted EtcdSnapshot ${deletion.name}${pruneResult.object ? ` and ${pruneResult.object}` : ''}: ${deletion.why}${pruneResult.kept ? `; ${pruneResult.kept}` : ''}`,
        });
      }
    }
    await emitEvents(ctx, schedule, pruned, INSTANCE);
    const problem = problems.length > 0 ? problems.join('; ') : undefined;
    const result = planRetentionResult(schedule, problem, ctx.now());
    // Files still being removed: Retention is not applied yet, and not failed either.
    if (result.statusChanged && (problem || pending.length === 0)) {
      const written = await ctx.kube.replaceStatus<Schedule>({ ...schedule, status: result.status });
      if (written.kind === 'written' && problem) {
        await emitEvents(
          ctx,
          written.object,
          [{ type: 'Warning', reason: 'RetentionFailed', message: problem }],
          INSTANCE,
        );
      }
    }
    done.push(problem ? `retention stopped: ${problem}` : `pruned ${pruned.length}`);
    if (pending.length > 0) done.push(`waiting: ${pending.join('; ')}`);
  }
  return { result: 'done', summary: done.join('; ') };
}

/** The schedule and the facts its plan needs; undefined when the schedule does not exist. */
async function observeSchedule(
  ctx: Context,
  ref: ScheduleRef,
): Promise<{ schedule: Schedule; snapshots: Snapshot[]; state: ScheduleState } | undefined> {
  const read = await ctx.kube.get<Schedule>(objectRef(ETCD_SNAPSHOT_SCHEDULE.kind, ref.namespace, ref.name));
  if (read.kind === 'not-found') return undefined;
  const schedule = read.object;
  // All snapshots of the namespace, filtered by owner uid: the label is for people, the owner
  // reference is the truth (a schedule deleted and recreated under the same name owns nothing yet).
  const [all, cluster] = await Promise.all([
    ctx.kube.list<Snapshot>(API_VERSION, ETCD_SNAPSHOT.kind, ref.namespace),
    ctx.kube.find<EtcdCluster & KubeObject>(
      objectRef(ETCD_CLUSTER.kind, ref.namespace, schedule.spec.clusterRef.name),
    ),
  ]);
  const snapshots = all.filter(s => isOwnedBy(s, schedule.metadata.uid));
  const state: ScheduleState = {
    now: ctx.now(),
    schedule,
    snapshots,
    timings: ctx.settings.schedule,
  };
  if (cluster) state.cluster = cluster;
  return { schedule, snapshots, state };
}

/** Deletes the snapshot's object (when it has one), then the snapshot; a problem a person must fix, or undefined. */
type SecretReader = (namespace: string, name: string) => Promise<Record<string, string>>;

/** Reads each Secret once per invocation: every pruned snapshot of a schedule usually names the same one. */
function secretReader(ctx: Context): SecretReader {
  const read = new Map<string, Promise<Record<string, string>>>();
  return (namespace, name) => {
    const key = `${namespace}/${name}`;
    let values = read.get(key);
    if (!values) {
      values = ctx.kube
        .find<V1Secret & KubeObject>({ apiVersion: 'v1', kind: 'Secret', namespace, name })
        .then(secret => (secret ? secretValues(secret) : {}));
      read.set(key, values);
    }
    return values;
  };
}

interface PruneResult {
  /** What a person must fix; the EtcdSnapshot is kept. */
  problem?: string;
  /** The object deleted. */
  object?: string;
  /** Why the object was left in the store. */
  kept?: string;
  /** A Job is removing the snapshot's file; the EtcdSnapshot stays until it reports. */
  pending?: string;
}

async function prune(
  ctx: Context,
  snapshot: Snapshot,
  deletion: ScheduleDeletion,
  secrets: SecretReader,
): Promise<PruneResult> {
  const ns = snapshot.metadata.namespace ?? '';
  const s3 = snapshot.spec.destination.s3;
  const result: PruneResult = {};
  if (deletion.pvcFileSha256 && snapshot.spec.destination.pvc) {
    const file = await pruneFile(ctx, snapshot, deletion.pvcFileSha256);
    if (file.kind === 'pending') return { pending: file.message };
    if (file.kind === 'problem') return { problem: file.message };
    if (file.deleted) {
      await crashPoint('schedule:file-pruned');
      result.object = file.deleted;
    }
    if (file.kept) result.kept = file.kept;
  }
  if (deletion.s3Object && s3) {
    const target = snapshotTarget(s3, ownerOf(snapshot));
    const credentials = credentialsIn(await secrets(ns, target.secretName));
    if (!credentials) {
      return {
        problem: `cannot delete ${target.uri} of EtcdSnapshot ${deletion.name}: Secret ${target.secretName} is missing or lacks ${ACCESS_KEY_ID} and ${SECRET_ACCESS_KEY}; restore it (the EtcdSnapshot is kept until its object is deleted)`,
      };
    }
    const deleted = await deleteOwnedObject(
      target,
      credentials,
      deletion.etag ? { etag: deletion.etag } : {},
      ctx.settings.s3AllowList,
    );
    switch (deleted.kind) {
      case 'refused':
        return {
          problem: `S3 refused to delete ${target.uri} of EtcdSnapshot ${deletion.name}: ${deleted.code}: ${deleted.message}; give the key in Secret ${target.secretName} s3:DeleteObject (the EtcdSnapshot is kept until its object is deleted)`,
        };
      case 'unavailable':
        return {
          problem: `could not reach the store to delete ${target.uri} of EtcdSnapshot ${deletion.name}: ${deleted.message}; retried every minute`,
        };
      case 'kept':
        result.kept = deleted.message;
        break;
      case 'deleted':
        await crashPoint('schedule:object-pruned');
        result.object = target.uri;
        break;
      case 'gone':
        break;
    }
  }
  // By uid: a newer snapshot of the same name is left alone (conflict), one already gone is done.
  await ctx.kube.delete(objectRef(ETCD_SNAPSHOT.kind, ns, deletion.name), { uid: deletion.uid });
  return result;
}

function objectRef(kind: string, namespace: string, name: string): ObjectRef {
  return { apiVersion: API_VERSION, kind, namespace, name };
}
