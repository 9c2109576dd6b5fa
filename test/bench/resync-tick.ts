// Benchmark (not a test): one resync tick of reconcile-cluster over 1,000 healthy clusters.
//
//   node --import tsx test/bench/resync-tick.ts        (BENCH_TICK_CLUSTERS=200 for fewer)
//
// The objects are the operator's own: one 3-member cluster is grown by reconcileCluster on the
// sandbox API server with real etcd 3.5 processes (test/support/reconcile-world.ts), then every
// object it has (EtcdCluster with its status, EtcdMembers, Pods, Services, PDB, NetworkPolicy,
// Secrets, ConfigMaps) is copied into 999 more namespaces under the same names, owner references
// pointing at each copy's own EtcdCluster. Member URLs name the namespace (demo-0.demo.<ns>.svc);
// the etcd adapter maps every namespace's names onto the same three real etcd processes, so each
// cluster's health calls are answered by real etcd (shared, as counted below).
//
// The tick is the real path: reconcile-cluster's handler given a PingSource tick, which lists the
// clusters and runs reconcileCluster for each within the resync budget, through a counting proxy in
// front of the API server. Figures: wall time, API reads and writes, etcd calls, and the process's
// RSS (the handler runs in this process; kube-apiserver and etcd are processes of their own; the
// RSS before the tick is reported beside the peak).
import { fileURLToPath } from 'node:url';
import { API_VERSION } from '../../shared/api/group.ts';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import type { Context } from '../../shared/runtime/context.ts';
import { clusterHandler } from '../../functions/reconcile-cluster/handler.ts';
import { kubeConfigFor } from '../sandbox/kubeconfig.ts';
import { NS, ReconcileWorld } from '../support/reconcile-world.ts';
import { isWrite } from '../support/counting-proxy.ts';

export interface TickRow {
  clusters: number;
  'wall s': number;
  'API reads': number;
  'API writes': number;
  'etcd calls': number;
  failed: number;
  skipped: number;
  'RSS before MiB': number;
  'peak RSS MiB': number;
  outcome: string;
}

const CLUSTER = 'demo';
/** What a healthy cluster has in its namespace, apart from Events (the reconcile reads none). */
const KINDS: [apiVersion: string, kind: string][] = [
  [API_VERSION, 'EtcdCluster'],
  [API_VERSION, 'EtcdMember'],
  ['v1', 'Pod'],
  ['v1', 'Service'],
  ['v1', 'Secret'],
  ['v1', 'ConfigMap'],
  ['policy/v1', 'PodDisruptionBudget'],
  ['networking.k8s.io/v1', 'NetworkPolicy'],
];

const namespaceOf = (i: number) => (i === 0 ? NS : `tick-${String(i).padStart(4, '0')}`);

/** In one copied namespace: the cluster copy's UID, and each original member's UID → its copy's. */
interface CopiedOwners {
  cluster?: string;
  members: Map<string, string>;
}

/** A stored object as a new one in `namespace`: server-set fields dropped, owners re-pointed. */
function copyOf(object: KubeObject, namespace: string, owners: CopiedOwners): KubeObject {
  const {
    uid: _uid,
    resourceVersion: _rv,
    creationTimestamp: _ct,
    generation: _g,
    managedFields: _mf,
    ...meta
  } = object.metadata as Record<string, unknown>;
  // Owners within the copied cluster: the cluster's copy, and the copy of each member (a Pod's
  // controller), which reconcile-cluster requires of a member's Pod.
  const refs = (meta.ownerReferences as { kind: string; uid: string }[] | undefined)?.map(o =>
    o.kind === 'EtcdCluster' && owners.cluster
      ? { ...o, uid: owners.cluster }
      : o.kind === 'EtcdMember' && owners.members.has(o.uid)
        ? { ...o, uid: owners.members.get(o.uid)! }
        : o,
  );
  const copy = {
    ...object,
    metadata: { ...meta, namespace, ...(refs ? { ownerReferences: refs } : {}) },
  } as KubeObject & { spec?: { clusterIP?: string; clusterIPs?: string[] } };
  // A Service's cluster IP is the API server's to allocate (a copy of one is refused as taken).
  if (object.kind === 'Service' && copy.spec && copy.spec.clusterIP !== 'None') {
    const { clusterIP: _ip, clusterIPs: _ips, ...spec } = copy.spec;
    copy.spec = spec;
  }
  return copy;
}

