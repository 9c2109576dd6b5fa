// Convergence for e2e tests, on evidence from after the event under test (a fault, a scale, an
// upgrade), never on what was already true before it:
// - the EtcdCluster was written after the mark (resourceVersion newer than the one seen at the
//   mark) and its status describes the current spec (observedGeneration = generation), at the
//   target, with nothing in progress;
// - every member's Pod is Ready, and each Pod named as restarted has a new UID or a higher restart
//   count than at the mark;
// - every member answers on its own endpoint, as itself (its etcd ID), with a leader, and serves a
//   linearizable read (quorum seen from that member);
// - etcd's member list is exactly the running EtcdMembers, by name and ID, with no learner, and so
//   is the status's member list.
// The wait polls with a generous overall timeout; nothing is asserted about elapsed time. On a
// timeout the error says which of the above was last missing.
import { Etcd3 } from 'etcd3';
import type { IOptions } from 'etcd3';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { toHexId } from '../../shared/etcd/ids.ts';
import type { KubeObject, KubeObjects } from '../../shared/k8s/objects.ts';
import { waitFor } from './wait.ts';

export type Cluster = EtcdCluster & KubeObject;
type Member = EtcdMember & KubeObject;
interface PodLike extends KubeObject {
  status?: {
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; restartCount?: number }[];
  };
}

export interface ClusterRef {
  kube: KubeObjects;
  namespace: string;
  name: string;
}

/** What was seen at the mark: the cluster's resourceVersion and each Pod's UID and restarts. */
export interface Mark {
  resourceVersion: string;
  pods: Map<string, { uid: string; restarts: number }>;
}

export interface ConvergeOptions {
  replicas: number;
  /** Taken just before the fault or the change under test. */
  since: Mark;
  /** Pods the fault restarted or replaced: each must be a new Pod or have restarted since the mark. */
  restarted?: string[];
  /** Every member runs this release, in status and as etcd itself reports. */
  version?: string;
  /**
   * false only for a repair that may leave the status as it was (an orphan etcd member removed, a
   * Pod back before reconcile-cluster ran): the fresh evidence is then etcd's own member list, the
   * members' health and the caller's `also`, read after the mark.
   */
  statusWritten?: boolean;
  /** Further checks of the caller: a reason the cluster is not there yet, or undefined. */
  also?: (cluster: Cluster) => Promise<string | undefined>;
  timeoutMs?: number;
  /** Added to the timeout message. */
  describe?: () => Promise<string> | string;
  /** How to dial the members (default plaintext http://<pod IP>:2379): a TLS cluster's client. */
  client?: MemberClient;
  /** etcd credentials for a cluster with auth on (without them etcd refuses the health read). */
  auth?: EtcdLogin;
}

export interface EtcdLogin {
  username: string;
  password: string;
}

/** Dials members over TLS: https, the CA, a client certificate, the name the serving cert carries. */
export interface MemberClient {
  ca: Buffer;
  cert?: Buffer;
  key?: Buffer;
  serverName: string;
}

/** etcd3 options for one member's Pod IP, plaintext or with `client`, logged in with `auth`. */
export function memberClientOptions(
  ip: string | undefined,
  client?: MemberClient,
  auth?: EtcdLogin,
): IOptions {
  const login = auth ? { auth } : {};
  if (!client) return { hosts: `http://${ip}:2379`, dialTimeout: 2000, ...login };
  return {
    hosts: `https://${ip}:2379`,
    dialTimeout: 2000,
    ...login,
    credentials: {
      rootCertificate: client.ca,
      ...(client.cert && { certChain: client.cert }),
      ...(client.key && { privateKey: client.key }),
    },
    grpcOptions: {
      'grpc.ssl_target_name_override': client.serverName,
      'grpc.default_authority': client.serverName,
    },
  };
}

const clusterRef = (ref: ClusterRef) => ({
  apiVersion: API_VERSION,
  kind: 'EtcdCluster',
  namespace: ref.namespace,
  name: ref.name,
});
const selector = (ref: ClusterRef) => `etcdfn.io/cluster=${ref.name}`;

async function readCluster(ref: ClusterRef): Promise<Cluster> {
  const read = await ref.kube.get<Cluster>(clusterRef(ref));
  if (read.kind !== 'found') throw new Error(`EtcdCluster ${ref.namespace}/${ref.name} not found`);
  return read.object;
}

