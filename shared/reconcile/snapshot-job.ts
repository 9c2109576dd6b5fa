// run-snapshot's I/O for snapshots to a PVC: observe the claim and the attempt's Job, create the Job
// (shared/builders/snapshot-job.ts), and delete it once its result is in the EtcdSnapshot's status.
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import type { EtcdSnapshot } from '../api/etcd-snapshot.ts';
import { tlsSecretNames } from '../tls/secret-names.ts';
import { snapshotJob, snapshotJobName } from '../builders/snapshot-job.ts';
import { rootAuthSecretName } from '../etcd/root-access.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { unscheduledSince } from '../plan/snapshot/job.ts';
import type { Context } from '../runtime/context.ts';
import { SAVE_CONTAINER } from '../snapshot-file/result.ts';
import type { SnapshotSource } from '../plan/snapshot/types.ts';
import type { AttemptJob } from '../plan/snapshot/types.ts';

type Snapshot = EtcdSnapshot & KubeObject;
const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';

export async function claimExists(ctx: Context, snapshot: Snapshot): Promise<boolean | undefined> {
  const pvc = snapshot.spec.destination.pvc;
  if (!pvc) return undefined;
  const found = await ctx.kube.find<V1PersistentVolumeClaim & KubeObject>({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    namespace: snapshot.metadata.namespace ?? '',
    name: pvc.claimName,
  });
  return found !== undefined;
}

/** The Job of the attempt claimed at status.startTime, and once finished, its Pod's report. */
export function observeAttemptJob(ctx: Context, snapshot: Snapshot): Promise<AttemptJob> {
  return observeSnapshotJob(
    ctx,
    snapshot,
    snapshotJobName(snapshot, snapshot.status?.startTime ?? ''),
    SAVE_CONTAINER,
  );
}

/**
 * A Job the snapshot owns, by name: absent (or another snapshot's of the same name), running (and
 * whether the scheduler has placed its Pod), or finished with `container`'s termination message.
 */
export async function observeSnapshotJob(
  ctx: Context,
  snapshot: Snapshot,
  name: string,
  container: string,
): Promise<AttemptJob> {
  const namespace = snapshot.metadata.namespace ?? '';
  const job = await ctx.kube.find<V1Job & KubeObject>({
    apiVersion: 'batch/v1',
    kind: 'Job',
    namespace,
    name,
  });
  // A Job of the same name left by an earlier EtcdSnapshot of the same name is not ours.
  const ours = job?.metadata.ownerReferences?.some(o => o.uid === snapshot.metadata.uid);
  if (!job || !ours) return { name, state: 'absent' };
  const done = (job.status?.conditions ?? []).find(
    c => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
  const pods = (
    await ctx.kube.list<V1Pod & KubeObject>('v1', 'Pod', namespace, `${JOB_NAME_LABEL}=${name}`)
  ).filter(p => p.metadata.ownerReferences?.some(o => o.uid === job.metadata.uid));
  if (!done) {
    const unscheduled = pods.map(unscheduledSince).find(u => u !== undefined);
    return { name, state: 'running', ...(unscheduled && { unscheduled }) };
  }
  const reports = pods
    .map(p => p.status?.containerStatuses?.find(c => c.name === container)?.state?.terminated)
    .filter(t => t !== undefined)
    .sort((a, b) => String(a.finishedAt ?? '').localeCompare(String(b.finishedAt ?? '')));
  const report = reports.at(-1)?.message;
  return {
    name,
    state: 'finished',
    succeeded: done.type === 'Complete',
    ...(done.type === 'Failed' && done.reason && { jobReason: done.reason }),
    ...(report !== undefined && { report }),
  };
}

/** Creates the attempt's Job; one that already exists (a retried invocation's) is the same Job. */
export async function startAttemptJob(
  ctx: Context,
  snapshot: Snapshot,
  sources: SnapshotSource[],
  cluster: EtcdCluster | undefined,
): Promise<string> {
  const tls = cluster ? tlsSecretNames(cluster) : {};
  // Auth on: the agent logs in as root with the operator's applied copy, as S3 snapshots do.
  const rootSecret = cluster ? rootAuthSecretName(cluster) : undefined;
  const job = snapshotJob(snapshot, {
    ...(tls.clientServer && {
      tls: {
        serverSecret: tls.clientServer,
        ...(tls.operatorClient && { operatorClientSecret: tls.operatorClient }),
      },
    }),
    ...(rootSecret && { auth: { rootSecret } }),
    operatorImage: ctx.settings.operatorImage,
    subPath: (snapshot.spec.destination.pvc?.subPath ?? '').replace(/\/+$/, ''),
    startTime: snapshot.status?.startTime ?? '',
    sources: sources.map(s => ({ member: s.member, endpoint: s.endpoint })),
    activeDeadlineSeconds: Math.max(1, Math.round(ctx.settings.snapshot.attemptTimeoutMs / 1000)),
  });
  const created = await ctx.kube.create<V1Job & KubeObject>(job as V1Job & KubeObject);
  if (created.kind === 'invalid') throw new Error(`Job ${job.metadata?.name} refused: ${created.message}`);
  return `Job ${job.metadata?.name} ${created.kind === 'created' ? 'created' : 'already exists'}`;
}

/** The Job's result is in the status: the Job and its Pod can go. */
export async function deleteAttemptJob(ctx: Context, snapshot: Snapshot, name: string): Promise<void> {
  await ctx.kube.delete(
    { apiVersion: 'batch/v1', kind: 'Job', namespace: snapshot.metadata.namespace ?? '', name },
    { propagationPolicy: 'Background' },
  );
}
