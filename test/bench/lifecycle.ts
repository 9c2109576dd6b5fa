// Benchmark (not a test): how long etcdfn takes to form a cluster on the sandbox, next to how long
// the same etcd binary takes to form the same cluster started by hand in the same run, and how many
// API requests a reconcile that has nothing to do makes.
//
//   node --import tsx test/bench/lifecycle.ts          (BENCH_RUNS=3 for three rounds)
//   BENCH_KEEP=1 keeps the sandbox's directory (functions.log, bridge.log, Pod logs) afterwards.
//
// Each round, on the same machine and with the same etcd 3.5 binary (by-hand.ts starts the etcd
// processes with the Pods' raft timings, fsync and flags, so a ratio compares the operator with etcd):
//   1. by hand, the way the operator grows a cluster: a seed started new, learners added and promoted
//      one at a time, timed to 3 voters, then (settled) 3 → 5 voters, then (settled) 5 → 3 by the
//      remove sequence (member remove, process stop); then a fresh seed grown the same way to 5;
//   2. by hand, 1, 3 and 5 members started at once with a static --initial-cluster;
//   3. the operator: `kubectl apply -f` of a 3-member EtcdCluster to status.ready 3/3 and phase
//      Running, then (settled) `kubectl scale --replicas=5` to 5/5, the no-op reconcile below, then
//      (settled) `--replicas=3` until 3/3 with the other members and Pods gone; then fresh 1- and
//      5-member EtcdClusters applied to 1/1 and 5/5 (sandbox-cluster.ts).
// Before each scale both sides wait SETTLE_MS, a little more than etcd's 5 s health interval, so
// neither side's scale includes the wait left over from the previous promotion.
//
// With the cluster at 5/5 and its status no longer changing, reconcileCluster() is called in
// this process through a counting HTTP proxy in front of the API server, with a fresh Context
// (a cold function instance: the client's discovery requests included) and then once more with
// the same Context (a warm instance). Reads and writes are reported; a steady-state reconcile
// should make no write.
//
// The sandbox (API server, process kubelet, each function as its own process, the event
// bridge without chaos) runs inside this process, which must therefore be in the sandbox's private
// mount namespace (ensurePrivateMountNamespace) for the members' DNS names to resolve here too.
import { createWriteStream, mkdirSync, mkdtempSync, readdirSync, rmSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { startBridge, type Bridge } from '../../standalone/bridge/bridge.ts';
import type { DeliveryRecord } from '../../standalone/bridge/delivery.ts';
import { latencyRows } from './event-latency.ts';
import { createEtcdAdapter, type EtcdAdapter } from '../../shared/etcd/index.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { reconcileCluster } from '../../shared/reconcile/cluster.ts';
import { createContext } from '../../shared/runtime/context.ts';
import { startCore, type SandboxCore } from '../sandbox/core.ts';
import { startFunctions, type RunningFunctions } from '../sandbox/functions.ts';
import { kubeConfigFor } from '../sandbox/kubeconfig.ts';
import { ensurePrivateMountNamespace, insidePrivateMountNamespace } from '../sandbox/namespace.ts';
import { etcdBinaries } from '../support/etcd-binaries.ts';
import {
  growTo,
  POLL_MS,
  secondsSince,
  SETTLE_MS,
  shrinkTo,
  startSeed,
  staticCluster,
  STEP_TIMEOUT_MS,
  stopBaseline,
  type Baseline,
} from './by-hand.ts';
import { isWrite, startCountingProxy, type CountingProxy, type RequestKind } from './counting-proxy.ts';
import { GrowthTimeline } from './growth-timeline.ts';
import { LIFECYCLE_ROW } from './lifecycle-figures.ts';
import {
  applyFresh,
  deleteCluster,
  describeStatus,
  listMembersAndPods,
  NS,
  readCluster,
  readyRunning,
  watchReadyRunning,
  writeManifest,
  type Kubectl,
} from './sandbox-cluster.ts';

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
/** The sandbox's own default (`npm run sandbox`); Knative's PingSource ticks once a minute. */
const TICK_SECONDS = 15;

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
  /** By hand, learner sequence: the seed alone (1 voter), seed → 3, 3 → 5, a fresh seed → 5. */
  hand1?: number;
  hand3?: number;
  hand5?: number;
  handFresh5?: number;
  /** By hand: memberRemove + process stop, 5 → 3. */
  handDown3?: number;
  /** By hand, static --initial-cluster of 1, 3 and 5. */
  static1?: number;
  static3?: number;
  static5?: number;
  /** The operator: apply → 1/1, 3/3, 5/5; scale 3 → 5; scale 5 → 3. */
  op1?: number;
  op3?: number;
  op5?: number;
  opFresh5?: number;
  opDown3?: number;
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
        say(`round ${tag}: by hand (seed, then learners added and promoted; then removed)…`);
        await byHand(baseline, result);
        say(`round ${tag}: by hand, static --initial-cluster of 1, 3 and 5…`);
        for (const n of [1, 3, 5] as const) {
          const seconds = await staticCluster(baseline, n);
          result[`static${n}`] = seconds;
          say(`  ${n} member(s) with a leader ${fmt(seconds)} s`);
        }
        const name = (n: number) => `bench-${round}-${n}-${Math.random().toString(36).slice(2, 6)}`;
        say(`round ${tag}: the operator, apply → 3/3, scale → 5/5, scale → 3/3…`);
        await operatorRound({ sandbox, kubectl, etcd, work, say }, name(3), result);
        const sc = { kube: sandbox.kube, kubectl, kubeconfig: sandbox.core.kubeconfig, work, say };
        say(`round ${tag}: the operator, apply → 1/1…`);
        result.op1 = await applyFresh(sc, name(1), 1);
        say(`  kubectl apply → 1/1 ${fmt(result.op1)} s`);
        say(`round ${tag}: the operator, apply → 5/5…`);
        result.opFresh5 = await applyFresh(sc, name(5), 5);
        say(`  kubectl apply → 5/5 ${fmt(result.opFresh5)} s`);
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
      env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
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
// By hand (by-hand.ts): seed → 3 voters, 3 → 5, 5 → 3, then a fresh seed → 5.

async function byHand(baseline: Baseline, result: RoundResult): Promise<void> {
  const seeded = await startSeed(baseline);
  try {
    result.hand1 = seeded.seconds;
    result.hand3 = await growTo(baseline, seeded.cluster, 3, performance.now() - seeded.seconds * 1000);
    baseline.say(`  seed ${fmt(result.hand1)} s, 3 voters ${fmt(result.hand3)} s`);
    await sleep(SETTLE_MS);
    result.hand5 = await growTo(baseline, seeded.cluster, 5);
    baseline.say(`  3 → 5 voters ${fmt(result.hand5)} s`);
    await sleep(SETTLE_MS);
    result.handDown3 = await shrinkTo(baseline, seeded.cluster, 3);
    baseline.say(`  5 → 3 voters (remove + stop) ${fmt(result.handDown3)} s`);
  } finally {
    await stopBaseline(baseline, seeded.cluster);
  }
  const fresh = await startSeed(baseline);
  try {
    result.handFresh5 = await growTo(baseline, fresh.cluster, 5, performance.now() - fresh.seconds * 1000);
    baseline.say(`  seed → 5 voters ${fmt(result.handFresh5)} s`);
  } finally {
    await stopBaseline(baseline, fresh.cluster);
  }
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
  const manifest = writeManifest(work, name, 3);
  try {
    const applied = await watchReadyRunning(kubeconfig, name, 3);
    const start = performance.now();
    await kubectl(kubeconfig, 'apply', '-f', manifest);
    await readyRunning(sandbox.kube, name, 3, { start, say }).finally(() => applied.stop());
    result.op3 = applied.seconds(start);
    say(`  kubectl apply → 3/3 ${fmt(result.op3)} s`);
    await sleep(SETTLE_MS);
    const timeline = new GrowthTimeline();
    timeline.existing((await listMembersAndPods(sandbox.kube, name)).members);
    const scaled = await watchReadyRunning(kubeconfig, name, 5);
    const scaleStart = performance.now();
    await kubectl(kubeconfig, 'scale', 'etcdcluster', name, '--replicas=5', '-n', NS);
    await readyRunning(sandbox.kube, name, 5, { start: scaleStart, say, timeline }).finally(() =>
      scaled.stop(),
    );
    result.op5 = scaled.seconds(scaleStart);
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
    await sleep(SETTLE_MS);
    const downStart = performance.now();
    await kubectl(kubeconfig, 'scale', 'etcdcluster', name, '--replicas=3', '-n', NS);
    await readyRunning(sandbox.kube, name, 3, { start: downStart, say, exact: true });
    result.opDown3 = secondsSince(downStart);
    say(`  kubectl scale → 3/3 (from 5/5, the other 2 members and Pods gone) ${fmt(result.opDown3)} s`);
  } finally {
    await deleteCluster(sandbox.kube, kubectl, kubeconfig, name).catch((err: unknown) =>
      say(`  could not delete ${name}: ${err instanceof Error ? err.message : String(err)}`),
    );
  }
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

  const learnerWay = `seed new; memberAdd learner (retry unhealthy-cluster), start existing, promote; retries every ${POLL_MS} ms`;
  add(
    LIFECYCLE_ROW.apply1,
    's',
    r => r.op1,
    'fresh EtcdCluster 3.5.16, until a watch sees status ready n/n, Running',
  );
  add(
    LIFECYCLE_ROW.apply3,
    's',
    r => r.op3,
    'fresh EtcdCluster 3.5.16, until a watch sees status ready n/n, Running',
  );
  add(
    LIFECYCLE_ROW.apply5,
    's',
    r => r.opFresh5,
    'fresh EtcdCluster 3.5.16, until a watch sees status ready n/n, Running',
  );
  add(
    LIFECYCLE_ROW.scaleUp5,
    's',
    r => r.op5,
    `${settle}; etcd afterwards: ${rounds.map(r => r.etcdAfter ?? '-').join(' / ')}`,
  );
  add(LIFECYCLE_ROW.scaleDown3, 's', r => r.opDown3, `${settle}; status lists 3 etcd members, 3 Pods left`);
  add(LIFECYCLE_ROW.learners1, 's', r => r.hand1, 'the seed alone, started new');
  add(LIFECYCLE_ROW.learners3, 's', r => r.hand3, learnerWay);
  add(LIFECYCLE_ROW.learners5, 's', r => r.handFresh5, `a fresh seed; ${learnerWay}`);
  add(LIFECYCLE_ROW.learnersUp5, 's', r => r.hand5, settle);
  add(
    LIFECYCLE_ROW.removeDown3,
    's',
    r => r.handDown3,
    `${settle}; newest first, retries every ${POLL_MS} ms`,
  );
  add(LIFECYCLE_ROW.static1, 's', r => r.static1, 'started new, alone');
  add(LIFECYCLE_ROW.static3, 's', r => r.static3, 'all 3 started at once');
  add(LIFECYCLE_ROW.static5, 's', r => r.static5, 'all 5 started at once');
  const steps = [...new Set(rounds.flatMap(r => [...(r.growth?.keys() ?? [])]))];
  for (const step of steps)
    add(`scale 3 → 5, ${step}`, 's', r => r.growth?.get(step), 'first seen by polling (≤ 100 ms late)');
  add('ratio 1/1: operator / static --initial-cluster', '×', r => ratio(r.op1, r.static1), 'no aim');
  add('ratio 3/3: operator / static --initial-cluster', '×', r => ratio(r.op3, r.static3), 'aim ≤ 4×');
  add('ratio 5/5: operator / static --initial-cluster', '×', r => ratio(r.opFresh5, r.static5), 'aim ≤ 4×');
  add('ratio 3/3: operator / learner sequence', '×', r => ratio(r.op3, r.hand3), 'for reference');
  add('ratio 5/5: operator / learner sequence', '×', r => ratio(r.opFresh5, r.handFresh5), 'for reference');
  add('ratio scale 3 → 5: operator / by hand', '×', r => ratio(r.op5, r.hand5), 'aim ≤ 1.1×');
  add('ratio scale 5 → 3: operator / by hand', '×', r => ratio(r.opDown3, r.handDown3), 'no aim');
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
