// Standalone mode: etcdfn's event system for clusters without Knative. Runs the event bridge against
// a cluster (or the sandbox): it watches what knative/sources.yaml names, ticks as the PingSource does,
// and delivers to the function URLs given with --subscriber, routed by knative/triggers.yaml.
//
//   node --import tsx standalone/main.ts --kubeconfig ~/.kube/config \
//     --subscriber reconcile-cluster=http://127.0.0.1:8081 --subscriber reconcile-member=http://127.0.0.1:8082 ...
import { realpathSync } from 'node:fs';
import { hostname } from 'node:os';
import { pathToFileURL } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { Command, InvalidArgumentError, Option } from 'commander';
import { startBridge, type Bridge, type BridgeOptions } from './bridge/bridge.ts';
import type { ChaosOptions } from './bridge/chaos.ts';
import { log } from '../shared/log.ts';
import { KubeObjects } from '../shared/k8s/objects.ts';
import { healthServer, listenOn } from './health.ts';
import { LeaderElector } from './leader.ts';

interface CliOptions {
  kubeconfig?: string;
  apiServerUrl?: string;
  knativeDir?: string;
  subscriber: Record<string, string>;
  mode?: 'Reference' | 'Resource';
  format?: 'binary' | 'structured';
  tick: boolean;
  tickSeconds?: number;
  replayInitialList?: boolean;
  concurrency?: number;
  maxQueued?: number;
  strictTriggers?: boolean;
  chaosSeed?: number;
  chaosDuplicate?: number;
  chaosReorderWindow?: number;
  chaosMaxDelayMs?: number;
  chaosParallel?: boolean;
  healthPort?: number;
  healthHost?: string;
  leaderElect?: boolean;
  leaseName?: string;
  leaseNamespace?: string;
  leaseDurationSeconds?: number;
  identity?: string;
}

function subscriberPair(value: string, previous: Record<string, string>): Record<string, string> {
  const at = value.indexOf('=');
  const name = value.slice(0, at);
  const url = value.slice(at + 1);
  if (at <= 0 || !/^https?:\/\/./.test(url)) {
    throw new InvalidArgumentError(`expected name=http(s)://host:port, got "${value}"`);
  }
  return { ...previous, [name]: url };
}

function number(min: number, max = Number.POSITIVE_INFINITY) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max)
      throw new InvalidArgumentError(`expected a number in [${min}, ${max}]`);
    return n;
  };
}

