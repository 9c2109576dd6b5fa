// What a ForceNewCluster recovery needs beyond the ordinary observation: each running member's own
// report about itself (member ID, cluster ID, raft index, the leader it knows), asked on the
// member's own endpoint, which answers without a quorum. Only members whose Pod is up are asked.
import type { MemberStatus } from '../etcd/status.ts';
import type { ClusterState } from '../plan/cluster/types.ts';
import { memberUrls, podOf, runningMembers } from '../plan/cluster/members.ts';
import type { Context } from '../runtime/context.ts';

export async function selfReports(ctx: Context, state: ClusterState): Promise<Record<string, MemberStatus>> {
  const asked = runningMembers(state).filter(m => {
    const pod = podOf(state, m);
    return pod !== undefined && !pod.deleting && pod.phase === 'Running';
  });
  const answers = await Promise.all(
    asked.map(async m => {
      const name = m.metadata.name ?? '';
      const answer = await ctx.etcd.memberStatus(memberUrls(state.cluster, name).client);
      return [name, answer] as const;
    }),
  );
  const reports: Record<string, MemberStatus> = {};
  for (const [name, answer] of answers) if (answer.kind === 'ok') reports[name] = answer.status;
  return reports;
}
