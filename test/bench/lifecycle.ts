// Benchmark (not a test): how long etcdfn takes to form a cluster on the sandbox, next to how long
// the same etcd binary takes to form the same cluster started by hand in the same run, and how many
// API requests a reconcile that has nothing to do makes.
//
//   node --import tsx test/bench/lifecycle.ts          (BENCH_RUNS=3 for three rounds)
//   BENCH_KEEP=1 keeps the sandbox's directory (functions.log, bridge.log, Pod logs) afterwards.
//
// Each round, on the same machine and with the same etcd 3.5 binary:
//   1. by hand, the way the operator does it: a seed started with --initial-cluster-state new, then
//      for every further member memberAdd as a learner (retrying "unhealthy cluster" until etcd's
//      strict reconfiguration check, 5 s of connection to every voter, lets it through), its process
//      started with --initial-cluster-state existing, and promote as soon as etcd calls it in sync;
//      timed to 3 voters, then, from that cluster settled, to 5 voters;
//   2. for reference, 3 members started at once with a static --initial-cluster;
//   3. the operator: `kubectl apply -f` of a 3-member EtcdCluster to status.ready 3/3 and phase
//      Running, then (from that cluster settled the same way) `kubectl scale --replicas=5` to 5/5.
// The etcd processes by hand get the raft timings (etcd's defaults: 100 ms heartbeat, 1000 ms
// election), the fsync and the corruption check of the operator's Pods, so the figure compares the
// operator with etcd, not two configurations. Before each scale both wait SETTLE_MS, a little more
// than etcd's 5 s health interval, so neither side's scale includes the wait left over from the
// previous promotion.
//
// Last, with the cluster at 5/5 and its status no longer changing, reconcileCluster() is called in
// this process through a counting HTTP proxy in front of the API server, with a fresh Context
// (a cold function instance: the client's discovery requests included) and then once more with
// the same Context (a warm instance). Reads and writes are reported; a steady-state reconcile
// should make no write.
//
// The sandbox (API server, process kubelet, each function as its own process, the event
// bridge without chaos) runs inside this process, which must therefore be in the sandbox's private
// mount namespace (ensurePrivateMountNamespace) for the members' DNS names to resolve here too.
import {
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
  type WriteStream,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { stringify } from 'yaml';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember as EtcdMemberObject } from '../../shared/api/etcd-member.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { startBridge, type Bridge } from '../../standalone/bridge/bridge.ts';
import type { DeliveryRecord } from '../../standalone/bridge/delivery.ts';
import { latencyRows } from './event-latency.ts';
import { createEtcdAdapter, type EtcdAdapter, type EtcdMember } from '../../shared/etcd/index.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { reconcileCluster } from '../../shared/reconcile/cluster.ts';
import { createContext } from '../../shared/runtime/context.ts';
import { startCore, type SandboxCore } from '../sandbox/core.ts';
import { startFunctions, type RunningFunctions } from '../sandbox/functions.ts';
import { kubeConfigFor } from '../sandbox/kubeconfig.ts';
import { ensurePrivateMountNamespace, insidePrivateMountNamespace } from '../sandbox/namespace.ts';
import { etcdBinaries } from '../support/etcd-binaries.ts';
import { EtcdTestCluster, probeStatus, type RaftTimings } from '../support/etcd-process.ts';
import { isWrite, startCountingProxy, type CountingProxy, type RequestKind } from './counting-proxy.ts';
import { GrowthTimeline, type PodSeen } from './growth-timeline.ts';

export interface LifecycleRow {
  measurement: string;
  /** The median over the rounds. */
  value: number;
  unit: string;
  /** Every round's value, when there was more than one. */
  runs: string;
  detail: string;
  /** Every round's value, for the summary table (test/bench/summary.ts). */
  samples: number[];
}

