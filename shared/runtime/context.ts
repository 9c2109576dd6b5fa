// What every function invocation works with: the Kubernetes adapter, the etcd adapter, the clock
// and the operator's settings. Built once per process (module scope = cold start only); tests
// build their own.
import { readFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import { parseEtcdImageDigests } from '../builders/pod.ts';
import type { PodIPFamily } from '../builders/etcd-listen.ts';
import { podIPFamily, POD_IP_FAMILY_ENV } from './pod-ip-family.ts';
import { DEFAULT_OPERATOR_IMAGE } from '../builders/restore-pod.ts';
import type { EtcdAccess } from '../etcd/access.ts';
import { createEtcdAdapter, type EtcdAdapter } from '../etcd/adapter.ts';
import { loadKubeConfig } from '../k8s/client.ts';
import { KubeObjects } from '../k8s/objects.ts';
import { countEtcdCalls, countKubeRequests } from './metrics.ts';
import type { PingSink } from '../builders/ping-source.ts';
import {
  ALLOWED_ENDPOINTS_ENV,
  DENIED_RANGES_ENV,
  parseAllowList,
  type AllowedEndpoint,
} from '../s3/endpoint-policy.ts';
import type { SnapshotTimings } from '../plan/snapshot/types.ts';
import type { ScheduleTimings } from '../plan/schedule/types.ts';
import { scheduleTimingsFromEnv, snapshotTimingsFromEnv } from './timings.ts';

export interface OperatorSettings {
  /** Repository of etcd images; the tag is v<version>. */
  etcdImageRepository: string;
  /** Digests of etcd images by release (ETCD_IMAGE_DIGESTS): those releases run by digest. */
  etcdImageDigests: Record<string, string>;
  /** The operator's own image ($ETCDFN_IMAGE): runs the restore steps in member Pods. */
  operatorImage: string;
  /** The family of Pod IPs, which members listen on ($ETCDFN_POD_IP_FAMILY, else detected). */
  podIPFamily: PodIPFamily;
  /** How long a member may take to catch up before promotion is retried by a later event. */
  promoteAttempts: number;
  promoteIntervalMs: number;
  /** How long a membership change waits inside a request for etcd to call the cluster healthy. */
  unhealthyWaitMs: number;
  /**
   * How many steps one reconcile-cluster invocation may take in a row: after a step that changed
   * something, the cluster is observed again and the next step taken at once rather than on the
   * event that change causes (1: one step per invocation).
   */
  chainSteps: number;
  /** run-snapshot's clock: attempt timeout, retry delay and give-up deadline (shared/plan/snapshot/plan.ts). */
  snapshot: SnapshotTimings;
  /** EtcdSnapshotSchedule: how late a run may start (shared/plan/schedule/plan.ts). */
  schedule: ScheduleTimings;
  /** How long a tick may spend reconciling every object (shared/reconcile/resync-each.ts). */
  resyncBudgetMs?: number;
  /** The operator's own namespace: each cluster's NetworkPolicy admits it to the client port. */
  operatorNamespace?: string;
  /** A namespaced install: the only namespaces the functions may list in ($ETCDFN_WATCH_NAMESPACES). */
  watchNamespaces?: string[];
  /** S3 endpoints allowed despite plain http or a loopback address ($ETCDFN_S3_ALLOWED_ENDPOINTS). */
  s3AllowList: AllowedEndpoint[];
  /** The same setting as written, handed to a restoring seed's fetch step. */
  s3AllowedEndpoints?: string;
  /** The cluster's own address ranges as written ($ETCDFN_S3_DENIED_RANGES), for the same step. */
  s3DeniedRanges?: string;
  /**
   * Where the PingSources etcdfn makes send their events, when set ($ETCDFN_SCHEDULE_SINK and
   * $ETCDFN_SCHEDULE_SINK_AUDIENCE); otherwise the Broker's own address (shared/reconcile/ping-sink.ts).
   */
  scheduleSink?: PingSink;
}

export interface Context {
  kube: KubeObjects;
  /**
   * etcd without credentials. Code handling a cluster calls it through `withClusterEtcd` /
   * `clusterEtcd` (shared/runtime/cluster-etcd.ts), which swap in an adapter with the cluster's access.
   */
  etcd: EtcdAdapter;
  /** An adapter dialling with the given access (TLS, credentials); absent in tests with a fake etcd. */
  connectEtcd?: (access: EtcdAccess) => EtcdAdapter;
  now: () => Date;
  settings: OperatorSettings;
}

export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): OperatorSettings {
  return {
    etcdImageRepository: env.ETCD_IMAGE_REPOSITORY || 'quay.io/coreos/etcd',
    etcdImageDigests: parseEtcdImageDigests(env.ETCD_IMAGE_DIGESTS),
    operatorImage: env.ETCDFN_IMAGE || DEFAULT_OPERATOR_IMAGE,
    podIPFamily: podIPFamily(env[POD_IP_FAMILY_ENV]),
    // 100 × 50 ms: a learner is promoted within 50 ms of etcd calling it in sync, for up to 5 s.
    promoteAttempts: Number(env.ETCDFN_PROMOTE_ATTEMPTS ?? 100),
    promoteIntervalMs: Number(env.ETCDFN_PROMOTE_INTERVAL_MS ?? 50),
    unhealthyWaitMs: Number(env.ETCDFN_UNHEALTHY_WAIT_MS ?? 8000),
    chainSteps: Math.max(1, Number(env.ETCDFN_CHAIN_STEPS ?? 6) || 1),
    snapshot: snapshotTimingsFromEnv(env),
    schedule: scheduleTimingsFromEnv(env),
    ...(env.ETCDFN_RESYNC_BUDGET_MS && { resyncBudgetMs: Number(env.ETCDFN_RESYNC_BUDGET_MS) }),
    operatorNamespace: env.ETCDFN_OPERATOR_NAMESPACE || serviceAccountNamespace(),
    ...(env.ETCDFN_WATCH_NAMESPACES && {
      watchNamespaces: parseWatchNamespaces(env.ETCDFN_WATCH_NAMESPACES),
    }),
    // Entries that do not parse allow nothing (safe side); the policy's refusal names the setting.
    s3AllowList: parseAllowList(env[ALLOWED_ENDPOINTS_ENV]).entries,
    ...(env[ALLOWED_ENDPOINTS_ENV] && { s3AllowedEndpoints: env[ALLOWED_ENDPOINTS_ENV] }),
    ...(env[DENIED_RANGES_ENV] && { s3DeniedRanges: env[DENIED_RANGES_ENV] }),
    ...(env.ETCDFN_SCHEDULE_SINK && {
      scheduleSink: {
        uri: env.ETCDFN_SCHEDULE_SINK,
        ...(env.ETCDFN_SCHEDULE_SINK_AUDIENCE && { audience: env.ETCDFN_SCHEDULE_SINK_AUDIENCE }),
      },
    }),
  };
}