/** Copies the grown cluster's objects into `count - 1` more namespaces (status included). */
async function copyClusters(world: ReconcileWorld, count: number): Promise<void> {
  const kube = world.kube;
  const originals = new Map<string, KubeObject[]>();
  // kube-controller-manager puts its own kube-root-ca.crt ConfigMap into every new namespace.
  const ours = (o: KubeObject) => !(o.kind === 'ConfigMap' && o.metadata.name === 'kube-root-ca.crt');
  for (const [apiVersion, kind] of KINDS)
    originals.set(
      kind,
      (await kube.list(apiVersion, kind, NS)).filter(o => ours({ ...o, kind })),
    );
  const put = async (object: KubeObject, namespace: string, owners: CopiedOwners): Promise<KubeObject> => {
    const created = await kube.create(copyOf(object, namespace, owners));
    if (created.kind === 'created' && object.kind === 'EtcdMember' && object.metadata.uid)
      owners.members.set(object.metadata.uid, created.object.metadata.uid ?? '');
    if (created.kind !== 'created') throw new Error(`${object.kind} copy: ${created.kind}`);
    const status = (object as { status?: unknown }).status;
    if (status === undefined) return created.object;
    if (object.apiVersion !== API_VERSION) {
      await world.writeStatus({
        ...created.object,
        apiVersion: object.apiVersion,
        kind: object.kind,
        status,
      });
      return created.object;
    }
    const written = await kube.replaceStatus({ ...created.object, status } as KubeObject);
    if (written.kind !== 'written') throw new Error(`${object.kind} status copy: ${written.kind}`);
    return written.object;
  };
  const one = async (i: number): Promise<void> => {
    const namespace = namespaceOf(i);
    const made = await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    if (made.kind !== 'created') throw new Error(`Namespace ${namespace}: ${made.kind}`);
    const [cluster] = originals.get('EtcdCluster') ?? [];
    if (!cluster) throw new Error('no EtcdCluster grown');
    const copy = await put(cluster, namespace, { members: new Map() });
    const owners: CopiedOwners = { cluster: copy.metadata.uid, members: new Map() };
    // Members before Pods (KINDS' order), so each Pod's controller is re-pointed to its member's copy.
    for (const [, kind] of KINDS.slice(1))
      for (const object of originals.get(kind) ?? []) await put(object, namespace, owners);
  };
  const CONCURRENCY = 16;
  let next = 1;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await one(next++);
    }),
  );
}

/** The world's name-mapped etcd adapter, for every namespace: names in `tick-NNNN` map to `prod`. */
function everyNamespace(inner: EtcdAdapter, calls: { n: number }): EtcdAdapter {
  const ns = /\.(tick-\d{4})\.svc/;
  const toProd = (url: string) => url.replace(ns, `.${NS}.svc`);
  const mapped = async <T>(endpoints: readonly string[], call: (e: string[]) => Promise<T>): Promise<T> => {
    calls.n++;
    const from = ns.exec(endpoints[0] ?? '')?.[1];
    const answer = await call(endpoints.map(toProd));
    if (!from || answer === undefined) return answer;
    return JSON.parse(JSON.stringify(answer).replaceAll(`.${NS}.svc`, `.${from}.svc`)) as T;
  };
  return {
    listMembers: e => mapped(e, x => inner.listMembers(x)),
    addLearner: (e, peer) => mapped(e, x => inner.addLearner(x, toProd(peer))),
    promote: (e, id) => mapped(e, x => inner.promote(x, id)),
    remove: (e, id) => mapped(e, x => inner.remove(x, id)),
    moveLeader: (e, id) => mapped(e, x => inner.moveLeader(x, id)),
    memberStatus: e => mapped([e], ([x]) => inner.memberStatus(x ?? '')),
    clusterStatus: e => mapped(e, x => inner.clusterStatus(x)),
    snapshot: e => mapped([e], ([x]) => inner.snapshot(x ?? '')),
    listAlarms: e => mapped(e, x => inner.listAlarms(x)),
    disarmAlarm: (e, alarm) => mapped(e, x => inner.disarmAlarm(x, alarm)),
    compact: e => mapped(e, x => inner.compact(x)),
    defragment: e => mapped([e], ([x]) => inner.defragment(x ?? '')),
    healthRead: e => mapped(e, x => inner.healthRead(x)),
    storageState: e => mapped([e], ([x]) => inner.storageState(x ?? '')),
    enableDowngrade: (e, v) => mapped(e, x => inner.enableDowngrade(x, v)),
  };
}