export interface LifecycleOptions {
  /** Rounds (fresh cluster names each time); default $BENCH_RUNS or 1. */
  runs?: number;
  /** Progress lines (default: stderr). */
  progress?: (line: string) => void;
}

const repoRoot = resolve(import.meta.dirname, '..', '..');
const NS = 'default';
const VERSION = '3.5.16';
/** etcd's defaults, which the operator's Pods run with (no --heartbeat-interval/--election-timeout). */
const POD_RAFT: RaftTimings = { heartbeatMs: 100, electionMs: 1000 };
/** The flag of the Pods (shared/builders/etcd-flags.ts) that changes how a member starts. */
const POD_FLAGS = ['--experimental-initial-corrupt-check=true'];
/** A little more than etcd's HealthInterval (5 s), which a memberAdd after a promotion waits for. */
const SETTLE_MS = 6_000;
/** How often the by-hand procedure retries memberAdd and promote, and the operator's status is read. */
const POLL_MS = 50;
const STATUS_POLL_MS = 100;
/** The sandbox's own default (`npm run sandbox`); Knative's PingSource ticks once a minute. */
const TICK_SECONDS = 15;
const STEP_TIMEOUT_MS = 180_000;

type Cluster = EtcdCluster & KubeObject;
type Kubectl = (kubeconfig: string, ...args: string[]) => Promise<string>;

interface Sandbox {
  dir: string;
  core: SandboxCore;
  kube: KubeObjects;
  stop(): Promise<void>;
}

interface NoopCount {
  reads: number;
  writes: number;
  requests: string;
  etcd: string;
  etcdCalls: number;
  outcome: string;
}

interface RoundResult {
  hand3?: number;
  hand5?: number;
  static3?: number;
  op3?: number;
  op5?: number;
  etcdAfter?: string;
  cold?: NoopCount;
  warm?: NoopCount;
  /** Where the scale 3 → 5 spent its time, step by step (growth-timeline.ts). */
  growth?: Map<string, number>;
}

/** Thrown when a round did not finish; `rows` holds what was measured before. */
export class LifecycleBenchError extends Error {
  readonly rows: LifecycleRow[];
  constructor(message: string, rows: LifecycleRow[]) {
    super(message);
    this.rows = rows;
    this.name = 'LifecycleBenchError';
  }
}

/** Every delivery the sandbox's bridge made during the bench (per-event handling latency). */
const deliveries: DeliveryRecord[] = [];

