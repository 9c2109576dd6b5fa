// `kubectl etcdfn members <cluster>`: etcd's own view, asked from the members through their Pod
// IPs with the project's etcd adapter, side by side with what the EtcdCluster status says. The
// comparison (diffMembers) and the rendering are pure.
import type { EtcdClusterStatus } from '../shared/api/types.ts';
import { createEtcdAdapter } from '../shared/etcd/adapter.ts';
import type { EtcdConnectionOptions } from '../shared/etcd/connection.ts';
import type { EtcdMember } from '../shared/etcd/members.ts';
import { reportedLeader, type EndpointStatus, type MemberStatus } from '../shared/etcd/status.ts';
import { CliError, getCluster, type Cli } from './context.ts';
import { etcdAccess, memberEndpoints } from './endpoints.ts';
import { formatBytes, structuredOutput, table } from './format.ts';

/** What etcd says: the member list, and each member's own status where it answered. */
export interface EtcdView {
  clusterId: string;
  /** The endpoint that gave the member list. */
  listedBy: string;
  members: EtcdMember[];
  /** Member ID → the member's own status. */
  statuses: Record<string, MemberStatus>;
  /** Endpoints that did not answer a status call, with why. */
  unreachable: { endpoint: string; message: string }[];
  /** The leader, as reported by the answering member with the highest raft term. */
  leaderId: string | undefined;
}

/** Every way etcd and the EtcdCluster status disagree, one sentence each; empty when they agree. */
export function diffMembers(etcd: EtcdView, status: EtcdClusterStatus): string[] {
  const out: string[] = [];
  if (status.clusterID && status.clusterID !== etcd.clusterId) {
    out.push(`cluster ID: etcd says ${etcd.clusterId}, status says ${status.clusterID}`);
  }
  const inStatus = status.members ?? [];
  for (const m of etcd.members) {
    const label = m.name || `(unstarted ${m.peerURLs.join(',')})`;
    const byId = inStatus.find(s => s.id === m.id);
    const byName = m.name ? inStatus.find(s => s.name === m.name) : undefined;
    if (!byId && byName) {
      out.push(`member ${m.name}: etcd ID ${m.id}, status ID ${byName.id ?? '(none)'}`);
      continue;
    }
    if (!byId) {
      out.push(`member ${label} (${m.id}) is in etcd but not in status`);
      continue;
    }
    if (m.name && byId.name !== m.name)
      out.push(`member ${m.id}: etcd name ${m.name}, status name ${byId.name}`);
    const role = m.isLearner ? 'learner' : 'voter';
    if (byId.role && byId.role !== role)
      out.push(`member ${byId.name}: etcd says ${role}, status says ${byId.role}`);
    const leader = etcd.leaderId === m.id;
    if (etcd.leaderId && (byId.leader === true) !== leader) {
      out.push(
        `member ${byId.name}: etcd says ${leader ? 'leader' : 'not leader'}, status says ${byId.leader ? 'leader' : 'not leader'}`,
      );
    }
  }
  for (const s of inStatus) {
    if (!s.id) out.push(`member ${s.name} is in status without an etcd ID (not added to etcd yet)`);
    else if (!etcd.members.some(m => m.id === s.id))
      out.push(`member ${s.name} (${s.id}) is in status but not in etcd`);
  }
  return out;
}

export function renderMembers(
  name: string,
  namespace: string,
  etcd: EtcdView,
  status: EtcdClusterStatus,
): string {
  const etcdTable = table(
    ['ID', 'NAME', 'PEER URLS', 'LEARNER', 'DB SIZE', 'RAFT TERM', 'RAFT INDEX', 'LEADER'],
    etcd.members.map(m => {
      const s = etcd.statuses[m.id];
      return [
        m.id,
        m.name || '(not started)',
        m.peerURLs.join(','),
        m.isLearner ? 'true' : 'false',
        s ? formatBytes(s.dbSize) : '?',
        s ? String(s.raftTerm) : '?',
        s ? String(s.raftIndex) : '?',
        etcd.leaderId === m.id ? '*' : '',
      ];
    }),
  );
  const names = [
    ...new Set([...etcd.members.map(m => m.name || m.id), ...(status.members ?? []).map(m => m.name)]),
  ];
  const side = table(
    ['NAME', 'ETCD ID', 'STATUS ID', 'ETCD ROLE', 'STATUS ROLE', 'ETCD LEADER', 'STATUS LEADER'],
    names.map(n => {
      const e = etcd.members.find(m => (m.name || m.id) === n);
      const s = status.members?.find(m => m.name === n);
      return [
        n,
        e?.id ?? '-',
        s?.id ?? '-',
        e ? (e.isLearner ? 'learner' : 'voter') : '-',
        s?.role ?? '-',
        e && etcd.leaderId === e.id ? '*' : '',
        s?.leader ? '*' : '',
      ];
    }),
  );
  const lines = [
    `etcd members of ${namespace}/${name} (cluster ID ${etcd.clusterId}, listed by ${etcd.listedBy})`,
    '',
    etcdTable,
  ];
  for (const u of etcd.unreachable) lines.push(`unreachable: ${u.endpoint}: ${u.message}`);
  lines.push('', 'etcd vs EtcdCluster status', '', side, '');
  const mismatches = diffMembers(etcd, status);
  if (mismatches.length === 0) {
    lines.push(`No mismatch: etcd and the EtcdCluster status agree on ${etcd.members.length} members.`);
  } else {
    lines.push(
      `${mismatches.length} MISMATCH${mismatches.length > 1 ? 'ES' : ''}:`,
      ...mismatches.map(m => `  - ${m}`),
    );
  }
  return lines.join('\n');
}

/** Asks etcd: the member list from the first endpoint that answers, and every endpoint's status. */
export async function askEtcd(
  endpoints: readonly string[],
  timeoutMs = 3000,
  access: EtcdConnectionOptions = {},
): Promise<EtcdView> {
  const adapter = createEtcdAdapter({ ...access, timeoutMs });
  const [list, answers] = await Promise.all([
    adapter.listMembers(endpoints),
    adapter.clusterStatus(endpoints),
  ]);
  if (list.kind !== 'ok') throw new CliError(`etcd unreachable: ${list.message}`);
  return etcdView(list, answers);
}

function etcdView(
  list: { members: EtcdMember[]; clusterId: string; endpoint: string },
  answers: EndpointStatus[],
): EtcdView {
  const statuses: Record<string, MemberStatus> = {};
  const unreachable: EtcdView['unreachable'] = [];
  for (const a of answers) {
    if (a.kind === 'ok') statuses[a.status.memberId] = a.status;
    else unreachable.push({ endpoint: a.endpoint, message: a.message });
  }
  return {
    clusterId: list.clusterId,
    listedBy: list.endpoint,
    members: list.members,
    statuses,
    unreachable,
    leaderId: reportedLeader(answers),
  };
}

export async function runMembers(cli: Cli, name: string, output: string | undefined): Promise<string> {
  const cluster = await getCluster(cli, name);
  const endpoints = (await memberEndpoints(cli, cluster)).map(m => m.endpoint);
  const etcd = await askEtcd(endpoints, undefined, await etcdAccess(cli, cluster));
  const status = cluster.status ?? {};
  const structured = structuredOutput(output, {
    etcd,
    status: { clusterID: status.clusterID, members: status.members ?? [] },
    mismatches: diffMembers(etcd, status),
  });
  return structured ?? renderMembers(name, cli.namespace, etcd, status);
}
