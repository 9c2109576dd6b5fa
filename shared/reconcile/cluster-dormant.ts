// Pausing and resuming one member: spec.dormant (reconcile-member then deletes or starts its Pod),
// and the mark of a resume's seed (a held member run again; see shared/plan/membership/resume.ts).
import { API_VERSION, ETCD_MEMBER } from '../api/group.ts';
import type { ClusterState } from '../plan/cluster/types.ts';
import { RESUME_SEED_ANNOTATION } from '../plan/cluster/members.ts';
import type { Context } from '../runtime/context.ts';
import { crashPoint } from '../runtime/crash.ts';
import type { ActResult } from './act-result.ts';

/** `seed`: true marks the member as a resume's seed, false unmarks it (releases it), undefined leaves it. */
export async function setDormant(
  ctx: Context,
  state: ClusterState,
  name: string,
  dormant: boolean,
  seed?: boolean,
): Promise<ActResult> {
  const ref = {
    apiVersion: API_VERSION,
    kind: ETCD_MEMBER.kind,
    namespace: state.cluster.metadata.namespace ?? '',
    name,
  };
  const annotations = seed === undefined ? undefined : { [RESUME_SEED_ANNOTATION]: seed ? 'true' : null };
  const patched = await ctx.kube.mergePatch(ref, {
    spec: { dormant },
    ...(annotations && { metadata: { annotations } }),
  });
  if (patched.kind !== 'written') {
    const reason = `marking ${name} dormant=${dormant}${seed === undefined ? '' : ` seed=${seed}`}: ${patched.kind}`;
    return { ok: false, outcome: { result: 'retry', reason, status: 503 } };
  }
  await crashPoint('cluster:dormant-set');
  if (seed === false)
    return { ok: true, summary: `released the resume's seed ${name}: its deletion finishes` };
  const as = seed ? ' as the seed of the resume' : '';
  return {
    ok: true,
    summary: dormant ? `paused: member ${name} is dormant` : `resuming member ${name}${as}`,
  };
}