export async function benchLifecycle(opts: LifecycleOptions = {}): Promise<LifecycleRow[]> {
  if (!insidePrivateMountNamespace()) {
    throw new Error(
      'benchLifecycle() needs the sandbox private mount namespace for member DNS names: ' +
        'call ensurePrivateMountNamespace() first',
    );
  }
  const runs = opts.runs ?? (Number(process.env.BENCH_RUNS) || 1);
  const say = opts.progress ?? ((line: string) => process.stderr.write(`[lifecycle] ${line}\n`));
  etcdBinaries('3.5'); // fails early, with how to install it, when etcd 3.5 is missing
  const kubectl = await loadKubectl();
  const work = mkdtempSync(join(tmpdir(), 'etcdfn-bench-'));
  const etcd = createEtcdAdapter({ timeoutMs: 5_000 });
  const baseline: Baseline = { dir: join(work, 'etcd'), clusters: new Set(), etcd, say };
  mkdirSync(baseline.dir);
  let sandbox: Sandbox | undefined;
  let stopSandbox: (() => Promise<void>) | undefined;
  let stopped: Promise<void> | undefined;
  const stopEverything = () =>
    (stopped ??= (async () => {
      await Promise.allSettled([...baseline.clusters].map(c => c.cleanup()));
      await stopSandbox?.();
      if (process.env.BENCH_KEEP === '1') say(`kept the sandbox's logs and volumes in ${work}`);
      else rmSync(work, { recursive: true, force: true });
    })());
  const onSignal = (): void => {
    say('interrupted: stopping everything started…');
    void stopEverything().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const rounds: RoundResult[] = [];
  const failures: string[] = [];
  try {
    say('starting the sandbox (API server, kubelet, functions, bridge)…');
    sandbox = await startSandbox(join(work, 'sandbox'), stop => (stopSandbox = stop));
    for (let round = 1; round <= runs; round++) {
      const result: RoundResult = {};
      rounds.push(result);
      const tag = `${round}/${runs}`;
      try {
        say(`round ${tag}: by hand (seed, then learners added and promoted)…`);
        Object.assign(result, await byHand(baseline));
        say(`  3 voters ${fmt(result.hand3)} s, 3 → 5 voters ${fmt(result.hand5)} s`);
        say(`round ${tag}: by hand, static --initial-cluster of 3…`);
        result.static3 = await staticThree(baseline);
        say(`  3 members with a leader ${fmt(result.static3)} s`);
        const name = `bench-${round}-${Math.random().toString(36).slice(2, 6)}`;
        say(`round ${tag}: the operator (EtcdCluster ${name})…`);
        await operatorRound({ sandbox, kubectl, etcd, work, say }, name, result);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        failures.push(`round ${tag}: ${why}`);
        say(`round ${tag} failed: ${why}`);
      }
    }
  } finally {
    say('stopping the sandbox and every etcd process…');
    await stopEverything();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const rows = [...toRows(rounds), ...latencyRows(deliveries)];
  if (failures.length > 0) throw new LifecycleBenchError(failures.join('\n'), rows);
  return rows;
}

// ---------------------------------------------------------------------------------------------
// The sandbox, as `npm run sandbox` starts it (test/sandbox/main.ts), without chaos.

/** `onStop` gets the stop function as soon as there is something to stop (an interrupt may come). */
async function startSandbox(dir: string, onStop: (stop: () => Promise<void>) => void): Promise<Sandbox> {
  const logs: WriteStream[] = [];
  const logFile = (name: string): WriteStream => {
    const stream = createWriteStream(join(dir, `${name}.log`), { flags: 'a' });
    logs.push(stream);
    return stream;
  };
  const core = await startCore({ dir, crdDir: join(repoRoot, 'crds'), port: 0 });
  let functions: RunningFunctions | undefined;
  let bridge: Bridge | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await bridge?.stop();
      await functions?.stop();
      await core.stop();
      await Promise.all(logs.map(s => new Promise<void>(r => s.end(() => r()))));
    })());
  onStop(stop);
  try {
    const fnLog = logFile('functions');
    functions = await startFunctions({
      kubeconfig: core.kubeconfig,
      env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', ETCDFN_PROMOTE_INTERVAL_MS: '200' },
      onLog: (name, line) => fnLog.write(`${name} ${line}\n`),
    });
    bridge = await startBridge({
      kubeConfig: kubeConfigFor(core.api.url),
      apiServerUrl: core.api.url,
      subscribers: functions.urls,
      tickSeconds: TICK_SECONDS,
      replayInitialList: true,
      delivery: { backoffDelayMs: 100, retry: 10 },
      onDelivery: record => deliveries.push(record),
      log: pino({ level: process.env.LOG_LEVEL ?? 'info' }, logFile('bridge')),
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { dir, core, kube: new KubeObjects(kubeConfigFor(core.api.url)), stop };
}

/**
 * test/support/kubectl.ts makes its cache directory when it is first imported; it is imported here,
 * inside the namespace, and that directory removed when the process exits.
 */
async function loadKubectl(): Promise<Kubectl> {
  const ours = () => new Set(readdirSync(tmpdir()).filter(n => n.startsWith('etcdfn-kubectl-')));
  const before = ours();
  const { kubectl } = await import('../support/kubectl.ts');
  const created = [...ours()].filter(n => !before.has(n));
  if (created.length === 1 && created[0]) {
    const dir = join(tmpdir(), created[0]);
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return kubectl;
}

// ---------------------------------------------------------------------------------------------
// By hand.

const secondsSince = (start: number): number => (performance.now() - start) / 1000;

interface Baseline {
  /** Where the etcd data dirs go (inside the benchmark's work dir). */
  dir: string;
  /** Clusters running now, for an interrupt to stop. */
  clusters: Set<EtcdTestCluster>;
  etcd: EtcdAdapter;
  say: (line: string) => void;
}

/**
 * EtcdTestCluster.start with the Pods' raft timings, fsync and flags, its temp dir under
 * `baseline.dir`: the constructor makes that dir with os.tmpdir() synchronously, before start()
 * first awaits, so TMPDIR points there for the call only. An interrupted start then leaves nothing
 * behind once the work dir is removed.
 */
async function startBaseline(baseline: Baseline, names: string[]): Promise<EtcdTestCluster> {
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = baseline.dir;
  let starting: Promise<EtcdTestCluster>;
  try {
    starting = EtcdTestCluster.start({
      minor: '3.5',
      size: names.length,
      names,
      raft: POD_RAFT,
      unsafeNoFsync: false,
      extraArgs: POD_FLAGS,
    });
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
  const cluster = await starting;
  baseline.clusters.add(cluster);
  return cluster;
}

async function stopBaseline(baseline: Baseline, cluster: EtcdTestCluster): Promise<void> {
  await cluster.cleanup();
  baseline.clusters.delete(cluster);
}

async function byHand(baseline: Baseline): Promise<{ hand3: number; hand5: number }> {
  const { etcd, say } = baseline;
  const start = performance.now();
  const cluster = await startBaseline(baseline, ['hand-1']);
  try {
    say(`    +${secondsSince(start).toFixed(2).padStart(6)} s  hand-1 (seed) has a leader`);
    for (const name of ['hand-2', 'hand-3']) await joinAsLearner(cluster, etcd, name, start, say);
    await allVoters(cluster, 3);
    const hand3 = secondsSince(start);
    await sleep(SETTLE_MS);
    const scaleStart = performance.now();
    for (const name of ['hand-4', 'hand-5']) await joinAsLearner(cluster, etcd, name, scaleStart, say);
    await allVoters(cluster, 5);
    return { hand3, hand5: secondsSince(scaleStart) };
  } finally {
    await stopBaseline(baseline, cluster);
  }
}

/** memberAdd as a learner, start its process (state existing), promote once in sync. */
async function joinAsLearner(
  cluster: EtcdTestCluster,
  etcd: EtcdAdapter,
  name: string,
  start: number,
  say: (line: string) => void,
): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  const slot = await cluster.reserve(name);
  let added: { id: string; members: EtcdMember[] } | undefined;
  let refused = 0;
  while (!added) {
    const result = await etcd.addLearner(cluster.endpoints, slot.peerURL);
    if (result.kind === 'ok') added = { id: result.member.id, members: result.members };
    else if (result.kind !== 'unhealthy-cluster' || Date.now() > deadline)
      throw new Error(`memberAdd ${name} (learner): ${result.kind}: ${result.message}`);
    else {
      refused++;
      await sleep(POLL_MS);
    }
  }
  const at = () => `+${secondsSince(start).toFixed(2).padStart(6)} s`;
  say(`    ${at()}  ${name} added as a learner (${refused} × unhealthy cluster before)`);
  const { id, members } = added;
  const initialCluster = members.map(m => `${m.id === id ? name : m.name}=${m.peerURLs[0] ?? ''}`).join(',');
  const proc = await cluster.startMember(slot, { state: 'existing', initialCluster, wait: false });
  for (;;) {
    const result = await etcd.promote(cluster.endpoints, id);
    if (result.kind === 'ok' || result.kind === 'not-a-learner') {
      say(`    ${at()}  ${name} promoted`);
      return;
    }
    if (!proc.running) throw new Error(`etcd member ${name} exited:\n${proc.logs()}`);
    const transient = result.kind === 'learner-not-in-sync' || result.kind === 'unavailable';
    if (!transient || Date.now() > deadline)
      throw new Error(`promote ${name}: ${result.kind}: ${result.message}`);
    await sleep(POLL_MS);
  }
}

/** Every running member answers, none is a learner, and all name the same leader. */
async function allVoters(cluster: EtcdTestCluster, size: number): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const members = cluster.running();
    const statuses = await Promise.all(members.map(m => probeStatus(m.clientURL)));
    const leaders = new Set(statuses.map(s => s?.leader ?? '0'));
    if (
      members.length === size &&
      statuses.every(s => s && !s.isLearner) &&
      leaders.size === 1 &&
      !leaders.has('0')
    )
      return;
    if (Date.now() > deadline) throw new Error(`the ${size} members by hand did not all become voters`);
    await sleep(POLL_MS);
  }
}

async function staticThree(baseline: Baseline): Promise<number> {
  const start = performance.now();
  const cluster = await startBaseline(baseline, ['static-1', 'static-2', 'static-3']);
  const seconds = secondsSince(start);
  await stopBaseline(baseline, cluster);
  return seconds;
}

// ---------------------------------------------------------------------------------------------
// The operator.

interface RoundTools {
  sandbox: Sandbox;
  kubectl: Kubectl;
  etcd: EtcdAdapter;
  work: string;
  say: (line: string) => void;
}

async function operatorRound(
  { sandbox, kubectl, etcd, work, say }: RoundTools,
  name: string,
  result: RoundResult,
): Promise<void> {
  const { kubeconfig } = sandbox.core;
  const manifest = join(work, `${name}.yaml`);
  writeFileSync(
    manifest,
    stringify({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name, namespace: NS },
      spec: { replicas: 3, version: VERSION, storage: { size: '1Gi' } },
    }),
  );
  try {
    const start = performance.now();
    await kubectl(kubeconfig, 'apply', '-f', manifest);
    await readyRunning(sandbox.kube, name, 3, { start, say });
    result.op3 = secondsSince(start);
    say(`  kubectl apply → 3/3 ${fmt(result.op3)} s`);
    await sleep(SETTLE_MS);
    const timeline = new GrowthTimeline();
    timeline.existing((await listMembersAndPods(sandbox.kube, name)).members);
    const scaleStart = performance.now();
    await kubectl(kubeconfig, 'scale', 'etcdcluster', name, '--replicas=5', '-n', NS);
    await readyRunning(sandbox.kube, name, 5, { start: scaleStart, say, timeline });
    result.op5 = secondsSince(scaleStart);
    say(`  kubectl scale → 5/5 ${fmt(result.op5)} s`);
    for (const { member, steps } of timeline.members())
      say(
        `    ${member}: ${Object.entries(steps)
          .map(([step, at]) => `${step} +${at.toFixed(2)}`)
          .join(', ')} s`,
      );
    result.growth = timeline.gaps();
    result.etcdAfter = await etcdMembership(sandbox.kube, etcd, name);
    say(`  etcd after the scale: ${result.etcdAfter}`);
    say('  no-op reconcile through a counting proxy…');
    Object.assign(result, await noopReconcile(sandbox, name));
    say(`  cold: ${result.cold?.requests}; warm: ${result.warm?.requests}`);
  } finally {
    await deleteCluster(sandbox.kube, kubectl, kubeconfig, name).catch((err: unknown) =>
      say(`  could not delete ${name}: ${err instanceof Error ? err.message : String(err)}`),
    );
  }
}

