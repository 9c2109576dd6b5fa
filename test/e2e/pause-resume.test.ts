// Pause and resume of a 3-member cluster on the sandbox with real etcd 3.5.16: 3 → 0 keeps one
// member's data, 0 → 3 resumes the same etcd cluster (same cluster ID, the kept member's ID) with
// every key written before the pause, and no member stuck being added (the QuorumLost seen after
// a paused member was deleted by hand cannot happen: that deletion is held).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'default';
const STEP_TIMEOUT = 240_000;
type Cluster = EtcdCluster & KubeObject;
type Member = EtcdMember & KubeObject;
interface PodLike extends KubeObject {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}
const hex = (id: string) => BigInt(id).toString(16).padStart(16, '0');

describe('pause and resume (etcd 3.5.16, chaos on)', { timeout: 1_500_000 }, () => {
  let sandbox: FullSandbox;
  let kube: KubeObjects;

  before(async () => {
    // On a loaded machine a function takes long to load: give it time, and try again.
    process.env.ETCDFN_SANDBOX_FUNCTION_START_MS ??= '180000';
    for (let attempt = 1; ; attempt++) {
      try {
        sandbox = await startFullSandbox({
          chaos: true,
          chaosSeed: 13,
          tickSeconds: 10,
          startTimeoutMs: 300_000,
        });
        break;
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
    kube = new KubeObjects(sandbox.kc);
  });
  after(async () => sandbox?.stop());

  const clusterRef = (name: string) => ({
    apiVersion: API_VERSION,
    kind: 'EtcdCluster',
    namespace: NS,
    name,
  });
  const cluster = async (name: string) => {
    const read = await kube.get<Cluster>(clusterRef(name));
    assert.equal(read.kind, 'found');
    return (read as { object: Cluster }).object;
  };
  const members = (name: string) =>
    kube.list<Member>(API_VERSION, 'EtcdMember', NS, `etcdfn.io/cluster=${name}`);
  const pods = (name: string) => kube.list<PodLike>('v1', 'Pod', NS, `etcdfn.io/cluster=${name}`);
  const endpoints = async (name: string) =>
    (await pods(name))
      .filter(p => p.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True'))
      .map(p => `http://${p.status?.podIP}:2379`);

  async function withEtcd<T>(name: string, fn: (client: Etcd3) => Promise<T>): Promise<T> {
    const hosts = await endpoints(name);
    assert.ok(hosts.length > 0, 'no ready member to talk to');
    const client = new Etcd3({ hosts, dialTimeout: 2000 });
    try {
      return await fn(client);
    } finally {
      client.close();
    }
  }

  const describeWorld = (name: string) => async () => {
    const c = await cluster(name).catch(() => undefined);
    const m = await members(name).catch(() => []);
    return `status: ${JSON.stringify(c?.status)}\nmembers: ${m.map(x => `${x.metadata.name} ${JSON.stringify(x.status?.dataLoss ?? {})}`).join(', ')}\n${sandbox.output().slice(-3000)}`;
  };

  /** Full size: etcd, the status and the EtcdMembers agree on `replicas` voters, all ready. */
  async function converged(
    name: string,
    replicas: number,
  ): Promise<{ cluster: Cluster; ids: Map<string, string> }> {
    return waitFor(
      `${name}: ${replicas} members converged`,
      async () => {
        const c = await cluster(name);
        const s = c.status ?? {};
        if (s.observed?.replicas !== replicas || s.operation || s.replacement) return false;
        if (s.conditions?.find(x => x.type === 'Progressing')?.status !== 'False') return false;
        if (s.ready !== `${replicas}/${replicas}` || s.phase !== 'Running') return false;
        const list = (await withEtcd(name, client => client.cluster.memberList({ linearizable: true })))
          .members;
        if (list.length !== replicas || list.some(m => m.isLearner)) return false;
        const running = (await members(name)).filter(m => !m.metadata.deletionTimestamp);
        if (
          JSON.stringify(list.map(m => m.name).sort()) !==
          JSON.stringify(running.map(m => m.metadata.name).sort())
        )
          return false;
        return { cluster: c, ids: new Map(list.map(m => [m.name, hex(m.ID)])) };
      },
      { timeoutMs: STEP_TIMEOUT, intervalMs: 500 },
      describeWorld(name),
    );
  }

  async function create(name: string, replicas: number): Promise<void> {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name, namespace: NS },
      spec: { replicas, version: '3.5.16', storage: { size: '1Gi' } },
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

  it('a paused 3-member cluster resumes to 3 with its cluster ID, the kept member ID and every key', async () => {
    const name = 'pz';
    await create(name, 3);
    const before = await converged(name, 3);
    const clusterID = before.cluster.status?.clusterID;
    await writeKeys(name, 'k/', 300);
    await kube.mergePatch(clusterRef(name), { spec: { replicas: 0 } });
    await waitFor(
      'paused',
      async () => (await cluster(name)).status?.phase === 'Paused',
      { timeoutMs: STEP_TIMEOUT },
      describeWorld(name),
    );
    const kept = (await members(name)).filter(m => !m.metadata.deletionTimestamp);
    assert.equal(kept.length, 1, 'one member keeps the data');
    const keptName = kept[0].metadata.name!;
    const keptID = before.ids.get(keptName);
    await kube.mergePatch(clusterRef(name), { spec: { replicas: 3 } });
    const after = await converged(name, 3);
    assert.equal(after.cluster.status?.clusterID, clusterID, 'the same etcd cluster');
    assert.equal(after.ids.get(keptName), keptID, 'the kept member resumed under its own ID');
    assert.equal(await withEtcd(name, client => client.getAll().prefix('k/').count()), 300);
    const available = after.cluster.status?.conditions?.find(c => c.type === 'Available');
    assert.equal(available?.reason, 'QuorumHealthy');
  });
});
