// The event bridge: what Knative's ApiServerSources, PingSource, Broker and Triggers do together,
// in one process, read from the manifests in knative/. Each watch event becomes one CloudEvent in
// ApiServerSource's format; the Broker stamps it; every Trigger whose filters match gets it delivered
// to its subscriber's URL, at least once. This is the sandbox's event system and etcdfn's standalone
// mode for clusters without Knative.
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { CloudEvent } from 'cloudevents';
import type { Logger } from 'pino';
import { PING_EVENT_TYPE } from '../../shared/events/types.ts';
import { log as rootLog } from '../../shared/log.ts';
import { metrics } from '../../shared/runtime/metrics.ts';
import { Chaos, chaosEnabled, type ChaosOptions, type ChaosStats } from './chaos.ts';
import {
  Dispatcher,
  type DeadLetter,
  type DeliveryJob,
  type DeliveryRecord,
  type DeliveryStats,
} from './delivery.ts';
import { apiServerEvent, withBrokerArrival } from './format.ts';
import {
  loadBrokerDelivery,
  loadSources,
  type ApiServerSourceSpec,
  type DeliverySpec,
  type KnativeSources,
  type SourceMode,
} from './sources.ts';
import { Ticker } from './tick.ts';
import { attributesOf, loadTriggers, triggerMatches, type TriggerSpec } from './triggers.ts';
import { ResourceWatcher, type WatchTarget } from './watcher.ts';
import { ApiPings } from './api-pings.ts';

export const DEFAULT_KNATIVE_DIR = join(import.meta.dirname, '..', '..', 'knative');

export interface BridgeOptions {
  kubeConfig: KubeConfig;
  /** The `source` of ApiServerSource events; defaults to the kubeconfig's current cluster server. */
  apiServerUrl?: string;
  /** Trigger subscriber name (e.g. reconcile-member) → the URL to POST its events to. */
  subscribers: Record<string, string>;
  /** Where sources.yaml, triggers.yaml and broker.yaml are read from (default: the repo's knative/). */
  knativeDir?: string;
  /** Overrides every ApiServerSource's spec.mode. */
  mode?: SourceMode;
  /** binary (Knative's default) or structured; overrides the delivery spec's format. */
  format?: 'binary' | 'structured';
  /** Overrides fields of the Broker's (or a Trigger's) delivery spec, e.g. a shorter back-off. */
  delivery?: Partial<DeliverySpec>;
  chaos?: ChaosOptions;
  /** Tick on the PingSource's schedule (default true); tickNow() works either way. */
  tick?: boolean;
  /** Tick every N seconds instead of on the cron schedule. */
  tickSeconds?: number;
  /**
   * Also tick the PingSources found in the API server that run-snapshot makes for
   * EtcdSnapshotSchedules (default: as `tick`). They keep their own cron even with tickSeconds.
   */
  apiPingSources?: boolean;
  /** The clock of those PingSources' timers (ms since the epoch; the sandbox's test clock). */
  now?: () => number;
  /**
   * Probability (0..1) that an ApiServerSource event is lost before it reaches the Broker, as the
   * real adapter loses a send after its retries. 1 loses every watch event: only ticks get through.
   */
  loseWatchEvents?: number;
  /** Emit events for the objects found by the initial list (real ApiServerSource does not). */
  replayInitialList?: boolean;
  /** Requests in flight at most (default 16). */
  concurrency?: number;
  /** Deliveries waiting to be sent at most; more are shed and counted (default 10,000). */
  maxQueued?: number;
  /** Refuse Triggers that Knative's admission webhook would refuse (default: warn). */
  strictTriggers?: boolean;
  /** Observer for every delivery attempt. */
  onDelivery?: (record: DeliveryRecord) => void;
  /** Observer for every CloudEvent the bridge publishes, with the subscribers it was routed to. */
  onEvent?: (event: CloudEvent<unknown>, subscribers: string[]) => void;
  log?: Logger;
}

export interface BridgeStats {
  watchEvents: number;
  /** Watch events dropped on purpose (loseWatchEvents). */
  lostWatchEvents: number;
  ticks: number;
  published: number;
  /** Deliveries created by routing (before chaos). */
  routed: number;
  /** Events that matched a Trigger whose subscriber has no URL. */
  unrouted: number;
  delivery: DeliveryStats;
  chaos?: ChaosStats;
}