const clusterRef = (name: string) => ({ apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name });

async function readCluster(kube: KubeObjects, name: string): Promise<Cluster | undefined> {
  const read = await kube.get<Cluster>(clusterRef(name));
  return read.kind === 'found' ? read.object : undefined;
}

function describeStatus(cluster: Cluster | undefined): string {
  const s = cluster?.status;
  const progressing = s?.conditions?.find(c => c.type === 'Progressing');
  return `ready ${s?.ready ?? '-'}, phase ${s?.phase ?? '-'}, Progressing ${progressing?.reason ?? '-'}: ${progressing?.message ?? ''}`;
}

/**
 * status.ready "n/n" with phase Running, read every STATUS_POLL_MS. Each change of what the status
 * says goes to `say` with the seconds since `start`, to show where the time went.
 */
async function readyRunning(
  kube: KubeObjects,
  name: string,
  n: number,
  { start, say, timeline }: { start: number; say: (line: string) => void; timeline?: GrowthTimeline },
): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  let seen = '';
  for (;;) {
    if (timeline) {
      const { members, pods } = await listMembersAndPods(kube, name);
      timeline.observe(secondsSince(start), members, pods);
    }
    const cluster = await readCluster(kube, name);
    const s = cluster?.status;
    const learners = s?.members?.filter(m => m.role === 'learner').length ?? 0;
    const progressing = s?.conditions?.find(c => c.type === 'Progressing');
    const now = `ready ${s?.ready ?? '-'}, ${s?.phase ?? '-'}, ${progressing?.reason ?? '-'}; etcd members ${s?.members?.length ?? 0} (${learners} learner)`;
    if (now !== seen) say(`    +${secondsSince(start).toFixed(2).padStart(6)} s  ${(seen = now)}`);
    if (s?.ready === `${n}/${n}` && s.phase === 'Running') return;
    if (Date.now() > deadline)
      throw new Error(
        `${name} not ${n}/${n} Running after ${STEP_TIMEOUT_MS / 1000} s (${describeStatus(cluster)})`,
      );
    await sleep(STATUS_POLL_MS);
  }
}

