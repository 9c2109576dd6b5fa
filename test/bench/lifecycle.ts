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
//      Running, then (settled) spec.replicas 5 written to the API server (what `kubectl scale`
//      sends; the hand-run sequences too are timed from their first request, not from a CLI's
//      start) to 5/5, `kubectl scale` changing nothing (the CLI's own time, a row of its own), the
//      no-op reconcile below, then (settled) replicas 3 until 3/3 with the other members and Pods
//      gone; then fresh 1- and 5-member EtcdClusters applied to 1/1 and 5/5 (sandbox-cluster.ts).
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
  secondsSince,
  SETTLE_MS,
  shrinkTo,
  startSeed,
  staticCluster,
  STEP_TIMEOUT_MS,
  stopBaseline,
  type Baseline,
} from './by-hand.ts';
import {
  isWrite,
  startCountingProxy,
  type CountingProxy,
  type RequestKind,
} from '../support/counting-proxy.ts';
import {
  busySeconds,
  formatRow,
  ofCluster,
  parseFunctionLine,
  eventTimeline,
  type HandledLine,
} from './event-timeline.ts';
import { GrowthTimeline } from './growth-timeline.ts';
import { fmt, toRows, type LifecycleRow, type NoopCount, type RoundResult } from './lifecycle-rows.ts';
import {
  applyFresh,
  deleteCluster,
  describeStatus,
  kubectlScaleSeconds,
  listMembersAndPods,
  NS,
  readCluster,
  readyRunning,
  watchReadyRunning,
  writeManifest,
  writeReplicas,
  type Kubectl,
} from './sandbox-cluster.ts';

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
/** Every event the functions handled or sent back, from their own lines (event-timeline.ts). */
const handled: HandledLine[] = [];

export type { LifecycleRow };

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
      onLog: (name, line) => {
        fnLog.write(`${name} ${line}\n`);
        const parsed = parseFunctionLine(line);
        if (parsed) handled.push(parsed);
      },
    });
    bridge = await startBridge({
      kubeConfig: core.kc,
      apiServerUrl: core.url,
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
  return { dir, core, kube: new KubeObjects(core.kc), stop };
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
    const applySteps = new GrowthTimeline();
    const start = performance.now();
    const applyEpoch = Date.now();
    await kubectl(kubeconfig, 'apply', '-f', manifest);
    await readyRunning(sandbox.kube, name, 3, { start, say, timeline: applySteps }).finally(() =>
      applied.stop(),
    );
    result.op3 = applied.seconds(start);
    result.applySteps = applySteps.allReached();
    say(
      `  kubectl apply → 3/3 ${fmt(result.op3)} s (every member ${[...result.applySteps]
        .map(([step, at]) => `${step} +${at.toFixed(2)}`)
        .join(', ')} s)`,
    );
    // Lines arrive after the event; the last member's may still be on its way.
    await sleep(500);
    const events = eventTimeline(ofCluster(handled, name), applyEpoch, applyEpoch + result.op3 * 1000);
    result.applyBusy = busySeconds(events);
    result.applyEvents = events.length;
    say(`  apply → 3/3: ${events.length} events, some function busy ${fmt(result.applyBusy)} s of it:`);
    for (const row of events) say(`    ${formatRow(row)}`);
    await sleep(SETTLE_MS);
    const timeline = new GrowthTimeline();
    timeline.existing((await listMembersAndPods(sandbox.kube, name)).members);
    const scaled = await watchReadyRunning(kubeconfig, name, 5);
    const scaleStart = performance.now();
    await writeReplicas(sandbox.kube, name, 5);
    await readyRunning(sandbox.kube, name, 5, { start: scaleStart, say, timeline }).finally(() =>
      scaled.stop(),
    );
    result.op5 = scaled.seconds(scaleStart);
    say(`  replicas 5 written → 5/5 ${fmt(result.op5)} s`);
    result.kubectlScale = await kubectlScaleSeconds(kubectl, kubeconfig, name, 5);
    say(`  kubectl scale, no change: ${fmt(result.kubectlScale)} s`);
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
    await writeReplicas(sandbox.kube, name, 3);
    await readyRunning(sandbox.kube, name, 3, { start: downStart, say, exact: true });
    result.opDown3 = secondsSince(downStart);
    say(`  replicas 3 written → 3/3 (from 5/5, the other 2 members and Pods gone) ${fmt(result.opDown3)} s`);
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
  const proxy = await startCountingProxy(sandbox.core.kc);
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
    storageState: endpoint => (calls.push('storageState'), inner.storageState(endpoint)),
    enableDowngrade: (endpoints, v) => (calls.push('enableDowngrade'), inner.enableDowngrade(endpoints, v)),
  };
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