export interface Bridge {
  /** Stops watching and ticking, drops held chaos, aborts deliveries in flight. */
  stop(): Promise<void>;
  /** Sends one tick from every PingSource now; returns the events. */
  tickNow(): CloudEvent<unknown>[];
  /** Routes and delivers an event as if a source had sent it to the Broker; returns the subscribers. */
  publish(event: CloudEvent<unknown>): string[];
  /** Resolves when no delivery is pending (chaos may still hold or delay some). */
  idle(): Promise<void>;
  readonly deadLetters: DeadLetter[];
  readonly stats: BridgeStats;
  readonly sources: KnativeSources;
  readonly triggers: TriggerSpec[];
}

export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  // Over 80 lines: wires the bridge's parts (sources, triggers, watchers, queue, delivery, ping
  // sources) in start order beside their shutdown, so the two orders can be read against each other.
  const log = options.log ?? rootLog.child({ component: 'bridge' });
  const knativeDir = options.knativeDir ?? DEFAULT_KNATIVE_DIR;
  const sources = loadSources(knativeDir);
  const triggers = loadTriggers(knativeDir, { strict: options.strictTriggers ?? false, log });
  const brokerDelivery = loadBrokerDelivery(knativeDir);
  const apiServerUrl = options.apiServerUrl ?? options.kubeConfig.getCurrentCluster()?.server;
  if (!apiServerUrl) throw new Error('no apiServerUrl given and the kubeconfig has no current cluster');
  warnAboutSubscribers(triggers, options.subscribers, log);

  const chaosOn = chaosEnabled(options.chaos);
  const dispatcher = new Dispatcher({
    concurrency: options.concurrency ?? 16,
    ...(options.maxQueued !== undefined && { maxQueued: options.maxQueued }),
    // Chaos duplicates deliveries on purpose: they must reach the functions.
    coalesce: !chaosOn,
    onDropped: (reason, job) => metrics.bridgeDropped.inc({ reason, trigger: job.trigger }),
    log: log.child({ part: 'delivery' }),
    ...(options.onDelivery ? { onAttempt: options.onDelivery } : {}),
  });
  const chaos = chaosOn
    ? new Chaos<DeliveryJob>(options.chaos ?? {}, job => void dispatcher.submit(job))
    : undefined;
  const stats: BridgeStats = {
    watchEvents: 0,
    lostWatchEvents: 0,
    ticks: 0,
    published: 0,
    routed: 0,
    unrouted: 0,
    delivery: dispatcher.stats,
  };
  if (chaos) stats.chaos = chaos.stats;

  const policyFor = (trigger: TriggerSpec): DeliverySpec => {
    const policy: DeliverySpec = { ...(trigger.delivery ?? brokerDelivery), ...options.delivery };
    if (options.format) policy.format = options.format;
    return policy;
  };

  const publish = (event: CloudEvent<unknown>): string[] => {
    const stamped = withBrokerArrival(event);
    const attributes = attributesOf(stamped);
    const routed: string[] = [];
    for (const trigger of triggers) {
      if (!triggerMatches(trigger, attributes)) continue;
      const url = options.subscribers[trigger.subscriber];
      if (url === undefined) {
        stats.unrouted++;
        continue;
      }
      routed.push(trigger.subscriber);
      stats.routed++;
      const job: DeliveryJob = {
        subscriber: trigger.subscriber,
        trigger: trigger.name,
        url,
        event: stamped,
        policy: policyFor(trigger),
      };
      // One object's events reach one subscriber in order, unless chaos asks for parallel delivery.
      if (!chaos?.parallel) job.key = `${trigger.name}|${stamped.subject ?? stamped.source}`;
      // The tick is the safety net for whatever a full queue sheds: it is never shed itself.
      if (stamped.type === PING_EVENT_TYPE) job.keep = true;
      if (chaos) chaos.submit(job);
      else void dispatcher.submit(job);
    }
    stats.published++;
    log.debug({ id: stamped.id, type: stamped.type, subject: stamped.subject, routed }, 'published');
    options.onEvent?.(stamped, routed);
    return routed;
  };

  const tickers = sources.pingSources.map(
    ping =>
      new Ticker({
        ping,
        ...(options.tickSeconds !== undefined ? { tickSeconds: options.tickSeconds } : {}),
        onTick: event => {
          stats.ticks++;
          publish(event);
        },
        log: log.child({ part: 'tick', ping: ping.name }),
      }),
  );

  const watchers: ResourceWatcher[] = [];
  for (const source of sources.apiServerSources) {
    const mode = options.mode ?? source.mode;
    for (const target of await watchTargets(source, options.kubeConfig)) {
      watchers.push(
        new ResourceWatcher({
          kubeConfig: options.kubeConfig,
          target,
          replayInitialList: options.replayInitialList ?? false,
          log: log.child({ source: source.name }),
          onEvent: (verb, object) => {
            stats.watchEvents++;
            if (Math.random() < (options.loseWatchEvents ?? 0)) {
              stats.lostWatchEvents++;
              return;
            }
            publish(apiServerEvent({ source: apiServerUrl, mode, verb, object }));
          },
        }),
      );
    }
  }

  const apiPings =
    (options.apiPingSources ?? options.tick ?? true)
      ? new ApiPings({
          kubeConfig: options.kubeConfig,
          ...pingNamespaces(sources.apiServerSources),
          ...(options.now && { now: options.now }),
          log: log.child({ part: 'api-pings' }),
          onTick: event => {
            stats.ticks++;
            publish(event);
          },
        })
      : undefined;

  const stopAll = async () => {
    tickers.forEach(t => t.stop());
    await apiPings?.stop();
    chaos?.stop();
    await Promise.all(watchers.map(w => w.stop()));
    await dispatcher.stop();
  };

  try {
    await Promise.all(watchers.map(w => w.start()));
  } catch (err) {
    await stopAll();
    throw err;
  }
  if (options.tick ?? true) tickers.forEach(t => t.start());
  await apiPings?.start();
  log.info(
    {
      apiServerUrl,
      watches: watchers.length,
      triggers: triggers.map(t => `${t.name}→${options.subscribers[t.subscriber] ?? '(no URL)'}`),
      mode: options.mode ?? 'as in sources.yaml',
      chaos: chaos ? options.chaos : undefined,
    },
    'event bridge started',
  );

  let stopping: Promise<void> | undefined;
  return {
    stop: () => (stopping ??= stopAll()),
    tickNow: () => tickers.map(t => t.tickNow()),
    publish,
    idle: () => dispatcher.idle(),
    deadLetters: dispatcher.deadLetters,
    stats,
    sources,
    triggers,
  };
}