async function listMembersAndPods(
  kube: KubeObjects,
  name: string,
): Promise<{ members: (EtcdMemberObject & KubeObject)[]; pods: PodSeen[] }> {
  const selector = `etcdfn.io/cluster=${name}`;
  const [members, pods] = await Promise.all([
    kube.list<EtcdMemberObject & KubeObject>(API_VERSION, 'EtcdMember', NS, selector),
    kube.list<KubeObject & PodSeen>('v1', 'Pod', NS, selector),
  ]);
  return { members, pods };
}

/** What etcd itself says (not timed): voters and learners, through the Pods' IPs. */
async function etcdMembership(kube: KubeObjects, etcd: EtcdAdapter, name: string): Promise<string> {
  const pods = await kube.list<KubeObject & { status?: { podIP?: string } }>(
    'v1',
    'Pod',
    NS,
    `etcdfn.io/cluster=${name}`,
  );
  const endpoints = pods.flatMap(p => (p.status?.podIP ? [`http://${p.status.podIP}:2379`] : []));
  const listed = await etcd.listMembers(endpoints);
  if (listed.kind !== 'ok') return `member list failed: ${listed.kind}`;
  const learners = listed.members.filter(m => m.isLearner).length;
  return `${listed.members.length - learners} voters, ${learners} learners`;
}

