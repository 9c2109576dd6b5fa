// `npm run sandbox`: a local stand-in for a Kubernetes cluster running etcdfn for real — the API
// server, the process kubelet (real etcd members as local processes), the four functions (each its
// own HTTP server through the functions framework) and the event bridge routing ApiServerSource
// events by the Triggers in knative/. Ctrl-C or SIGTERM stops every process it started.
import { SandboxCertManager } from './cert-manager.ts';
import {
  createWriteStream,
  mkdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
  type WriteStream,
} from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { Command } from 'commander';
import { pino } from 'pino';
import { parseAllDocuments } from 'yaml';
import { startBridge, type Bridge } from '../../standalone/bridge/bridge.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { startCore, type SandboxCore } from './core.ts';
import { startKnativeMode } from './knative.ts';
import { startFunctions, type RunningFunctions } from './functions.ts';
import { ensurePrivateMountNamespace } from './namespace.ts';
import {
  SANDBOX_BUCKET,
  SANDBOX_S3_SECRET,
  startObjectStore,
  type SandboxObjectStore,
} from './object-store.ts';
import { watchProgress } from './progress.ts';
import { sandboxClock } from './clock-offset.ts';
import { etcdBinaries } from '../support/etcd-binaries.ts';

await ensurePrivateMountNamespace();
// The AWS SDK prints a notice that its releases from 2027 need Node 22, which would land in the
// middle of the guide (the object store's client) and of functions.log. The locked SDK version runs
// on Node 20; the notice stays on for the functions outside the sandbox.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const repoRoot = resolve(import.meta.dirname, '..', '..');
const program = new Command()
  .name('npm run sandbox --')
  .description('Run etcdfn and real etcd clusters on a local stand-in for Kubernetes.')
  .option('--dir <dir>', 'state directory (kubeconfig, logs, volumes)', '.sandbox')
  .option('--port <port>', 'API server port on 127.0.0.1 (0 = any free port)', '0')
  .option('--no-example', 'do not apply examples/etcdcluster.yaml')
  .option('--no-s3', 'do not start the local object store for snapshots (s3rver)')
  .option(
    '--tick-seconds <n>',
    'resync tick period (the manifests: every 10 minutes; faster here, so lost events show sooner)',
    '15',
  )
  .option('--chaos', 'deliver events with duplicates, reordering, delays and in parallel')
  .option('--chaos-seed <n>', 'seed for --chaos, to repeat a run')
  .option('--ready-json', 'print one JSON line when ready instead of the guide (for tests)')
  .option(
    '--lose-events <p>',
    'lose this share (0..1) of watch events, as ApiServerSource can; 1 = ticks only',
    '0',
  )
  .option('--persist', 'keep API objects across restarts of the sandbox')
  .option('--crds <dir>', 'the CRDs to apply (default: crds/ of this checkout)')
  .option(
    '--nodes <n>',
    'nodes (sandbox, sandbox-2, …); with more than one, a scheduler spreads Pods over them and StorageClass local-path gives volumes tied to a node',
    '1',
  )
  .option(
    '--knative',
    "experimental (issue 28): Knative Eventing's own controllers, webhook, channel and Broker as Pods, knative/ applied, the functions as Pods; no bridge",
  )
  .option('--watch-stdin', 'stop when stdin closes (when started by a test)')
  .option(
    '--crash-dir <dir>',
    'arm crash points: a file named after a point (shared/runtime/crash.ts) in <dir> kills the function there once',
  )
  .parse();
const o = program.opts<{
  dir: string;
  port: string;
  example: boolean;
  s3: boolean;
  tickSeconds: string;
  chaos?: boolean;
  chaosSeed?: string;
  readyJson?: boolean;
  persist?: boolean;
  crds?: string;
  nodes: string;
  watchStdin?: boolean;
  knative?: boolean;
  crashDir?: string;
  loseEvents: string;
}>();

