// `kubectl etcdfn defrag <cluster> [--member NAME]`: defragments members one at a time, followers
// first and the leader last (a member is briefly unresponsive while its file is rewritten; moving
// through the leader last costs at most one election), waiting for each to answer healthy again
// before the next. Refused while any member is unhealthy or a CORRUPT alarm is active: a
// defragmentation must never take out the last healthy voter. NOSPACE is what it is for.
import { defragment, healthRead, memberStatus, untilServing } from '../shared/etcd/index.ts';
import { CliError, getCluster, type Cli } from './context.ts';
import { etcdAccess, memberEndpoints } from './endpoints.ts';
import { formatBytes } from './format.ts';
import { askHealth, healthView, type HealthView, type MemberHealth } from './health.ts';

/** The members to defragment, in order, or the reason to refuse. Pure. */
export function defragOrder(
  view: HealthView,
  only?: string,
): { kind: 'order'; members: MemberHealth[] } | { kind: 'refused'; reason: string } {
  const unhealthy = view.members.filter(m => !m.healthy);
  if (unhealthy.length > 0) {
    const why = unhealthy.map(m => `${m.name}: ${m.problem ?? 'unhealthy'}`).join('; ');
    return { kind: 'refused', reason: `not every member is healthy (${why}); defragment once it is` };
  }
  if (view.alarms.some(a => a.alarm === 'CORRUPT')) {
    return { kind: 'refused', reason: 'a CORRUPT alarm is active; replace the corrupt member first' };
  }
  if (view.alarmsError) return { kind: 'refused', reason: `alarms unknown: ${view.alarmsError}` };
  let members = [...view.members];
  if (only !== undefined) {
    members = members.filter(m => m.name === only);
    if (members.length === 0) {
      const names = view.members.map(m => m.name).join(', ');
      return { kind: 'refused', reason: `no running member "${only}" (members: ${names})` };
    }
  }
  const followers = members.filter(m => !m.leader).sort((a, b) => a.name.localeCompare(b.name));
  return { kind: 'order', members: [...followers, ...members.filter(m => m.leader)] };
}

export async function runDefrag(
  cli: Cli,
  name: string,
  opts: { member?: string; timeout: number },
  print: (line: string) => void,
): Promise<number> {
  const cluster = await getCluster(cli, name);
  const endpoints = await memberEndpoints(cli, cluster);
  const access = await etcdAccess(cli, cluster);
  const view = healthView(name, cli.namespace, endpoints, await askHealth(endpoints, access));
  const order = defragOrder(view, opts.member);
  if (order.kind === 'refused') throw new CliError(`defragmentation of ${name} refused: ${order.reason}`);
  for (const [i, m] of order.members.entries()) {
    const role = m.leader ? 'leader' : m.learner ? 'learner' : 'follower';
    print(`[${i + 1}/${order.members.length}] defragmenting ${m.name} (${role}, ${formatBytes(m.dbSize)})…`);
    const result = await defragment(m.endpoint, access);
    if (result.kind !== 'ok') throw new CliError(`defragmentation of ${m.name} failed: ${result.message}`);
    if (!(await untilServing(() => healthRead([m.endpoint], access), opts.timeout * 1000))) {
      throw new CliError(
        `${m.name} did not answer healthy within ${opts.timeout}s after defragmentation; stopped`,
      );
    }
    const after = await memberStatus(m.endpoint, access);
    const size = after.kind === 'ok' ? formatBytes(after.status.dbSize) : '?';
    print(`    ${m.name}: ${formatBytes(m.dbSize)} → ${size}`);
  }
  print(`defragmented ${order.members.length} member(s) of ${name}`);
  return 0;
}