const mib = (bytes: number) => Math.round(bytes / 1024 ** 2);

export async function benchResyncTick(opts: { runs?: number; clusters?: number } = {}): Promise<TickRow[]> {
  const runs = opts.runs ?? 5;
  const count = opts.clusters ?? Number(process.env.BENCH_TICK_CLUSTERS ?? 1000);
  const world = await ReconcileWorld.start(CLUSTER, 3);
  try {
    await world.grow(3);
    await copyClusters(world, count);
    const proxy = await world.api.countingProxy();
    try {
      const calls = { n: 0 };
      const ctx: Context = {
        ...world.ctx,
        kube: new KubeObjects(kubeConfigFor(proxy.url)),
        etcd: everyNamespace(world.ctx.etcd, calls),
      };
      const handler = clusterHandler(() => ctx);
      const tick = {
        kind: 'tick' as const,
        id: 'bench',
        source: 'bench',
        type: 'dev.knative.sources.ping',
        data: { tick: 'resync' },
      };
      const rows: TickRow[] = [];
      // round 0 warms the client (discovery, connections, JIT); rounds 1..runs are measured
      for (let round = 0; round <= runs; round++) {
        proxy.reset();
        calls.n = 0;
        const before = process.memoryUsage.rss();
        let peak = before;
        const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
        const start = process.hrtime.bigint();
        const outcome = await handler(tick);
        const seconds = Number(process.hrtime.bigint() - start) / 1e9;
        clearInterval(sampler);
        peak = Math.max(peak, process.memoryUsage.rss());
        if (round === 0) {
          // every cluster's step should say it is healthy, with nothing to do
          const details = outcome.result === 'done' && Array.isArray(outcome.details) ? outcome.details : [];
          const samples = details.slice(0, 2).join(' | ');
          console.error(`[resync-tick] ${count} clusters stored; warm-up tick: ${samples}`);
          continue;
        }
        const requests = proxy.requests();
        const summary = outcome.result === 'done' ? outcome.summary : `retry: ${outcome.reason}`;
        rows.push({
          clusters: count,
          'wall s': Number(seconds.toFixed(2)),
          'API reads': requests.filter(r => !isWrite(r.kind)).length,
          'API writes': requests.filter(r => isWrite(r.kind)).length,
          'etcd calls': calls.n,
          failed: /(\d+) failed/.exec(summary)?.[1] ? Number(/(\d+) failed/.exec(summary)?.[1]) : 0,
          skipped: /(\d+) left for the next tick/.exec(summary)?.[1]
            ? Number(/(\d+) left for the next tick/.exec(summary)?.[1])
            : 0,
          'RSS before MiB': mib(before),
          'peak RSS MiB': mib(peak),
          outcome: summary,
        });
      }
      return rows;
    } finally {
      await proxy.close();
    }
  } finally {
    await world.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const rows = await benchResyncTick({ runs: Number(process.env.BENCH_RUNS ?? 5) });
  console.table(rows);
  process.exit(0);
}