const dir = resolve(o.dir);
/** Restarts of each function process so far, as JSON, in the state directory. */
const RESTARTS_FILE = 'function-restarts.json';
/** Events each function answered 2xx, by CloudEvent type: tests bound "nothing happened" windows with it. */
const DELIVERED_FILE = 'delivered.json';
const logDir = join(dir, 'logs');
mkdirSync(logDir, { recursive: true });
const say = (line: string) => {
  if (!o.readyJson) console.log(line);
};
const logs: WriteStream[] = [];
const logFile = (name: string) => {
  const stream = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
  logs.push(stream);
  return stream;
};

let core: SandboxCore | undefined;
let functions: RunningFunctions | undefined;
let bridge: Bridge | undefined;
let objectStore: SandboxObjectStore | undefined;
let stopProgress: (() => void) | undefined;
let stopCertManager: (() => void) | undefined;
let stopServingStandIn: (() => void) | undefined;
let stopping = false;

async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    say('\nstopping the sandbox…');
    stopProgress?.();
    stopCertManager?.();
    stopServingStandIn?.();
    await bridge?.stop();
    await functions?.stop();
    await objectStore?.stop();
    await core?.stop();
    for (const stream of logs) stream.end();
    say('stopped; nothing is left running.');
  }
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
process.on('SIGHUP', () => void stop(0));
if (o.watchStdin) {
  process.stdin.on('end', () => void stop(0));
  process.stdin.on('error', () => void stop(0));
  process.stdin.resume();
}

try {
  say(
    `starting the control plane (etcd, kube-apiserver, kube-controller-manager) and the kubelet (state in ${dir})…`,
  );
  core = await startCore({
    dir,
    crdDir: o.crds ? resolve(o.crds) : join(repoRoot, 'crds'),
    port: Number(o.port),
    persist: o.persist ?? false,
    nodes: Number(o.nodes),
    // Knative's programs all listen on :8080: each of their Pods needs a network namespace.
    podNetwork: o.knative ?? false,
  });
  say(`  API server  ${core.url} (Kubernetes ${core.controlPlane.version})`);
  if (core.kubelet.nodeNames.length > 1) say(`  nodes       ${core.kubelet.nodeNames.join(', ')}`);
  // cert-manager's part for the certManager TLS provider: signs Certificates into their Secrets.
  stopCertManager = new SandboxCertManager(core.kc).start();
  if (o.s3) {
    objectStore = await startObjectStore(core, dir);
    say(
      `  S3 (s3rver) ${objectStore.endpoint}, bucket ${SANDBOX_BUCKET}, credentials in Secret ${SANDBOX_S3_SECRET}`,
    );
  }
  if (o.knative) {
    say('starting Knative Eventing (its controllers, webhook, in-memory channel and Broker as Pods)…');
    const knativeLog = logFile('knative');
    stopServingStandIn = await startKnativeMode(core.kubeconfig, core.kc, dir, repoRoot, line =>
      knativeLog.write(`${line}\n`),
    );
    say('  applied knative/: kubectl get brokers,triggers,apiserversources,pingsources -n etcdfn-system');
    say('  the functions run as Pods in etcdfn-system (a stand-in for Knative Serving); no event bridge');
    say('  (experimental, issue 28: no scaling to zero; snapshots to the local S3 are not wired)');
    if (o.readyJson) console.log(JSON.stringify({ ready: true, url: core.url, kubeconfig: core.kubeconfig }));
    await new Promise<never>(() => undefined);
  }
  say('starting the functions…');
  const fnLog = logFile('functions');
  functions = await startFunctions({
    kubeconfig: core.kubeconfig,
    env: {
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      ...(o.crashDir && { ETCDFN_CRASH_DIR: resolve(o.crashDir) }),
    },
    onLog: (name, line) => fnLog.write(`${name} ${line}\n`),
    onRestart: (name, count, why) => {
      // Knative would start a new instance; the count is kept in a file for tests to read.
      fnLog.write(
        `${name} {"msg":"process died (${why}); restarted on the same port","restarts":${count}}\n`,
      );
      say(`  ${name} died (${why}); restarted on the same port (restart ${count})`);
      writeFileSync(join(dir, RESTARTS_FILE), JSON.stringify(functions?.restarts() ?? {}));
    },
  });
  for (const [name, url] of Object.entries(functions.urls)) say(`  ${name.padEnd(18)} ${url}`);
  say('starting the event bridge…');
  const chaos = o.chaos
    ? {
        seed: o.chaosSeed ? Number(o.chaosSeed) : undefined,
        duplicate: 0.2,
        reorderWindow: 4,
        maxDelayMs: 50,
        parallel: true,
      }
    : undefined;
  const delivered: Record<string, Record<string, number>> = {};
  bridge = await startBridge({
    kubeConfig: core.kc,
    apiServerUrl: core.url,
    subscribers: functions.urls,
    tickSeconds: Number(o.tickSeconds),
    // Schedules' PingSources fire on the functions' clock (tests move it: test/sandbox/clock.ts).
    ...(sandboxClock() && { now: sandboxClock() }),
    replayInitialList: true,
    loseWatchEvents: Number(o.loseEvents),
    chaos,
    delivery: { backoffDelayMs: 100, retry: 10 },
    onDelivery: record => {
      if (record.outcome !== 'delivered') return;
      const byType = (delivered[record.subscriber] ??= {});
      byType[record.type] = (byType[record.type] ?? 0) + 1;
      // Written whole, then renamed: a reader never sees a half-written file.
      writeFileSync(join(dir, `${DELIVERED_FILE}.tmp`), JSON.stringify(delivered));
      renameSync(join(dir, `${DELIVERED_FILE}.tmp`), join(dir, DELIVERED_FILE));
    },
    log: pino({ level: process.env.LOG_LEVEL ?? 'info' }, logFile('bridge')),
  });
  if (o.example) {
    await applyExample(core);
    say('applied examples/etcdcluster.yaml');
  }
  if (o.readyJson) {
    const info = {
      ready: true,
      url: core.url,
      kubeconfig: core.kubeconfig,
      controlUrl: core.kubelet.controlUrl,
      functions: functions.urls,
    };
    console.log(JSON.stringify(info));
  } else {
    printGuide(core);
    stopProgress = watchProgress(core.kubeconfig, line => say(line));
  }
} catch (err) {
  console.error(`the sandbox could not start: ${err instanceof Error ? err.message : String(err)}`);
  await stop(1);
}