/** The status stops changing: nothing in flight, Progressing False, same resourceVersion for 3 s. */
async function settled(kube: KubeObjects, name: string): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  let last = '';
  let since = Date.now();
  for (;;) {
    const cluster = await readCluster(kube, name);
    const s = cluster?.status;
    const quiet =
      s?.operation === undefined &&
      s?.conditions?.find(c => c.type === 'Progressing')?.status === 'False' &&
      s.ready === '5/5';
    const version = cluster?.metadata.resourceVersion ?? '';
    if (version !== last || !quiet) {
      last = version;
      since = Date.now();
    } else if (Date.now() - since >= 3_000) return;
    if (Date.now() > deadline) throw new Error(`${name} did not settle (${describeStatus(cluster)})`);
    await sleep(250);
  }
}

async function noopReconcile(sandbox: Sandbox, name: string): Promise<{ cold: NoopCount; warm: NoopCount }> {
  await settled(sandbox.kube, name);
  const proxy = await startCountingProxy(sandbox.core.api.url);
  try {
    const base = createContext(kubeConfigFor(proxy.url));
    const calls: string[] = [];
    const ctx = { ...base, etcd: countingEtcd(base.etcd, calls) };
    const once = async (): Promise<NoopCount> => {
      proxy.reset();
      calls.length = 0;
      const outcome = await reconcileCluster(ctx, { namespace: NS, name });
      return count(proxy, calls, `${outcome.result}: ${'summary' in outcome ? outcome.summary : ''}`);
    };
    const cold = await once();
    const warm = await once();
    return { cold, warm };
  } finally {
    await proxy.close();
  }
}

