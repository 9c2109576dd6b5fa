// Prometheus metrics of one function process, served on GET /metrics by the function's own server.
// Labels are kinds, verbs and outcomes only, never object names: the set stays small and a scrape
// learns nothing about what runs in which namespace.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EtcdAdapter } from '../etcd/adapter.ts';
import type { KubeObjects } from '../k8s/objects.ts';
import { timed } from './spans.ts';

export const registry = new Registry();

export const metrics = {
  events: new Counter({
    name: 'etcdfn_events_total',
    help: 'CloudEvents handled, by function, normalised event mode (ref, resource, ping; none when refused) and verb (add, update, delete, tick; none), and outcome (done, retry, error, rejected)',
    labelNames: ['function', 'mode', 'verb', 'outcome'] as const,
    registers: [registry],
  }),
  eventSeconds: new Histogram({
    name: 'etcdfn_event_duration_seconds',
    help: 'Time to handle one CloudEvent, by function and outcome',
    labelNames: ['function', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  }),
  kubeRequests: new Counter({
    name: 'etcdfn_kube_requests_total',
    help: 'Kubernetes API calls by verb, kind and result (result="conflict": a lost optimistic-concurrency race, retried by a later event)',
    labelNames: ['verb', 'resource', 'result'] as const,
    registers: [registry],
  }),
  etcdCalls: new Counter({
    name: 'etcdfn_etcd_calls_total',
    help: 'Calls to etcd members by operation and result',
    labelNames: ['call', 'result'] as const,
    registers: [registry],
  }),
  clusters: new Gauge({
    name: 'etcdfn_clusters',
    help: 'EtcdClusters by phase, as seen by the last resync tick of this process',
    labelNames: ['phase'] as const,
    registers: [registry],
  }),
  resyncs: new Counter({
    name: 'etcdfn_resyncs_total',
    help: 'Full resync ticks by function and outcome: started, queued (behind a running one), coalesced (refused: one running and one queued already)',
    labelNames: ['function', 'outcome'] as const,
    registers: [registry],
  }),
  snapshots: new Counter({
    name: 'etcdfn_snapshots_total',
    help: 'EtcdSnapshots finished by this process, by outcome (Complete, Failed)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  }),
  bridgeDropped: new Counter({
    name: 'etcdfn_bridge_deliveries_dropped_total',
    help: 'Standalone bridge deliveries not sent, by reason (coalesced: one of the same object, trigger and type was still waiting; shed: the queue was full) and Trigger',
    labelNames: ['reason', 'trigger'] as const,
    registers: [registry],
  }),
  snapshotBytes: new Counter({
    name: 'etcdfn_snapshot_bytes_total',
    help: 'Bytes of the snapshots this process stored and verified',
    registers: [registry],
  }),
};

/** The result label of an adapter call: its outcome's `kind`, "ok" for plain values. */
function resultOf(value: unknown): string {
  if (value !== null && typeof value === 'object' && 'kind' in value) return String(value.kind);
  return 'ok';
}

const KUBE_VERBS = new Set([
  'get',
  'find',
  'list',
  'create',
  'replace',
  'replaceStatus',
  'mergePatch',
  'mergePatchStatus',
  'delete',
]);

/** The kind a KubeObjects call is about: list(apiVersion, kind, ...); the rest take a ref or object. */
function kindOf(verb: string, args: unknown[]): string {
  const kind = verb === 'list' ? args[1] : (args[0] as { kind?: unknown } | undefined)?.kind;
  return typeof kind === 'string' ? kind : '';
}

/** The same adapter, counting every call in etcdfn_kube_requests_total and timing it (spans.ts). */
export function countKubeRequests(kube: KubeObjects): KubeObjects {
  return new Proxy(kube, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop !== 'string' || !KUBE_VERBS.has(prop) || typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const labels = { verb: prop, resource: kindOf(prop, args) };
        try {
          const result: unknown = await timed(`kube ${prop} ${labels.resource}`, () =>
            (value as (...a: unknown[]) => Promise<unknown>).apply(target, args),
          );
          metrics.kubeRequests.inc({ ...labels, result: resultOf(result) });
          return result;
        } catch (err) {
          metrics.kubeRequests.inc({ ...labels, result: 'error' });
          throw err;
        }
      };
    },
  });
}

/**
 * The same adapter, counting every call (each member asked, for cluster-wide status) by outcome and
 * timing it (spans.ts).
 */
export function countEtcdCalls(etcd: EtcdAdapter): EtcdAdapter {
  const counted = {} as Record<string, unknown>;
  for (const [call, fn] of Object.entries(etcd) as [string, (...a: unknown[]) => Promise<unknown>][]) {
    counted[call] = async (...args: unknown[]) => {
      try {
        const result = await timed(`etcd ${call}`, () => fn(...args));
        for (const one of Array.isArray(result) ? result : [result]) {
          metrics.etcdCalls.inc({ call, result: resultOf(one) });
        }
        return result;
      } catch (err) {
        metrics.etcdCalls.inc({ call, result: 'error' });
        throw err;
      }
    };
  }
  return counted as unknown as EtcdAdapter;
}

/** EtcdClusters by phase, replacing what the previous tick saw. */
export function recordClusterPhases(phases: readonly (string | undefined)[]): void {
  metrics.clusters.reset();
  for (const phase of phases) metrics.clusters.inc({ phase: phase ?? 'Pending' });
}