async function applyExample(sandbox: SandboxCore): Promise<void> {
  const kube = new KubeObjects(sandbox.kc);
  const text = readFileSync(join(repoRoot, 'examples', 'etcdcluster.yaml'), 'utf8');
  for (const doc of parseAllDocuments(text)) {
    const object = doc.toJS() as KubeObject;
    const created = await kube.create(object);
    if (created.kind === 'invalid')
      throw new Error(`examples/etcdcluster.yaml was refused: ${created.message}`);
  }
}

/** A path as short as it can be while still pointing to the right place from here (never via ".."). */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}

function printGuide(sandbox: SandboxCore): void {
  const kubeconfig = shown(sandbox.kubeconfig);
  const etcdctl = shown(etcdBinaries('3.6').etcdctl);
  say('');
  say('etcdfn is running. Try, in another terminal:');
  say(`  kubectl --kubeconfig ${kubeconfig} get etcdclusters,etcdmembers,pods,pvc`);
  say(`  kubectl --kubeconfig ${kubeconfig} scale etcdcluster demo --replicas=5`);
  say(`  kubectl --kubeconfig ${kubeconfig} describe etcdcluster demo`);
  say(`  ${etcdctl} --endpoints http://<pod IP>:2379 member list -w table`);
  say(`     (pod IPs: kubectl --kubeconfig ${kubeconfig} get pods -o wide)`);
  if (objectStore) {
    const manifest = shown(objectStore.exampleManifest);
    say(`  kubectl --kubeconfig ${kubeconfig} create -f ${manifest}   # a snapshot into the local S3`);
    say(`  kubectl --kubeconfig ${kubeconfig} get etcdsnapshots -o wide`);
  }
  say(`Logs: ${logDir}/. Ctrl-C stops everything.`);
  say('');
}
