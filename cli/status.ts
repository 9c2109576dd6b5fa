// `kubectl etcdfn status <cluster>`: one screen to act on. The view is built from the EtcdCluster,
// its Pods and its latest EtcdSnapshot by a pure function, and printed as text or JSON.
import { DEFAULT_REPLICAS } from '../shared/api/defaults.ts';
import type { Condition } from '../shared/api/types.ts';
import {
  getCluster,
  latestSnapshot,
  listPods,
  type Cli,
  type Cluster,
  type Pod,
  type Snapshot,
} from './context.ts';
import { age, formatBytes, structuredOutput, table, yesNo } from './format.ts';

export interface StatusMember {
  name: string;
  id: string | null;
  role: string | null;
  leader: boolean;
  ready: boolean | null;
  version: string | null;
  podIP: string | null;
}

export interface StatusSnapshot {
  name: string;
  phase: string | null;
  created: string | null;
  completed: string | null;
  uri: string | null;
  sizeBytes: number | null;
  checksum: string | null;
  message: string | null;
}

export interface StatusView {
  name: string;
  namespace: string;
  ready: string;
  replicas: number;
  phase: string | null;
  version: string;
  clusterID: string | null;
  conditions: Pick<Condition, 'type' | 'status' | 'reason' | 'message' | 'lastTransitionTime'>[];
  members: StatusMember[];
  latestSnapshot: StatusSnapshot | null;
}

// Restored only for a cluster restored from a snapshot (at creation or in place): it shows the step.
const CONDITION_TYPES = ['Available', 'Progressing', 'Degraded', 'Restored'];

export function buildStatusView(cluster: Cluster, pods: readonly Pod[], snapshot?: Snapshot): StatusView {
  const status = cluster.status ?? {};
  const replicas = cluster.spec.replicas ?? DEFAULT_REPLICAS;
  const podIPs = new Map(pods.map(p => [p.metadata.name ?? '', p.status?.podIP]));
  return {
    name: cluster.metadata.name ?? '',
    namespace: cluster.metadata.namespace ?? '',
    ready: status.ready ?? `${status.readyMembers ?? 0}/${replicas}`,
    replicas,
    phase: status.phase ?? null,
    version: cluster.spec.version,
    clusterID: status.clusterID ?? null,
    conditions: CONDITION_TYPES.flatMap(type => {
      const c = status.conditions?.find(x => x.type === type);
      return c
        ? [
            {
              type,
              status: c.status,
              reason: c.reason,
              message: c.message,
              lastTransitionTime: c.lastTransitionTime,
            },
          ]
        : [];
    }),
    members: (status.members ?? []).map(m => ({
      name: m.name,
      id: m.id ?? null,
      role: m.role ?? null,
      leader: m.leader === true,
      ready: m.ready ?? null,
      version: m.version ?? null,
      podIP: podIPs.get(m.name) || null,
    })),
    latestSnapshot: snapshot ? snapshotView(snapshot) : null,
  };
}

function snapshotView(s: Snapshot): StatusSnapshot {
  const ready = s.status?.conditions?.find(c => c.type === 'Ready');
  return {
    name: s.metadata.name ?? '',
    phase: s.status?.phase ?? null,
    created: s.metadata.creationTimestamp ? new Date(s.metadata.creationTimestamp).toISOString() : null,
    completed: s.status?.completionTime ?? null,
    uri: s.status?.artifact?.uri ?? null,
    sizeBytes: s.status?.artifact?.sizeBytes ?? null,
    checksum: s.status?.artifact?.checksum ?? null,
    message: ready?.message || null,
  };
}

export function renderStatus(view: StatusView, now: Date): string {
  const dash = (v: string | null | undefined): string => v || '-';
  const head = [
    `EtcdCluster ${view.namespace}/${view.name}`,
    `READY ${view.ready}`,
    `PHASE ${dash(view.phase)}`,
    `VERSION ${view.version}`,
    `CLUSTER ID ${dash(view.clusterID)}`,
  ].join('   ');
  const conditions = view.conditions.length
    ? table(
        ['CONDITION', 'STATUS', 'REASON', 'AGE', 'MESSAGE'],
        view.conditions.map(c => [
          c.type,
          c.status,
          dash(c.reason),
          age(c.lastTransitionTime, now),
          dash(c.message),
        ]),
      )
    : 'No conditions yet: the operator has not looked at this cluster.';
  const members = view.members.length
    ? table(
        ['MEMBER', 'ID', 'ROLE', 'LEADER', 'READY', 'VERSION', 'POD IP'],
        view.members.map(m => [
          m.name,
          dash(m.id),
          dash(m.role),
          m.leader ? '*' : '',
          yesNo(m.ready ?? undefined),
          dash(m.version),
          dash(m.podIP),
        ]),
      )
    : 'No members.';
  return [head, '', conditions, '', members, '', renderSnapshotLine(view.latestSnapshot, now)].join('\n');
}

function renderSnapshotLine(s: StatusSnapshot | null, now: Date): string {
  if (!s) return 'Latest snapshot: none (take one with `kubectl etcdfn snapshot`)';
  const parts = [`Latest snapshot: ${s.name}`, s.phase ?? 'New', age(s.created ?? undefined, now) + ' ago'];
  if (s.phase === 'Complete') parts.push(formatBytes(s.sizeBytes ?? undefined), s.uri ?? '-');
  else if (s.message) parts.push(s.message);
  return parts.join('   ');
}

export async function runStatus(cli: Cli, name: string, output: string | undefined): Promise<string> {
  const cluster = await getCluster(cli, name);
  const [pods, snapshot] = await Promise.all([listPods(cli, name), latestSnapshot(cli, name)]);
  const view = buildStatusView(cluster, pods, snapshot);
  return structuredOutput(output, view) ?? renderStatus(view, new Date());
}