function count(proxy: CountingProxy, etcdCalls: string[], outcome: string): NoopCount {
  const requests = proxy.requests();
  const byKind = new Map<RequestKind, number>();
  for (const r of requests) byKind.set(r.kind, (byKind.get(r.kind) ?? 0) + 1);
  const etcdByCall = new Map<string, number>();
  for (const c of etcdCalls) etcdByCall.set(c, (etcdByCall.get(c) ?? 0) + 1);
  return {
    reads: requests.filter(r => !isWrite(r.kind)).length,
    writes: requests.filter(r => isWrite(r.kind)).length,
    requests: [...byKind].map(([kind, n]) => `${kind} ${n}`).join(', ') || 'none',
    etcdCalls: etcdCalls.length,
    etcd: [...etcdByCall].map(([call, n]) => `${call} ×${n}`).join(', ') || 'none',
    outcome,
  };
}

/** The adapter with each call recorded (clusterStatus with the number of members it asks). */
function countingEtcd(inner: EtcdAdapter, calls: string[]): EtcdAdapter {
  return {
    listMembers: endpoints => (calls.push('listMembers'), inner.listMembers(endpoints)),
    addLearner: (endpoints, peerURL) => (calls.push('addLearner'), inner.addLearner(endpoints, peerURL)),
    promote: (endpoints, id) => (calls.push('promote'), inner.promote(endpoints, id)),
    remove: (endpoints, id) => (calls.push('remove'), inner.remove(endpoints, id)),
    moveLeader: (endpoints, to) => (calls.push('moveLeader'), inner.moveLeader(endpoints, to)),
    memberStatus: endpoint => (calls.push('memberStatus'), inner.memberStatus(endpoint)),
    clusterStatus: endpoints => (
      calls.push(`clusterStatus(${endpoints.length} members)`),
      inner.clusterStatus(endpoints)
    ),
    snapshot: endpoint => (calls.push('snapshot'), inner.snapshot(endpoint)),
    listAlarms: endpoints => (calls.push('listAlarms'), inner.listAlarms(endpoints)),
    disarmAlarm: (endpoints, alarm) => (calls.push('disarmAlarm'), inner.disarmAlarm(endpoints, alarm)),
    compact: endpoints => (calls.push('compact'), inner.compact(endpoints)),
    defragment: endpoint => (calls.push('defragment'), inner.defragment(endpoint)),
    healthRead: endpoints => (calls.push('healthRead'), inner.healthRead(endpoints)),
  };
}

async function deleteCluster(
  kube: KubeObjects,
  kubectl: Kubectl,
  kubeconfig: string,
  name: string,
): Promise<void> {
  await kubectl(kubeconfig, 'delete', 'etcdcluster', name, '-n', NS, '--wait=false', '--ignore-not-found');
  const selector = `etcdfn.io/cluster=${name}`;
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const [cluster, members, pods] = await Promise.all([
      readCluster(kube, name),
      kube.list<EtcdMemberObject & KubeObject>(API_VERSION, 'EtcdMember', NS, selector),
      kube.list('v1', 'Pod', NS, selector),
    ]);
    if (!cluster && members.length === 0 && pods.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`still there after delete: ${members.length} EtcdMembers, ${pods.length} Pods`);
    await sleep(250);
  }
}