const restartsOf = (pod: PodLike): number =>
  (pod.status?.containerStatuses ?? []).reduce((sum, c) => sum + (c.restartCount ?? 0), 0);
const isReady = (pod: PodLike): boolean =>
  pod.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True') === true;

/** The mark for a cluster about to be created: anything written counts as after it. */
export const beforeCreation = (): Mark => ({ resourceVersion: '0', pods: new Map() });

/** Takes the mark: call it just before the fault or change under test. */
export async function mark(ref: ClusterRef): Promise<Mark> {
  const cluster = await readCluster(ref);
  const pods = await ref.kube.list<PodLike>('v1', 'Pod', ref.namespace, selector(ref));
  return {
    resourceVersion: cluster.metadata.resourceVersion ?? '',
    pods: new Map(
      pods.map(p => [p.metadata.name ?? '', { uid: p.metadata.uid ?? '', restarts: restartsOf(p) }]),
    ),
  };
}

/** resourceVersions are opaque to clients; the sandbox's (like etcd's revisions) are integers. */
function newer(current: string | undefined, seen: string): boolean {
  if (!current) return false;
  if (/^\d+$/.test(current) && /^\d+$/.test(seen)) return BigInt(current) > BigInt(seen);
  return current !== seen;
}

const sameSet = (a: (string | undefined)[], b: (string | undefined)[]): boolean =>
  JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());

/** One member's own view: its ID, its leader, a linearizable read through it, its version. */
async function memberHealth(
  ip: string | undefined,
  expectId: string | undefined,
  version: string | undefined,
  dial?: MemberClient,
  auth?: EtcdLogin,
): Promise<string | undefined> {
  const url = `${ip}:2379`;
  const client = new Etcd3(memberClientOptions(ip, dial, auth));
  try {
    const st = await client.maintenance.status();
    const id = toHexId(st.header.member_id);
    if (id !== expectId) return `${url} answers as etcd member ${id}, expected ${expectId}`;
    if (st.leader === '0') return `${url} has no leader`;
    if ((st as { isLearner?: boolean }).isLearner) return `${url} is a learner`;
    if (version && st.version !== version) return `${url} runs etcd ${st.version}, expected ${version}`;
    await client.get('etcdfn-converge-health').exec();
    return undefined;
  } catch (err) {
    return `${url} is not healthy: ${(err as Error).message}`;
  } finally {
    client.close();
  }
}

