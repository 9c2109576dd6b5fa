// `kubectl etcdfn health <cluster>`: each member asked on its own endpoint: does it answer, does it
// know a leader, does a linearizable read through it succeed (as `etcdctl endpoint health`), its
// revision, raft term, database size and any alarm. Exit 1 when anything is unhealthy.
import {
  clusterStatus,
  healthRead,
  listAlarms,
  reportedLeader,
  type Alarm,
  type AlarmKind,
  type AlarmsResult,
  type EndpointStatus,
  type EtcdConnectionOptions,
  type HealthResult,
} from '../shared/etcd/index.ts';
import { getCluster, type Cli } from './context.ts';
import { etcdAccess, memberEndpoints, type MemberEndpoint } from './endpoints.ts';
import { formatBytes, structuredOutput, table } from './format.ts';

export interface MemberHealth {
  name: string;
  endpoint: string;
  memberId?: string;
  healthy: boolean;
  /** Why it is not healthy; absent when it is. */
  problem?: string;
  leader: boolean;
  learner: boolean;
  version?: string;
  revision?: number;
  raftTerm?: number;
  raftIndex?: number;
  dbSize?: number;
  dbSizeInUse?: number;
  alarms: AlarmKind[];
}

export interface HealthView {
  cluster: string;
  namespace: string;
  healthy: boolean;
  leaderId?: string;
  members: MemberHealth[];
  alarms: Alarm[];
  /** Set when the alarm list could not be read. */
  alarmsError?: string;
}

/** What the members answered, each list in the order of the members asked. */
export interface HealthAnswers {
  statuses: readonly EndpointStatus[];
  reads: readonly HealthResult[];
  alarms: AlarmsResult;
}

/** Asks every member for its status and a linearizable read, and the cluster for its alarms. */
export async function askHealth(
  members: readonly MemberEndpoint[],
  access: EtcdConnectionOptions = {},
): Promise<HealthAnswers> {
  const endpoints = members.map(m => m.endpoint);
  const [statuses, reads, alarms] = await Promise.all([
    clusterStatus(endpoints, access),
    Promise.all(endpoints.map(e => healthRead([e], access))),
    listAlarms(endpoints, access),
  ]);
  return { statuses, reads, alarms };
}

export function healthView(
  cluster: string,
  namespace: string,
  members: readonly MemberEndpoint[],
  answers: HealthAnswers,
): HealthView {
  const { statuses, reads, alarms: alarmsResult } = answers;
  const alarms = alarmsResult.kind === 'ok' ? alarmsResult.alarms : [];
  const leaderId = reportedLeader(statuses);
  const rows = members.map((m, i): MemberHealth => {
    const s = statuses[i];
    const read = reads[i];
    if (!s || s.kind !== 'ok') {
      const problem = s ? s.message : 'not asked';
      return { ...m, healthy: false, problem, leader: false, learner: false, alarms: [] };
    }
    const st = s.status;
    const problem =
      st.leaderId === undefined
        ? 'knows no leader'
        : read?.kind !== 'ok'
          ? `linearizable read failed: ${read?.message ?? 'not asked'}`
          : undefined;
    return {
      ...m,
      memberId: st.memberId,
      healthy: problem === undefined,
      ...(problem ? { problem } : {}),
      leader: st.memberId === leaderId,
      learner: st.isLearner,
      version: st.version,
      ...(read?.kind === 'ok' ? { revision: read.revision } : {}),
      raftTerm: st.raftTerm,
      raftIndex: st.raftIndex,
      dbSize: st.dbSize,
      dbSizeInUse: st.dbSizeInUse,
      alarms: alarms.filter(a => a.memberId === st.memberId).map(a => a.alarm),
    };
  });
  return {
    cluster,
    namespace,
    healthy: rows.every(r => r.healthy) && alarms.length === 0 && alarmsResult.kind === 'ok',
    ...(leaderId ? { leaderId } : {}),
    members: rows,
    alarms,
    ...(alarmsResult.kind !== 'ok' ? { alarmsError: alarmsResult.message } : {}),
  };
}

export function renderHealth(view: HealthView): string {
  const rows = view.members.map(m => [
    m.name,
    m.memberId ?? '?',
    m.healthy ? 'healthy' : 'UNHEALTHY',
    m.leader ? '*' : '',
    m.learner ? 'learner' : 'voter',
    m.version ?? '?',
    m.revision === undefined ? '?' : String(m.revision),
    m.raftTerm === undefined ? '?' : String(m.raftTerm),
    formatBytes(m.dbSize),
    formatBytes(m.dbSizeInUse),
    m.alarms.join(',') || '-',
  ]);
  const lines = [
    `etcd health of ${view.namespace}/${view.cluster}`,
    '',
    table(
      [
        'NAME',
        'ID',
        'HEALTH',
        'LEADER',
        'ROLE',
        'VERSION',
        'REVISION',
        'RAFT TERM',
        'DB SIZE',
        'IN USE',
        'ALARMS',
      ],
      rows,
    ),
    '',
  ];
  for (const m of view.members) if (m.problem) lines.push(`${m.name}: ${m.problem}`);
  if (view.alarmsError) lines.push(`alarms unknown: ${view.alarmsError}`);
  for (const a of view.alarms) {
    const who = view.members.find(m => m.memberId === a.memberId)?.name ?? a.memberId;
    const fix =
      a.alarm === 'NOSPACE'
        ? 'writes are refused; free space with `kubectl etcdfn compact` and `kubectl etcdfn defrag`, then `kubectl etcdfn alarms --disarm`'
        : 'members disagree on their data; do not disarm: replace the member and check your snapshots';
    lines.push(`alarm ${a.alarm} on ${who}: ${fix}`);
  }
  lines.push(view.healthy ? 'Healthy.' : 'NOT HEALTHY.');
  return lines.join('\n');
}

/** Asks every member; the exit code is 0 only when the whole cluster is healthy. */
export async function runHealth(
  cli: Cli,
  name: string,
  output: string | undefined,
): Promise<{ text: string; exitCode: number }> {
  const cluster = await getCluster(cli, name);
  const members = await memberEndpoints(cli, cluster);
  const view = healthView(
    name,
    cli.namespace,
    members,
    await askHealth(members, await etcdAccess(cli, cluster)),
  );
  return { text: structuredOutput(output, view) ?? renderHealth(view), exitCode: view.healthy ? 0 : 1 };
}
