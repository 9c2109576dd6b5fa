// The defragmentation policy's I/O (shared/plan/space/defrag.ts decides): each running member's
// database size for the plan, and one claimed member's defragmentation. The claim was written to
// status.operation before this runs; it is dropped here once the member serves again, and that
// status write is the event that plans the next member.
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { untilServing } from '../etcd/maintenance.ts';
import { defragOperation, size as mib } from '../plan/space/defrag.ts';
import type { ClusterState } from '../plan/cluster/types.ts';
import { statusWithoutClaim } from '../plan/space/defrag-schedule.ts';
import type { ClusterAction } from '../plan/cluster/step.ts';
import { memberUrls, runningMembers } from '../plan/cluster/members.ts';
import type { Context } from '../runtime/context.ts';
import { crashPoint } from '../runtime/crash.ts';
import { recordEvent } from './record-event.ts';
import type { MemberSpace } from '../plan/space/types.ts';
import type { ActResult } from './act-result.ts';

type Cluster = EtcdCluster & KubeObject;
type Defragment = Extract<ClusterAction, { kind: 'defragment' }>;

const FUNCTION = 'reconcile-cluster';
const BACK_SERVING_MS = 60_000;
const RELEASE_ATTEMPTS = 5;

/** Every running member's dbSize and dbSizeInUse, asked of the member itself; absent if it did not answer. */
export async function observeSpace(
  ctx: Context,
  state: ClusterState,
): Promise<Record<string, MemberSpace | undefined>> {
  const names = runningMembers(state).map(m => m.metadata.name ?? '');
  const answers = await ctx.etcd.clusterStatus(names.map(n => memberUrls(state.cluster, n).client));
  const space: Record<string, MemberSpace | undefined> = {};
  names.forEach((name, i) => {
    const answer = answers[i];
    space[name] =
      answer?.kind === 'ok'
        ? { dbSize: answer.status.dbSize, dbSizeInUse: answer.status.dbSizeInUse }
        : undefined;
  });
  return space;
}

export async function defragmentMember(
  ctx: Context,
  state: ClusterState,
  action: Defragment,
): Promise<ActResult> {
  await crashPoint('cluster:defrag-claimed');
  const retry = (reason: string): ActResult => ({
    ok: false,
    outcome: { result: 'retry', reason, status: 503 },
  });
  const before = await ctx.etcd.memberStatus(action.endpoint);
  if (before.kind !== 'ok') return retry(`${action.member} does not answer: ${before.message}`);
  const defragmented = await ctx.etcd.defragment(action.endpoint);
  if (defragmented.kind !== 'ok') return retry(`defragmenting ${action.member}: ${defragmented.message}`);
  if (!(await untilServing(() => ctx.etcd.healthRead([action.endpoint]), BACK_SERVING_MS)))
    return retry(`${action.member} did not serve reads again after its defragmentation`);
  const after = await ctx.etcd.memberStatus(action.endpoint);
  const size = after.kind === 'ok' ? mib(after.status.dbSize) : 'unknown';
  await recordEvent(
    ctx,
    state.cluster,
    {
      type: 'Normal',
      reason: 'MemberDefragmented',
      message: `defragmented ${action.member}: ${mib(before.status.dbSize)} → ${size} (${action.why})`,
    },
    FUNCTION,
  );
  await crashPoint('cluster:defrag-member-done');
  const released = await releaseClaim(ctx, state.cluster, action.member);
  const summary = `defragmented ${action.member}: ${mib(before.status.dbSize)} → ${size}`;
  return released ? { ok: true, summary } : retry(`${summary}; could not drop the claim`);
}

/**
 * Drops the claim on `member` from status.operation (re-read on a conflict: another invocation
 * may have written status meanwhile). True when it is gone, whoever dropped it.
 */
async function releaseClaim(ctx: Context, claimed: Cluster, member: string): Promise<boolean> {
  let cluster = claimed;
  for (let attempt = 0; attempt < RELEASE_ATTEMPTS; attempt++) {
    const claim = defragOperation(cluster.status);
    if (claim?.member !== member) return true;
    // A scheduled run's member is recorded as done in the same write (never defragmented twice).
    const status = statusWithoutClaim(cluster.status ?? {}, member, claim.run, true);
    const written = await ctx.kube.replaceStatus({ ...cluster, status });
    if (written.kind === 'written') return true;
    const read = await ctx.kube.get<Cluster>({
      apiVersion: cluster.apiVersion ?? '',
      kind: cluster.kind ?? '',
      namespace: cluster.metadata.namespace ?? '',
      name: cluster.metadata.name ?? '',
    });
    if (read.kind !== 'found') return true;
    cluster = read.object;
  }
  return false;
}
