// For integration tests of the reconcile layer (shared/reconcile/*): the sandbox API server in
// process, real etcd processes on loopback addresses, and a Context wired to both, so a test can
// call reconcileCluster / reconcileMember / finalizeMember directly and check what each step left.
//
// Member URLs are DNS names (demo-0.demo.prod.svc); in the sandbox a hosts file resolves them, here
// the etcd adapter is the real one behind a thin name map: requests go to the member's loopback
// address, and the URLs etcd answers with are mapped back to the names. No call is faked.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { createEtcdAdapter, type EtcdAdapter } from '../../shared/etcd/adapter.ts';
import { KubeObjects, type KubeObject, type ObjectRef } from '../../shared/k8s/objects.ts';
import { clusterLabels, memberHost } from '../../shared/names.ts';
import { findCondition } from '../../shared/conditions.ts';
import { reconcileCluster } from '../../shared/reconcile/cluster.ts';
import { settingsFromEnv, type Context } from '../../shared/runtime/context.ts';
import { startApiServer, type TestApiServer } from './api-server.ts';
import { etcdRelease } from './etcd-binaries.ts';
import { EtcdProcess, LoopbackAddresses, waitForLeader, type EtcdSlot } from './etcd-process.ts';

export const NS = 'prod';

export type Cluster = EtcdCluster & KubeObject;
export type Member = EtcdMember & KubeObject;

export const clusterRef = (name: string): ObjectRef => ({
  apiVersion: API_VERSION,
  kind: 'EtcdCluster',
  namespace: NS,
  name,
});
export const memberRef = (name: string): ObjectRef => ({
  apiVersion: API_VERSION,
  kind: 'EtcdMember',
  namespace: NS,
  name,
});

export class ReconcileWorld {
  readonly ctx: Context;
  readonly kube: KubeObjects;
  /** The real etcd adapter, on loopback URLs (for checking etcd's state from the test). */
  readonly rawEtcd: EtcdAdapter;
  private readonly server: TestApiServer;
  private readonly addresses = new LoopbackAddresses();
  private readonly slots = new Map<string, EtcdSlot>();
  private readonly procs = new Map<string, EtcdProcess>();
  private races = 0;
  private readonly dataRoot = mkdtempSync(join(tmpdir(), 'etcdfn-reconcile-'));

  readonly clusterName: string;

  private constructor(server: TestApiServer, clusterName: string) {
    this.server = server;
    this.clusterName = clusterName;
    this.kube = new KubeObjects(server.kc);
    this.rawEtcd = createEtcdAdapter({ timeoutMs: 3000 });
    this.ctx = {
      kube: this.kube,
      etcd: this.mappedEtcd(),
      now: () => new Date(),
      // One step per call: these worlds check what each step leaves behind.
      settings: { ...settingsFromEnv({}), unhealthyWaitMs: 20_000, promoteAttempts: 40, chainSteps: 1 },
    };
  }