// ---------------------------------------------------------------------------------------------
// Rows.

const fmt = (n: number | undefined, digits = 2): string => (n === undefined ? '-' : n.toFixed(digits));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}

function toRows(rounds: RoundResult[]): LifecycleRow[] {
  const rows: LifecycleRow[] = [];
  const add = (
    measurement: string,
    unit: string,
    pick: (r: RoundResult) => number | undefined,
    detail: string,
    digits = 2,
  ): void => {
    const values = rounds.map(pick).filter((v): v is number => v !== undefined && Number.isFinite(v));
    if (values.length === 0) return;
    rows.push({
      measurement,
      value: Number(median(values).toFixed(digits)),
      unit,
      runs: rounds.length > 1 ? rounds.map(r => fmt(pick(r), digits)).join(' / ') : '',
      detail,
      samples: values,
    });
  };
  const ratio = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined || b === 0 ? undefined : a / b;
  const first = rounds.find(r => r.warm);
  const settle = `scale issued ${SETTLE_MS / 1000} s after the previous step (etcd's 5 s health interval)`;

  add(
    'operator: kubectl apply → 3/3 Ready, Running',
    's',
    r => r.op3,
    'EtcdCluster 3.5.16, status polled every 100 ms',
  );
  add(
    'operator: kubectl scale → 5/5 Ready, Running',
    's',
    r => r.op5,
    `${settle}; etcd afterwards: ${rounds.map(r => r.etcdAfter ?? '-').join(' / ')}`,
  );
  add(
    'by hand, same way: seed → 3 voters',
    's',
    r => r.hand3,
    `seed new; memberAdd learner (retry unhealthy-cluster), start existing, promote; retries every ${POLL_MS} ms`,
  );
  add('by hand, same way: 3 → 5 voters', 's', r => r.hand5, settle);
  add(
    'by hand, static --initial-cluster: 3 members with a leader',
    's',
    r => r.static3,
    'all 3 started at once',
  );
  const steps = [...new Set(rounds.flatMap(r => [...(r.growth?.keys() ?? [])]))];
  for (const step of steps)
    add(`scale 3 → 5, ${step}`, 's', r => r.growth?.get(step), 'first seen by polling (≤ 100 ms late)');
  add('ratio 3/3: operator / by hand same way', '×', r => ratio(r.op3, r.hand3), 'the figure');
  add('ratio 5/5: operator / by hand same way', '×', r => ratio(r.op5, r.hand5), 'the figure');
  add('ratio 3/3: operator / static --initial-cluster', '×', r => ratio(r.op3, r.static3), 'for reference');
  add(
    'no-op reconcile, warm instance: API reads',
    'requests',
    r => r.warm?.reads,
    first?.warm ? `${first.warm.requests}; ${first.warm.outcome}` : '',
    0,
  );
  add('no-op reconcile, warm instance: API writes', 'requests', r => r.warm?.writes, 'aim: 0', 0);
  add(
    'no-op reconcile, cold instance: API reads',
    'requests',
    r => r.cold?.reads,
    first?.cold ? `${first.cold.requests} (a fresh client's discovery included)` : '',
    0,
  );
  add('no-op reconcile, cold instance: API writes', 'requests', r => r.cold?.writes, 'aim: 0', 0);
  add(
    'no-op reconcile, warm instance: etcd adapter calls',
    'calls',
    r => r.warm?.etcdCalls,
    first?.warm?.etcd ?? '',
    0,
  );
  return rows;
}

// ---------------------------------------------------------------------------------------------

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  await ensurePrivateMountNamespace();
  try {
    const rows = await benchLifecycle();
    console.table(rows);
  } catch (err) {
    if (err instanceof LifecycleBenchError) console.table(err.rows);
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
  process.exit(0);
}
