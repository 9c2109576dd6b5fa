// `kubectl etcdfn move-leader <cluster> <member>`: hands raft leadership to the named member (its
// Pod name), e.g. before maintenance on the leader's node.
import { clusterStatus, moveLeader } from '../shared/etcd/index.ts';
import { CliError, getCluster, type Cli } from './context.ts';
import { etcdAccess, memberEndpoints } from './endpoints.ts';

export async function runMoveLeader(cli: Cli, name: string, member: string): Promise<string> {
  const cluster = await getCluster(cli, name);
  const members = await memberEndpoints(cli, cluster);
  const access = await etcdAccess(cli, cluster);
  const endpoints = members.map(m => m.endpoint);
  const i = members.findIndex(m => m.name === member);
  if (i < 0) {
    throw new CliError(
      `no running member "${member}" in ${name} (members: ${members.map(m => m.name).join(', ')})`,
    );
  }
  const statuses = await clusterStatus(endpoints, access);
  const target = statuses[i];
  if (!target || target.kind !== 'ok') {
    throw new CliError(`${member} does not answer: ${target?.message ?? 'not asked'}`);
  }
  if (target.status.isLearner) throw new CliError(`${member} is a learner and cannot lead`);
  const moved = await moveLeader(endpoints, target.status.memberId, access);
  if (moved.kind !== 'ok') throw new CliError(`leadership not moved: ${moved.message}`);
  const nameOf = (id: string) =>
    members[statuses.findIndex(s => s.kind === 'ok' && s.status.memberId === id)]?.name ?? id;
  return moved.previousLeaderId === moved.leaderId
    ? `${member} already leads ${name}`
    : `${member} leads ${name} now (was ${nameOf(moved.previousLeaderId)})`;
}
