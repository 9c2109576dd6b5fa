// The seam every etcd call goes through: an adapter bound to ONE cluster's access (client TLS,
// credentials), resolved from its Secrets when first needed and kept only for the event at hand,
// so a rotated Secret is used from the next event on.
//
//   const etcd = clusterEtcd(ctx, cluster);            // cluster object already read
//   const etcd = clusterEtcd(ctx, () => findCluster()); // read lazily, on the first etcd call
//   await etcd.listMembers(endpoints);
//
// A cluster without TLS and auth gets ctx.etcd itself (no Secret read). A cluster whose Secrets
// are missing or incomplete gets an adapter whose every call fails with the Secret, key and fix.
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import { accessFor, accessSecretNames, type AccessResolution, type SecretData } from '../etcd/access.ts';
import type { EtcdAdapter } from '../etcd/adapter.ts';
import { refusingAdapter } from '../etcd/refusing-adapter.ts';
import type { KubeObject, KubeObjects } from '../k8s/objects.ts';
import type { V1Secret } from '@kubernetes/client-node';
import type { Context } from './context.ts';

/** Every call of the adapter (the refusing adapter has them all, whatever ctx.etcd is). */
const ETCD_CALLS = Object.keys(refusingAdapter(''));

type ClusterSource = EtcdCluster | (() => Promise<EtcdCluster | undefined>);

/** Reads the cluster's Secrets now and builds its access (or says which Secret is wrong). */
export async function resolveClusterAccess(
  kube: KubeObjects,
  cluster: EtcdCluster,
): Promise<AccessResolution> {
  const namespace = cluster.metadata.namespace ?? 'default';
  const names = accessSecretNames(cluster);
  const data = new Map<string, SecretData>();
  await Promise.all(
    names.map(async name => {
      const secret = await kube.find<V1Secret & KubeObject>({
        apiVersion: 'v1',
        kind: 'Secret',
        namespace,
        name,
      });
      data.set(name, secret ? decode(secret.data ?? {}) : undefined);
    }),
  );
  return accessFor(cluster, name => data.get(name));
}

function decode(data: Record<string, string>): Record<string, Buffer> {
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
}

/** The etcd adapter for one cluster, for the current event only. */
export function clusterEtcd(ctx: Context, source: ClusterSource): EtcdAdapter {
  let bound: Promise<EtcdAdapter> | undefined;
  const adapter = (): Promise<EtcdAdapter> => (bound ??= memoized(ctx, source));
  const lazy = {} as Record<string, unknown>;
  for (const call of ETCD_CALLS) {
    lazy[call] = async (...args: unknown[]) => {
      const etcd = (await adapter()) as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
      const fn = etcd[call];
      if (!fn) return Promise.reject(new Error(`etcd adapter has no ${call}`));
      return fn(...args);
    };
  }
  return lazy as unknown as EtcdAdapter;
}

/** The context with ctx.etcd bound to one cluster: hand it to code that calls ctx.etcd. */
export function withClusterEtcd(ctx: Context, source: ClusterSource): Context {
  return { ...ctx, etcd: clusterEtcd(ctx, source) };
}

/**
 * One resolution per cluster object read: observe and act of one event share it, and the next
 * event, which reads the cluster again, reads the Secrets again.
 */
const resolved = new WeakMap<EtcdAdapter, WeakMap<EtcdCluster, Promise<EtcdAdapter>>>();

function memoized(ctx: Context, source: ClusterSource): Promise<EtcdAdapter> {
  if (typeof source === 'function') return bind(ctx, source);
  let byCluster = resolved.get(ctx.etcd);
  if (!byCluster) resolved.set(ctx.etcd, (byCluster = new WeakMap()));
  let adapter = byCluster.get(source);
  if (!adapter) byCluster.set(source, (adapter = bind(ctx, source)));
  return adapter;
}

async function bind(ctx: Context, source: ClusterSource): Promise<EtcdAdapter> {
  const cluster = typeof source === 'function' ? await source() : source;
  if (!cluster || accessSecretNames(cluster).length === 0) return ctx.etcd;
  const resolved = await resolveClusterAccess(ctx.kube, cluster);
  if (resolved.kind === 'unresolved') return refusingAdapter(resolved.problem.message);
  // Contexts built by tests with a fake adapter have no connectEtcd: the fake stands for any access.
  return ctx.connectEtcd ? ctx.connectEtcd(resolved.access) : ctx.etcd;
}