/** $ETCDFN_WATCH_NAMESPACES: names separated by commas or spaces. */
export function parseWatchNamespaces(value: string | undefined): string[] {
  return [...new Set((value ?? '').split(/[\s,]+/).filter(Boolean))];
}

/** The namespace Kubernetes mounts with the ServiceAccount token, when running in a Pod. */
function serviceAccountNamespace(): string | undefined {
  try {
    return (
      readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/namespace', 'utf8').trim() || undefined
    );
  } catch {
    return undefined;
  }
}

export function createContext(
  kc: KubeConfig = loadKubeConfig(),
  env: NodeJS.ProcessEnv = process.env,
): Context {
  const timeoutMs = Number(env.ETCDFN_ETCD_TIMEOUT_MS ?? 5000);
  return {
    kube: countKubeRequests(new KubeObjects(kc)),
    etcd: countEtcdCalls(createEtcdAdapter({ timeoutMs })),
    connectEtcd: access => countEtcdCalls(createEtcdAdapter({ timeoutMs, ...access })),
    now: () => new Date(),
    settings: settingsFromEnv(env),
  };
}

let shared: Context | undefined;

/** The process-wide context, created on first use so that importing a function has no side effects. */
export function defaultContext(): Context {
  shared ??= createContext();
  return shared;
}