function integer(min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer ≥ ${min}`);
    return n;
  };
}

export function buildCommand(): Command {
  return new Command('etcdfn-standalone')
    .description(
      "etcdfn's event bridge: Knative's ApiServerSources, PingSource, Broker and Triggers in one process",
    )
    .option(
      '--kubeconfig <path>',
      'kubeconfig to watch with (default: $KUBECONFIG, ~/.kube/config or in-cluster)',
    )
    .option('--api-server-url <url>', 'the `source` of object events (default: the kubeconfig server)')
    .option(
      '--knative-dir <dir>',
      'where sources.yaml, triggers.yaml and broker.yaml are read (default: the repo knative/)',
    )
    .addOption(
      new Option(
        '--subscriber <name=url>',
        'URL of a Trigger subscriber (repeatable), e.g. reconcile-member=http://127.0.0.1:8082',
      )
        .argParser(subscriberPair)
        .default({}, 'none'),
    )
    .addOption(
      new Option('--mode <mode>', 'override the ApiServerSources mode').choices(['Reference', 'Resource']),
    )
    .addOption(new Option('--format <format>', 'HTTP encoding of events').choices(['binary', 'structured']))
    .option('--no-tick', 'do not tick on the PingSource schedule')
    .option('--tick-seconds <n>', 'tick every n seconds instead of on the cron schedule', number(0.001))
    .option(
      '--replay-initial-list',
      'send add events for the objects that exist at start (ApiServerSource does not)',
    )
    .option('--concurrency <n>', 'deliveries in flight at most', integer(1))
    .option(
      '--max-queued <n>',
      'deliveries waiting to be sent at most; more are shed and counted (default 10000)',
      integer(1),
    )
    .option('--strict-triggers', "refuse Triggers that Knative's admission webhook would refuse")
    .option('--chaos-seed <n>', 'seed for every chaos decision (reproducible chaos)', integer(0))
    .option('--chaos-duplicate <p>', 'probability that a delivery is made twice', number(0, 1))
    .option('--chaos-reorder-window <n>', 'hold up to n deliveries and release them shuffled', integer(0))
    .option('--chaos-max-delay-ms <ms>', 'delay each delivery by a random 0..ms', integer(0))
    .option('--chaos-parallel', 'deliver events about the same object concurrently')
    .option(
      '--health-port <port>',
      'serve /healthz, /readyz and /functions/<name> for the kubelet on this port',
      integer(0),
    )
    .option('--health-host <host>', 'address of the health endpoints', '0.0.0.0')
    .option('--leader-elect', 'deliver only while holding a coordination.k8s.io Lease (for 2+ replicas)')
    .option('--lease-name <name>', 'the Lease (default etcdfn-standalone)')
    .option('--lease-namespace <ns>', 'namespace of the Lease (default $POD_NAMESPACE, else default)')
    .option(
      '--lease-duration-seconds <n>',
      'how long a silent leader keeps the Lease (default 15)',
      integer(1),
    )
    .option('--identity <id>', 'holder identity in the Lease (default $POD_NAME, else host-pid)');
}

/** Turns parsed CLI options into bridge options (the kubeconfig is loaded here). */
export function bridgeOptionsFrom(cli: CliOptions): BridgeOptions {
  if (Object.keys(cli.subscriber).length === 0) {
    throw new Error(
      'no subscribers: pass --subscriber <name>=<url> for each function (reconcile-cluster, reconcile-member, finalize-member, run-snapshot)',
    );
  }
  const kubeConfig = new KubeConfig();
  if (cli.kubeconfig) kubeConfig.loadFromFile(cli.kubeconfig);
  else kubeConfig.loadFromDefault();
  const options: BridgeOptions = { kubeConfig, subscribers: cli.subscriber, tick: cli.tick };
  if (cli.apiServerUrl) options.apiServerUrl = cli.apiServerUrl;
  if (cli.knativeDir) options.knativeDir = cli.knativeDir;
  if (cli.mode) options.mode = cli.mode;
  if (cli.format) options.format = cli.format;
  if (cli.tickSeconds !== undefined) options.tickSeconds = cli.tickSeconds;
  if (cli.replayInitialList) options.replayInitialList = true;
  if (cli.concurrency !== undefined) options.concurrency = cli.concurrency;
  if (cli.maxQueued !== undefined) options.maxQueued = cli.maxQueued;
  if (cli.strictTriggers) options.strictTriggers = true;
  const chaos: ChaosOptions = {};
  if (cli.chaosSeed !== undefined) chaos.seed = cli.chaosSeed;
  if (cli.chaosDuplicate !== undefined) chaos.duplicate = cli.chaosDuplicate;
  if (cli.chaosReorderWindow !== undefined) chaos.reorderWindow = cli.chaosReorderWindow;
  if (cli.chaosMaxDelayMs !== undefined) chaos.maxDelayMs = cli.chaosMaxDelayMs;
  if (cli.chaosParallel) chaos.parallel = true;
  if (Object.keys(chaos).length > 0) options.chaos = chaos;
  return options;
}

/**
 * Runs until SIGINT/SIGTERM; then stops the bridge (watches closed, deliveries aborted) and returns.
 * With --leader-elect the bridge runs only while this replica holds the Lease: a standby watches
 * nothing and delivers nothing, and takes over within the lease duration after the leader dies.
 */
export async function main(argv: string[]): Promise<void> {
  const command = buildCommand().parse(argv, { from: 'user' });
  const cli = command.opts<CliOptions>();
  const options = bridgeOptionsFrom(cli);
  let bridge: Bridge | undefined;
  let fail: (err: unknown) => void = () => {};
  const failed = new Promise<never>((_resolve, reject) => (fail = reject));
  failed.catch(() => {}); // handled by the race below; this only keeps Node from calling it unhandled
  let transitions: Promise<void> = Promise.resolve();
  const startDelivering = () => {
    transitions = transitions
      .then(async () => {
        bridge ??= await startBridge(options);
      })
      .catch(fail);
    return transitions;
  };
  const stopDelivering = () => {
    transitions = transitions.then(async () => {
      const running = bridge;
      bridge = undefined;
      if (!running) return;
      log.info({ stats: running.stats }, 'stopping the event bridge');
      await running.stop();
    });
    return transitions;
  };
  const elector = cli.leaderElect
    ? new LeaderElector({
        kube: new KubeObjects(options.kubeConfig),
        namespace: cli.leaseNamespace ?? process.env.POD_NAMESPACE ?? 'default',
        name: cli.leaseName ?? 'etcdfn-standalone',
        identity: cli.identity ?? process.env.POD_NAME ?? `${hostname()}-${process.pid}`,
        leaseDurationSeconds: cli.leaseDurationSeconds ?? 15,
        onStartedLeading: startDelivering,
        onStoppedLeading: stopDelivering,
      })
    : undefined;
  const health =
    cli.healthPort === undefined
      ? undefined
      : healthServer({
          subscribers: cli.subscriber,
          // A standby is ready: it is doing what it should. A leader once its bridge watches.
          ready: () => (elector ? !elector.isLeader || bridge !== undefined : bridge !== undefined),
        });
  if (health) {
    const port = await listenOn(health, cli.healthPort ?? 0, cli.healthHost ?? '0.0.0.0');
    log.info({ port }, 'health endpoints listening');
  }
  if (elector) elector.start();
  else await startDelivering();
  const signalled = new Promise<NodeJS.Signals>(resolve => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.once('SIGINT', second);
      process.once('SIGTERM', second);
      resolve(signal);
    };
    const second = (signal: NodeJS.Signals) => {
      log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
  const signal = await Promise.race([signalled, failed]);
  log.info({ signal }, 'stopping');
  health?.close();
  // A leader releases the Lease (so a standby takes over at once) and stops its bridge.
  if (elector) await elector.stop();
  await stopDelivering();
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (err: unknown) => {
      log.error({ err: err instanceof Error ? err.message : String(err) }, 'event bridge failed');
      process.exit(1);
    },
  );
}