/**
 * Where the schedules' PingSources are watched: the namespaces the sources name when every source
 * names them (a namespaced install, whose Roles are only there), else every namespace.
 */
export function pingNamespaces(sources: ApiServerSourceSpec[]): { namespaces?: string[] } {
  if (sources.length === 0 || !sources.every(s => s.namespaces.kind === 'names')) return {};
  const names = sources.flatMap(s => (s.namespaces.kind === 'names' ? s.namespaces.namespaces : []));
  return { namespaces: [...new Set(names)].sort() };
}

/** One watch per resource, per namespace when the source selects namespaces by label or name. */
async function watchTargets(source: ApiServerSourceSpec, kubeConfig: KubeConfig): Promise<WatchTarget[]> {
  let namespaces: (string | undefined)[];
  const scope = source.namespaces;
  if (scope.kind === 'all') namespaces = [undefined];
  else if (scope.kind === 'own') namespaces = [scope.namespace];
  else if (scope.kind === 'names') namespaces = scope.namespaces;
  else {
    // Resolved once at start: a namespace labelled later is not picked up until a restart.
    const list = await kubeConfig
      .makeApiClient(CoreV1Api)
      .listNamespace({ labelSelector: scope.labelSelector });
    namespaces = list.items.map(ns => ns.metadata?.name).filter((n): n is string => !!n);
  }
  const targets: WatchTarget[] = [];
  for (const resource of source.resources) {
    for (const namespace of namespaces) {
      const target: WatchTarget = { apiVersion: resource.apiVersion, kind: resource.kind };
      if (resource.labelSelector) target.labelSelector = resource.labelSelector;
      if (namespace !== undefined) target.namespace = namespace;
      targets.push(target);
    }
  }
  return targets;
}

function warnAboutSubscribers(triggers: TriggerSpec[], subscribers: Record<string, string>, log: Logger) {
  const wanted = new Set(triggers.map(t => t.subscriber));
  const missing = [...wanted].filter(name => subscribers[name] === undefined);
  const unknown = Object.keys(subscribers).filter(name => !wanted.has(name));
  if (missing.length > 0)
    log.warn({ missing }, 'Triggers whose subscriber has no URL: their events are dropped');
  if (unknown.length > 0) log.warn({ unknown }, 'subscribers that no Trigger routes to');
}