  /** `members`: the names etcd may be told about, each given a loopback address up front. */
  static async start(clusterName = 'demo', members = 3): Promise<ReconcileWorld> {
    // A real API server and no node: Pods are never bound, so they go at once when deleted.
    const server = await startApiServer();
    await server.createNamespace(NS);
    const world = new ReconcileWorld(server, clusterName);
    for (let i = 0; i < members; i++) await world.slot(`${clusterName}-${i}`);
    return world;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.procs.values()].map(p => p.stop({ force: true })));
    await this.server.close();
    rmSync(this.dataRoot, { recursive: true, force: true });
  }

  /** The loopback address standing for a member's DNS name (reserved on first use). */
  async slot(member: string): Promise<EtcdSlot> {
    let slot = this.slots.get(member);
    if (!slot) {
      slot = await this.addresses.reserve(member);
      this.slots.set(member, slot);
    }
    return slot;
  }

  private hostOf(member: string): string {
    return memberHost({ namespace: NS, cluster: this.clusterName, member });
  }

  /** DNS names → loopback addresses, in any string (URLs, --initial-cluster). */
  toLoopback(text: string): string {
    let out = text;
    for (const [member, slot] of this.slots)
      out = out.replaceAll(`//${this.hostOf(member)}:`, `//${slot.host}:`);
    return out;
  }

  /** Loopback addresses → DNS names, in any value made of plain data. */
  toNames<T>(value: T): T {
    if (value === undefined) return value;
    let text = JSON.stringify(value);
    for (const [member, slot] of this.slots)
      text = text.replaceAll(`//${slot.host}:`, `//${this.hostOf(member)}:`);
    return JSON.parse(text) as T;
  }

  private mappedEtcd(): EtcdAdapter {
    const raw = () => this.rawEtcd;
    const urls = (list: readonly string[]) => list.map(u => this.toLoopback(u));
    return {
      listMembers: async e => this.toNames(await raw().listMembers(urls(e))),
      addLearner: async (e, peer) => this.toNames(await raw().addLearner(urls(e), this.toLoopback(peer))),
      promote: async (e, id) => this.toNames(await raw().promote(urls(e), id)),
      remove: async (e, id) => this.toNames(await raw().remove(urls(e), id)),
      moveLeader: async (e, id) => this.toNames(await raw().moveLeader(urls(e), id)),
      memberStatus: async e => this.toNames(await raw().memberStatus(this.toLoopback(e))),
      clusterStatus: async e => this.toNames(await raw().clusterStatus(urls(e))),
      snapshot: async e => raw().snapshot(this.toLoopback(e)),
      listAlarms: async e => raw().listAlarms(urls(e)),
      disarmAlarm: async (e, alarm) => raw().disarmAlarm(urls(e), alarm),
      compact: async e => raw().compact(urls(e)),
      defragment: async e => raw().defragment(this.toLoopback(e)),
      healthRead: async e => raw().healthRead(urls(e)),
      storageState: async e => raw().storageState(this.toLoopback(e)),
      enableDowngrade: async (e, version) => raw().enableDowngrade(urls(e), version),
    };
  }

  /**
   * Starts etcd for EtcdMembers as their Pods would: each member's name, token and --initial-cluster
   * (from its spec), new cluster for an initial member, existing for a joining one. The initial
   * members of a static bootstrap are started together: none elects a leader alone.
   */
  async startEtcd(...members: Member[]): Promise<EtcdProcess[]> {
    const procs: EtcdProcess[] = [];
    for (const member of members) {
      const name = member.metadata.name ?? '';
      for (const pair of member.spec.initialCluster.split(',')) await this.slot(pair.split('=')[0] ?? '');
      const proc = new EtcdProcess({
        // Exactly the release the world's EtcdCluster asks for (3.5.16), as the sandbox's kubelet runs.
        binaries: etcdRelease('3.5.16'),
        slot: await this.slot(name),
        dataDir: join(this.dataRoot, name),
        initialCluster: this.toLoopback(member.spec.initialCluster),
        state: member.spec.bootstrap ? 'new' : 'existing',
        token: member.spec.clusterToken,
      });
      this.procs.set(name, proc);
      procs.push(proc);
    }
    await waitForLeader(procs, 30_000);
    return procs;
  }

  /**
   * Creates the EtcdCluster and runs reconcile-cluster step by step, starting etcd and a Ready Pod
   * for every member it wires (what reconcile-member and the kubelet would do), until Reconciled.
   */
  async grow(replicas: number, maxSteps = 30): Promise<void> {
    const created = await this.kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: this.clusterName, namespace: NS },
      spec: { replicas, version: '3.5.16', storage: { size: '1Gi' } },
    });
    if (created.kind !== 'created') throw new Error(`EtcdCluster: ${created.kind}`);
    for (let i = 0; i < maxSteps; i++) {
      const outcome = await reconcileCluster(this.ctx, { namespace: NS, name: this.clusterName });
      if (outcome.result !== 'done') throw new Error(`reconcile-cluster: ${JSON.stringify(outcome)}`);
      const wired = (await this.members()).filter(
        m => m.spec.initialCluster && !this.procs.has(m.metadata.name ?? ''),
      );
      if (wired.length > 0) await this.startEtcd(...wired);
      for (const m of wired) await this.readyPod(m.metadata.name ?? '');
      const cluster = await this.cluster();
      if (findCondition(cluster.status?.conditions, 'Progressing')?.reason === 'Reconciled') return;
    }
    throw new Error(`EtcdCluster ${this.clusterName} did not reach ${replicas} members in ${maxSteps} steps`);
  }

  /** The API server (e.g. for a counting proxy in front of it). */
  get api(): TestApiServer {
    return this.server;
  }

  /** Writes an object's status as a controller or the kubelet does (a merge patch of /status). */
  async writeStatus(object: KubeObject & { status?: unknown }): Promise<void> {
    const [group, version] = object.apiVersion!.includes('/')
      ? object.apiVersion!.split('/')
      : ['', object.apiVersion!];
    const plural = `${object.kind!.toLowerCase()}s`;
    const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const ns = object.metadata.namespace ? `/namespaces/${object.metadata.namespace}` : '';
    const path = `${base}${ns}/${plural}/${object.metadata.name}/status`;
    const reply = await this.server.request(
      'PATCH',
      path,
      { status: object.status },
      'application/merge-patch+json',
    );
    if (reply.status !== 200) throw new Error(`status of ${path}: ${reply.status} ${reply.body}`);
  }

  etcdProcess(member: string): EtcdProcess | undefined {
    return this.procs.get(member);
  }

  /** The client URL (loopback) of a running member, to ask etcd directly. */
  clientURL(member: string): string {
    const slot = this.slots.get(member);
    if (!slot) throw new Error(`no address for ${member}`);
    return slot.clientURL;
  }

  /** What the kubelet would leave: a running, Ready Pod for the member (created if missing). */
  async readyPod(member: string): Promise<void> {
    const ref = { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: member };
    let pod = await this.kube.find<V1Pod & KubeObject>(ref);
    if (!pod) {
      // Controlled by its EtcdMember, as reconcile-member creates it.
      const owner = await this.member(member);
      const created = await this.kube.create<V1Pod & KubeObject>({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: member,
          namespace: NS,
          labels: clusterLabels(this.clusterName),
          ...(owner?.metadata.uid && {
            ownerReferences: [
              {
                apiVersion: API_VERSION,
                kind: 'EtcdMember',
                name: member,
                uid: owner.metadata.uid,
                controller: true,
              },
            ],
          }),
        },
        spec: { containers: [{ name: 'etcd', image: 'quay.io/coreos/etcd:v3.5.16' }] },
      });
      if (created.kind !== 'created') throw new Error(`Pod ${member}: ${created.kind}`);
      pod = created.object;
    }
    const now = new Date().toISOString();
    // The kubelet's write.
    await this.writeStatus({
      ...(pod as unknown as Record<string, unknown>),
      apiVersion: 'v1',
      kind: 'Pod',
      status: {
        phase: 'Running',
        podIP: (await this.slot(member)).host,
        startTime: now,
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }],
        containerStatuses: [
          {
            name: 'etcd',
            ready: true,
            restartCount: 0,
            image: pod.spec?.containers[0]?.image ?? '',
            imageID: '',
            started: true,
            state: { running: { startedAt: now } },
          },
        ],
      },
    } as never);
  }

  /** Creates this world's EtcdCluster (etcd 3.5.16, 1Gi volumes) with `replicas` members. */
  async createCluster(replicas: number): Promise<void> {
    const created = await this.kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: this.clusterName, namespace: NS },
      spec: { replicas, version: '3.5.16', storage: { size: '1Gi' } },
    });
    if (created.kind !== 'created') throw new Error(`EtcdCluster ${this.clusterName}: ${created.kind}`);
  }

  async cluster(): Promise<Cluster> {
    const read = await this.kube.get<Cluster>(clusterRef(this.clusterName));
    if (read.kind !== 'found') throw new Error(`EtcdCluster ${this.clusterName} not found`);
    return read.object;
  }

  async member(name: string): Promise<Member | undefined> {
    return this.kube.find<Member>(memberRef(name));
  }

  async members(): Promise<Member[]> {
    return this.kube.list<Member>(API_VERSION, 'EtcdMember', NS);
  }

  /** Reasons of the Events recorded about an object, oldest first. */
  async eventReasons(kind: string, name: string): Promise<string[]> {
    const events = await this.kube.list<
      KubeObject & { involvedObject?: { kind?: string; name?: string }; reason?: string }
    >('v1', 'Event', NS);
    return events
      .filter(e => e.involvedObject?.kind === kind && e.involvedObject.name === name)
      .map(e => e.reason ?? '');
  }

  /** etcd's member list asked directly (loopback), names mapped back. */
  async etcdMembers(
    via: string,
  ): Promise<{ name: string; id: string; isLearner: boolean; peerURLs: string[] }[]> {
    const listed = await this.ctx.etcd.listMembers([this.toNames(this.clientURL(via))]);
    if (listed.kind !== 'ok') throw new Error(`etcd list via ${via}: ${listed.message}`);
    return listed.members;
  }

  /**
   * A Context whose next write (`method`) of a `kind` finds the object changed: another writer bumps its
   * resourceVersion (a label) just before the write, as a concurrent invocation would.
   */
  racingContext(
    kind: string,
    method: 'replaceStatus' | 'replace' = 'replaceStatus',
  ): { ctx: Context; raced: () => boolean } {
    let raced = false;
    const kube = this.kube;
    const races = () => ++this.races;
    const proxy = new Proxy(kube, {
      get(target, prop, receiver) {
        if (prop !== method) return Reflect.get(target, prop, receiver) as unknown;
        return async <T extends KubeObject>(object: T) => {
          if (!raced && object.kind === kind) {
            raced = true;
            await target.mergePatch(
              {
                apiVersion: object.apiVersion ?? '',
                kind,
                namespace: object.metadata.namespace ?? NS,
                name: object.metadata.name ?? '',
              },
              // The count makes every race a real change (a repeated patch would keep the version).
              {
                metadata: {
                  labels: { 'test.etcdfn.io/raced': 'yes' },
                  annotations: { 'test.etcdfn.io/race': String(races()) },
                },
              },
            );
          }
          return target[method](object);
        };
      },
    });
    return { ctx: { ...this.ctx, kube: proxy }, raced: () => raced };
  }
}
