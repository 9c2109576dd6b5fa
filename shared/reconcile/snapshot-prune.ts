// run-snapshot's I/O for retention of snapshots on a PVC: no function mounts a volume, so a Job
// (shared/builders/snapshot-job.ts snapshotDeleteJob) removes the file, and only the file this
// EtcdSnapshot wrote, unchanged. Each invocation looks at the Job: absent, it is created; running,
// the snapshot waits (the Job's events bring run-snapshot back); finished, its report decides.
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { EtcdSnapshot } from '../api/etcd-snapshot.ts';
import { snapshotDeleteJob, snapshotDeleteJobName } from '../builders/snapshot-job.ts';
import type { KubeObject } from '../k8s/objects.ts';
import type { Context } from '../runtime/context.ts';
import { DELETE_CONTAINER, parseDeleteReport } from '../snapshot-file/result.ts';

type Snapshot = EtcdSnapshot & KubeObject;
const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
const DELETE_DEADLINE_SECONDS = 300;

export type FilePruneResult =
  /** The Job runs (or was just created): the EtcdSnapshot stays until it reports. */
  | { kind: 'pending'; message: string }
  /** Done with the file (deleted, already gone, or left with a reason): the EtcdSnapshot may go. */
  | { kind: 'done'; deleted?: string; kept?: string }
  /** A person must look: the Job failed without a report. The EtcdSnapshot is kept. */
  | { kind: 'problem'; message: string };

export async function pruneFile(ctx: Context, snapshot: Snapshot, sha256: string): Promise<FilePruneResult> {
  const namespace = snapshot.metadata.namespace ?? '';
  const name = snapshotDeleteJobName(snapshot);
  const claim = snapshot.spec.destination.pvc?.claimName ?? '';
  const job = await ctx.kube.find<V1Job & KubeObject>({
    apiVersion: 'batch/v1',
    kind: 'Job',
    namespace,
    name,
  });
  const ours = job?.metadata.ownerReferences?.some(o => o.uid === snapshot.metadata.uid);
  if (!job || !ours) {
    const built = snapshotDeleteJob(snapshot, {
      operatorImage: ctx.settings.operatorImage,
      sha256,
      activeDeadlineSeconds: DELETE_DEADLINE_SECONDS,
    });
    const created = await ctx.kube.create<V1Job & KubeObject>(built as V1Job & KubeObject);
    if (created.kind === 'invalid')
      return { kind: 'problem', message: `Job ${name} refused: ${created.message}` };
    return { kind: 'pending', message: `Job ${name} removes its file from claim ${claim}` };
  }
  const finished = (job.status?.conditions ?? []).find(
    c => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
  if (!finished) return { kind: 'pending', message: `Job ${name} is removing its file from claim ${claim}` };
  const pods = await ctx.kube.list<V1Pod & KubeObject>('v1', 'Pod', namespace, `${JOB_NAME_LABEL}=${name}`);
  const text = pods
    .filter(p => p.metadata.ownerReferences?.some(o => o.uid === job.metadata.uid))
    .map(p => p.status?.containerStatuses?.find(c => c.name === DELETE_CONTAINER)?.state?.terminated)
    .find(t => t?.message)?.message;
  const report = parseDeleteReport(text);
  if (!report) {
    const why = finished.type === 'Failed' ? `failed (${finished.reason ?? 'no reason'})` : 'left no report';
    const tail = (text ?? '').trim().slice(0, 300);
    return {
      kind: 'problem',
      message: `Job ${name}, removing the file of EtcdSnapshot ${snapshot.metadata.name} from claim ${claim}, ${why}${tail ? `: ${tail}` : ''}; delete the Job to try again (the EtcdSnapshot is kept until its file is handled)`,
    };
  }
  if (report.kind === 'kept') return { kind: 'done', kept: report.message };
  return { kind: 'done', ...(report.kind === 'deleted' && { deleted: `pvc://${claim}: ${report.message}` }) };
}
