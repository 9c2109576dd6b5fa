// reconcile-cluster's I/O for volumes and database sizes: raise members' spec.storage.size (the
// grow-volumes step of shared/plan/space/volume-growth.ts), and read each ready member's dbSize and
// dbSizeInUse for the status. Raising a size is idempotent: a crash part way leaves some members
// raised, and the next invocation raises the rest.
import { API_VERSION, ETCD_MEMBER } from '../api/group.ts';
import type { ClusterAction } from '../plan/cluster/plan.ts';
import type { ClusterState } from '../plan/cluster/types.ts';
import { isMemberReady, memberUrls, runningMembers } from '../plan/cluster/members.ts';
import type { Context } from '../runtime/context.ts';
import type { ActResult } from './act-result.ts';

export async function growVolumes(
  ctx: Context,
  state: ClusterState,
  action: Extract<ClusterAction, { kind: 'grow-volumes' }>,
): Promise<ActResult> {
  const namespace = state.cluster.metadata.namespace ?? '';
  for (const name of action.members) {
    const ref = { apiVersion: API_VERSION, kind: ETCD_MEMBER.kind, namespace, name };
    const patched = await ctx.kube.mergePatch(ref, { spec: { storage: { size: action.size } } });
    if (patched.kind === 'conflict' || patched.kind === 'invalid') {
      const why = patched.kind === 'invalid' ? patched.message : 'conflict';
      return {
        ok: false,
        outcome: { result: 'retry', reason: `growing ${name}'s volume: ${why}`, status: 503 },
      };
    }
  }
  return { ok: true, summary: `volume size ${action.size} set on ${action.members.join(', ')}` };
}

/** dbSize and dbSizeInUse of every ready member, asked of each member itself (in parallel). */
export async function observeDbSizes(ctx: Context, state: ClusterState): Promise<ClusterState['dbSizes']> {
  const ready = runningMembers(state).filter(m => isMemberReady(state, m));
  if (ready.length === 0) return undefined;
  const names = ready.map(m => m.metadata.name ?? '');
  const statuses = await ctx.etcd.clusterStatus(names.map(n => memberUrls(state.cluster, n).client));
  const sizes: NonNullable<ClusterState['dbSizes']> = {};
  statuses.forEach((s, i) => {
    if (s.kind === 'ok') sizes[names[i]] = { dbSize: s.status.dbSize, dbSizeInUse: s.status.dbSizeInUse };
  });
  return sizes;
}
