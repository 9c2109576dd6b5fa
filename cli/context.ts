// What every command needs: a KubeConfig chosen like kubectl chooses it (--kubeconfig, then
// $KUBECONFIG, then ~/.kube/config; --context; -n, else the context's namespace, else default), the
// etcdfn objects of one cluster, and CliError, the one-line failure main.ts prints.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { EtcdCluster, EtcdSnapshot } from '../shared/api/types.ts';
import { API_VERSION } from '../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../shared/k8s/objects.ts';
import { errorMessage } from '../shared/k8s/errors.ts';
import { CLUSTER_LABEL } from '../shared/names.ts';

/** A failure the user can act on: main.ts prints the message alone and exits with `exitCode`. */
export class CliError extends Error {
  readonly exitCode;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
    this.name = 'CliError';
  }
}

export interface GlobalOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export type Cluster = EtcdCluster & KubeObject;
export type Snapshot = EtcdSnapshot & KubeObject;
export interface Pod extends KubeObject {
  status?: { podIP?: string; phase?: string; conditions?: { type: string; status: string }[] };
}

export interface Cli {
  kube: KubeObjects;
  namespace: string;
  /** Where the API server is, for error messages. */
  server: string;
}

export function loadCliKubeConfig(opts: GlobalOptions, env = process.env): KubeConfig {
  const kc = new KubeConfig();
  const path = opts.kubeconfig ?? (env.KUBECONFIG || undefined);
  const fallback = join(homedir(), '.kube', 'config');
  try {
    if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
    else if (path || existsSync(fallback) || env.KUBERNETES_SERVICE_HOST) kc.loadFromDefault();
    else throw new CliError('no kubeconfig: pass --kubeconfig, set KUBECONFIG, or create ~/.kube/config');
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot load kubeconfig ${path ?? fallback}: ${errorMessage(err)}`);
  }
  if (opts.context) {
    if (!kc.getContextObject(opts.context)) {
      throw new CliError(`context "${opts.context}" not found in kubeconfig ${path ?? fallback}`);
    }
    kc.setCurrentContext(opts.context);
  }
  if (!kc.getCurrentCluster()) throw new CliError('the kubeconfig has no current context: pass --context');
  return kc;
}

export function namespaceOf(kc: KubeConfig, opts: GlobalOptions): string {
  return opts.namespace || kc.getContextObject(kc.getCurrentContext())?.namespace || 'default';
}

export function openCli(opts: GlobalOptions): Cli {
  const kc = loadCliKubeConfig(opts);
  return {
    kube: new KubeObjects(kc),
    namespace: namespaceOf(kc, opts),
    server: kc.getCurrentCluster()?.server ?? '',
  };
}

export function clusterRef(cli: Cli, name: string) {
  return { apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: cli.namespace, name };
}

/** The cluster, or a CliError that says where it was looked for. */
export async function getCluster(cli: Cli, name: string): Promise<Cluster> {
  const read = await kubeCall(cli, () => cli.kube.get<Cluster>(clusterRef(cli, name)));
  if (read.kind === 'not-found') {
    throw new CliError(`etcdcluster "${name}" not found in namespace "${cli.namespace}"`);
  }
  return read.object;
}

export async function listPods(cli: Cli, cluster: string): Promise<Pod[]> {
  return kubeCall(cli, () => cli.kube.list<Pod>('v1', 'Pod', cli.namespace, `${CLUSTER_LABEL}=${cluster}`));
}

/** The cluster's most recently created EtcdSnapshot, if any. */
export async function latestSnapshot(cli: Cli, cluster: string): Promise<Snapshot | undefined> {
  const all = await kubeCall(cli, () => cli.kube.list<Snapshot>(API_VERSION, 'EtcdSnapshot', cli.namespace));
  const mine = all.filter(s => s.spec?.clusterRef?.name === cluster);
  const time = (s: Snapshot): string => s.metadata.creationTimestamp?.toString() ?? '';
  mine.sort((a, b) => new Date(time(a)).getTime() - new Date(time(b)).getTime());
  return mine.at(-1);
}

/** Runs an API call; a failure the adapter throws (network, 403, 5xx) becomes a one-line CliError. */
export async function kubeCall<T>(cli: Cli, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof CliError) throw err;
    const message = errorMessage(err).split('\n')[0] ?? '';
    const cause = (err as { cause?: unknown }).cause;
    const code = (cause as { code?: string } | undefined)?.code;
    if (code === 'ECONNREFUSED' || /ECONNREFUSED|fetch failed|ENOTFOUND/.test(message)) {
      throw new CliError(`cannot reach the Kubernetes API server at ${cli.server}: ${message}`);
    }
    throw new CliError(message);
  }
}
