// run-snapshot's I/O for retention of snapshots on a PVC: no function mounts a volume, so a Job
// (shared/builders/snapshot-job.ts snapshotDeleteJob) removes the file, and only the file this
// EtcdSnapshot wrote, unchanged. Each invocation looks at the Job and lets filePruneStep
// (shared/plan/snapshot/job.ts) decide: create it, wait (the Job's events bring run-snapshot
// back), or take its report.
import type { V1Job } from '@kubernetes/client-node';
import type { EtcdSnapshot } from '../api/etcd-snapshot.ts';
import { snapshotDeleteJob, snapshotDeleteJobName } from '../builders/snapshot-job.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { filePruneStep, type FilePruneResult } from '../plan/snapshot/job.ts';
import type { Context } from '../runtime/context.ts';
import { DELETE_CONTAINER } from '../snapshot-file/result.ts';
import { observeSnapshotJob } from './snapshot-job.ts';

type Snapshot = EtcdSnapshot & KubeObject;
const DELETE_DEADLINE_SECONDS = 300;

export async function pruneFile(ctx: Context, snapshot: Snapshot, sha256: string): Promise<FilePruneResult> {
  const job = await observeSnapshotJob(ctx, snapshot, snapshotDeleteJobName(snapshot), DELETE_CONTAINER);
  const step = filePruneStep(snapshot, job);
  if (step.kind !== 'create-job') return step;
  const built = snapshotDeleteJob(snapshot, {
    operatorImage: ctx.settings.operatorImage,
    sha256,
    activeDeadlineSeconds: DELETE_DEADLINE_SECONDS,
  });
  const created = await ctx.kube.create<V1Job & KubeObject>(built as V1Job & KubeObject);
  if (created.kind === 'invalid')
    return { kind: 'problem', message: `Job ${job.name} refused: ${created.message}` };
  const claim = snapshot.spec.destination.pvc?.claimName ?? '';
  return { kind: 'pending', message: `Job ${job.name} removes its file from claim ${claim}` };
}
