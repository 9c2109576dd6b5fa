// `kubectl etcdfn alarms <cluster> [--disarm]`: etcd's active alarms, by member name. --disarm
// clears them; etcd raises NOSPACE again on the next write while the database is still over its
// quota, so the list after disarming is read back and printed, and exit 1 means some remain.
import { disarmAlarm, listAlarms, type Alarm, clusterStatus } from '../shared/etcd/index.ts';
import { CliError, getCluster, type Cli } from './context.ts';
import { etcdAccess, memberEndpoints } from './endpoints.ts';
import { structuredOutput, table } from './format.ts';

export interface AlarmsView {
  cluster: string;
  alarms: (Alarm & { member: string })[];
  /** Alarms cleared by this run (with --disarm). */
  disarmed: (Alarm & { member: string })[];
}

export function renderAlarms(view: AlarmsView): string {
  const lines: string[] = [];
  for (const a of view.disarmed) lines.push(`disarmed ${a.alarm} on ${a.member}`);
  if (view.alarms.length === 0) lines.push(`No active alarm on ${view.cluster}.`);
  else {
    lines.push(
      table(
        ['MEMBER', 'ID', 'ALARM'],
        view.alarms.map(a => [a.member, a.memberId, a.alarm]),
      ),
    );
  }
  return lines.join('\n');
}

export async function runAlarms(
  cli: Cli,
  name: string,
  opts: { disarm?: boolean; output?: string },
): Promise<{ text: string; exitCode: number }> {
  const cluster = await getCluster(cli, name);
  const members = await memberEndpoints(cli, cluster);
  const access = await etcdAccess(cli, cluster);
  const endpoints = members.map(m => m.endpoint);
  const statuses = await clusterStatus(endpoints, access);
  const nameOf = (id: string): string => {
    const i = statuses.findIndex(s => s.kind === 'ok' && s.status.memberId === id);
    return i >= 0 ? (members[i]?.name ?? id) : id;
  };
  const named = (a: Alarm) => ({ ...a, member: nameOf(a.memberId) });
  let listed = await listAlarms(endpoints, access);
  if (listed.kind !== 'ok') throw new CliError(`cannot read alarms: ${listed.message}`);
  const disarmed: AlarmsView['disarmed'] = [];
  if (opts.disarm) {
    for (const alarm of listed.alarms) {
      const after = await disarmAlarm(endpoints, alarm, access);
      if (after.kind !== 'ok')
        throw new CliError(`cannot disarm ${alarm.alarm} on ${nameOf(alarm.memberId)}: ${after.message}`);
      disarmed.push(named(alarm));
      listed = after;
    }
  }
  const view: AlarmsView = { cluster: name, alarms: listed.alarms.map(named), disarmed };
  const exitCode = opts.disarm && view.alarms.length > 0 ? 1 : 0;
  return { text: structuredOutput(opts.output, view) ?? renderAlarms(view), exitCode };
}