/** Why the cluster has not converged on fresh evidence yet, or undefined when it has. */
async function notYet(ref: ClusterRef, opts: ConvergeOptions, cluster: Cluster): Promise<string | undefined> {
  const s = cluster.status ?? {};
  if (opts.statusWritten !== false && !newer(cluster.metadata.resourceVersion, opts.since.resourceVersion)) {
    return `the EtcdCluster was not written since the mark (resourceVersion ${cluster.metadata.resourceVersion})`;
  }
  if (s.observedGeneration !== cluster.metadata.generation) {
    return `status describes generation ${s.observedGeneration}, spec is at ${cluster.metadata.generation}`;
  }
  if (s.observed?.replicas !== opts.replicas) return `status.observed.replicas is ${s.observed?.replicas}`;
  if (s.operation) return `an operation is in progress: ${JSON.stringify(s.operation)}`;
  const progressing = s.conditions?.find(c => c.type === 'Progressing');
  if (progressing?.status !== 'False')
    return `Progressing is ${progressing?.status}: ${progressing?.message}`;

  const all = await ref.kube.list<Member>(API_VERSION, 'EtcdMember', ref.namespace, selector(ref));
  if (all.some(m => m.metadata.deletionTimestamp)) return 'an EtcdMember is being deleted';
  const running = all.filter(m => !m.spec.dormant);
  const pods = await ref.kube.list<PodLike>('v1', 'Pod', ref.namespace, selector(ref));
  if (opts.replicas === 0) {
    if (s.phase !== 'Paused') return `phase is ${s.phase}, expected Paused`;
    if (running.length > 0 || pods.length > 0) return `${pods.length} Pod(s) left while paused`;
    return opts.also ? opts.also(cluster) : undefined;
  }
  if (s.phase !== 'Running') return `phase is ${s.phase}`;
  if (s.ready !== `${opts.replicas}/${opts.replicas}`) return `status.ready is ${s.ready}`;
  if (running.length !== opts.replicas) return `${running.length} running EtcdMembers`;

  const podOf = new Map(pods.map(p => [p.metadata.name, p]));
  // A removed member's Pod outlives its EtcdMember until the garbage collector deletes it.
  const runningUids = new Set(running.map(m => m.metadata.uid));
  const leftover = pods.filter(p =>
    p.metadata.ownerReferences?.some(o => o.controller && o.kind === 'EtcdMember' && !runningUids.has(o.uid)),
  );
  if (leftover.length > 0)
    return `Pod(s) ${leftover.map(p => p.metadata.name).join(',')} outlive their EtcdMember`;
  for (const m of running) {
    const name = m.status?.podName ?? m.metadata.name;
    const pod = podOf.get(name);
    if (!pod || pod.metadata.deletionTimestamp) return `no live Pod for ${m.metadata.name}`;
    if (!isReady(pod)) return `Pod ${name} is not Ready`;
  }
  for (const name of opts.restarted ?? []) {
    const pod = podOf.get(name);
    const was = opts.since.pods.get(name);
    if (!pod) return `Pod ${name} is missing`;
    if (was && pod.metadata.uid === was.uid && restartsOf(pod) <= was.restarts) {
      return `Pod ${name} has not been restarted or replaced since the mark`;
    }
  }
  if (opts.version) {
    if (running.some(m => m.spec.version !== opts.version)) return `an EtcdMember is not on ${opts.version}`;
    if (!s.members?.every(m => m.version === opts.version))
      return `status shows a member not on ${opts.version}`;
  }

  for (const m of running) {
    const pod = podOf.get(m.status?.podName ?? m.metadata.name);
    const why = await memberHealth(
      pod?.status?.podIP,
      m.status?.memberID,
      opts.version,
      opts.client,
      opts.auth,
    );
    if (why) return `${m.metadata.name}: ${why}`;
  }
  const first = podOf.get(running[0]?.status?.podName ?? running[0]?.metadata.name);
  const client = new Etcd3(memberClientOptions(first?.status?.podIP, opts.client, opts.auth));
  let list;
  try {
    list = (await client.cluster.memberList({ linearizable: true })).members;
  } finally {
    client.close();
  }
  if (list.some(m => m.isLearner)) return 'etcd lists a learner';
  const etcdIds = list.map(m => toHexId(m.ID));
  if (new Set(etcdIds).size !== etcdIds.length) return 'etcd lists a member twice';
  const memberIds = running.map(m => m.status?.memberID);
  const show = (ids: (string | undefined)[]) => ids.map(String).join(',');
  if (!sameSet(etcdIds, memberIds))
    return `etcd lists ${show(etcdIds)}, the EtcdMembers are ${show(memberIds)}`;
  if (
    !sameSet(
      list.map(m => m.name),
      running.map(m => m.metadata.name),
    )
  ) {
    return `etcd's member names ${show(list.map(m => m.name))} differ from the EtcdMembers'`;
  }
  const statusIds = (s.members ?? []).map(m => m.id);
  if (!sameSet(etcdIds, statusIds))
    return `status.members ${show(statusIds)} differ from etcd's ${show(etcdIds)}`;
  return opts.also ? opts.also(cluster) : undefined;
}

/** Waits until the cluster has converged on evidence from after `opts.since`; returns it. */
export async function converged(ref: ClusterRef, opts: ConvergeOptions): Promise<Cluster> {
  let last = 'nothing read yet';
  return waitFor(
    // Said apart: a first convergence timing out once read as the one after a fault.
    `${ref.name}: ${opts.replicas} member(s) converged ${opts.since.resourceVersion === '0' ? 'since its creation' : 'after the mark'}`,
    async () => {
      const cluster = await readCluster(ref);
      const why = await notYet(ref, opts, cluster);
      last = why ?? 'converged';
      return why === undefined ? cluster : false;
    },
    { timeoutMs: opts.timeoutMs ?? 180_000, intervalMs: 500 },
    async () => `last missing: ${last}\n${opts.describe ? await opts.describe() : ''}`,
  );
}
