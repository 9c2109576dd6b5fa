// The sandbox world the healing e2e tests share (member replacement, pause and resume): a full
// sandbox with chaos on, the reads they make of clusters, members and Pods, etcd through the ready
// members, and "full size" through test/support/converge.ts (fresh evidence after a mark).
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { toHexId } from '../../shared/etcd/ids.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import {
  beforeCreation,
  converged as convergedAfter,
  mark as markCluster,
  type EtcdLogin,
  type Mark,
} from './converge.ts';
import { startFullSandbox, type FullSandbox, type FullSandboxOptions } from './sandbox.ts';

export const NS = 'default';
export const STEP_TIMEOUT = 240_000;
export type Cluster = EtcdCluster & KubeObject;
export type Member = EtcdMember & KubeObject;
export interface PodLike extends KubeObject {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}

/** Helpers bound to one sandbox, started by `start` (a `before` hook) and stopped by `stop`. */
export function healingSandbox(chaosSeed: number, extra: FullSandboxOptions = {}) {
  let sandbox: FullSandbox | undefined;
  let kubeObjects: KubeObjects | undefined;
  const kube = (): KubeObjects => {
    assert.ok(kubeObjects, 'the sandbox is not started');
    return kubeObjects;
  };

  async function start(): Promise<void> {
    // On a loaded machine a function takes long to load: give it time, and try again.
    process.env.ETCDFN_SANDBOX_FUNCTION_START_MS ??= '180000';
    for (let attempt = 1; ; attempt++) {
      try {
        sandbox = await startFullSandbox({
          chaos: true,
          chaosSeed,
          tickSeconds: 10,
          startTimeoutMs: 300_000,
          ...extra,
        });
        break;
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
    kubeObjects = new KubeObjects(sandbox.kc);
  }
  const stop = async () => sandbox?.stop();

  // etcd credentials per cluster with auth on: every dial of these helpers logs in with them.
  const logins = new Map<string, EtcdLogin>();
  const useLogin = (name: string, login: EtcdLogin): void => void logins.set(name, login);

  const clusterRef = (name: string) => ({
    apiVersion: API_VERSION,
    kind: 'EtcdCluster',
    namespace: NS,
    name,
  });
  const cluster = async (name: string) => {
    const read = await kube().get<Cluster>(clusterRef(name));
    assert.equal(read.kind, 'found');
    return (read as { object: Cluster }).object;
  };
  const members = (name: string) =>
    kube().list<Member>(API_VERSION, 'EtcdMember', NS, `etcdfn.io/cluster=${name}`);
  const pods = (name: string) => kube().list<PodLike>('v1', 'Pod', NS, `etcdfn.io/cluster=${name}`);
  const endpoints = async (name: string) =>
    (await pods(name))
      .filter(p => p.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True'))
      .map(p => `http://${p.status?.podIP}:2379`);

  async function withEtcd<T>(name: string, fn: (client: Etcd3) => Promise<T>): Promise<T> {
    const hosts = await endpoints(name);
    assert.ok(hosts.length > 0, 'no ready member to talk to');
    const client = new Etcd3({ hosts, dialTimeout: 2000, auth: logins.get(name) });
    try {
      return await fn(client);
    } finally {
      client.close();
    }
  }

  const describeWorld = (name: string) => async () => {
    const c = await cluster(name).catch(() => undefined);
    const m = await members(name).catch(() => []);
    return `status: ${JSON.stringify(c?.status)}\nmembers: ${m.map(x => `${x.metadata.name} ${JSON.stringify(x.status?.dataLoss ?? {})}`).join(', ')}\n${sandbox?.output().slice(-3000) ?? ''}`;
  };

  const probe = (name: string) => ({ kube: kube(), namespace: NS, name });
  /** The mark to take just before a fault or change (test/support/converge.ts). */
  const mark = (name: string): Promise<Mark> => markCluster(probe(name));

  /** etcd's own member list: name → ID (hex). */
  const etcdIds = async (name: string): Promise<Map<string, string>> => {
    const list = await withEtcd(name, client => client.cluster.memberList({ linearizable: true }));
    return new Map(list.members.map(m => [m.name, toHexId(m.ID)]));
  };

  /**
   * Full size on evidence from after `since` (test/support/converge.ts: status written since, every
   * Pod Ready, every member healthy on its own endpoint, etcd's member list equal to the
   * EtcdMembers and the status, no replacement left in progress), with etcd's member IDs by name.
   * A replaced member counts as the member it is now (a new name and ID). Without `since`, anything
   * counts as fresh: only for reading a state already reached, never after a fault.
   */
  async function converged(
    name: string,
    replicas: number,
    since: Mark = beforeCreation(),
    restarted: string[] = [],
  ): Promise<{ cluster: Cluster; ids: Map<string, string> }> {
    const cluster = await convergedAfter(probe(name), {
      replicas,
      since,
      restarted,
      timeoutMs: STEP_TIMEOUT,
      describe: describeWorld(name),
      auth: logins.get(name),
      also: async c =>
        c.status?.replacement
          ? `a replacement is in progress: ${JSON.stringify(c.status.replacement)}`
          : undefined,
    });
    return { cluster, ids: replicas === 0 ? new Map() : await etcdIds(name) };
  }

  async function create(name: string, replicas: number, spec: Record<string, unknown> = {}): Promise<void> {
    const created = await kube().create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name, namespace: NS },
      spec: { replicas, version: '3.5.16', storage: { size: '1Gi' }, ...spec },
    });
    assert.equal(created.kind, 'created');
  }

  async function writeKeys(name: string, prefix: string, count: number): Promise<void> {
    await withEtcd(name, async client => {
      await Promise.all(
        Array.from({ length: count }, (_, n) => client.put(`${prefix}${n}`).value(`v${n}`).exec()),
      );
    });
  }

  /** The running sandbox (its fault injection, its function restarts). */
  const running = (): FullSandbox => {
    assert.ok(sandbox, 'the sandbox is not started');
    return sandbox;
  };
  const faults = () => running().faults;

  return {
    start,
    stop,
    kube,
    running,
    faults,
    useLogin,
    clusterRef,
    cluster,
    members,
    pods,
    endpoints,
    withEtcd,
    describeWorld,
    mark,
    converged,
    create,
    writeKeys,
  };
}
