// Options of the process kubelet and their defaults.
import { KUBELET_BACKOFF } from './crash-backoff.ts';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { localEtcdReleases } from '../../support/etcd-binaries.ts';
import type { EtcdBinaries } from '../../support/etcd-binaries.ts';
import type { BackoffConfig } from './container.ts';
import type { Logger } from './types.ts';

export interface KubeletOptions {
  /** path of a kubeconfig file (or give `kc`) */
  kubeconfig?: string;
  kc?: KubeConfig;
  /** where Pods, PVC data, logs, the hosts file and control.json live */
  dataDir: string;
  /** the node's name (spec.nodeName of the Pods it runs; Pods with no nodeName are bound to it) */
  nodeName?: string;
  /**
   * more nodes this kubelet runs Pods for, as separate machines: each is registered as a Node, a
   * scheduler (scheduler.ts) binds Pods to them, and deleting one's Node object kills its Pods'
   * processes as a lost machine would
   */
  extraNodes?: string[];
  /**
   * run the Pods that ask for it (pod-network.ts) in network namespaces of their own, on a bridge
   * with a private /24 (needs root and iproute2); default off: every Pod gets a loopback IP
   */
  podNetwork?: boolean;
  /** the API server's service CIDR: Pod namespaces route it to the kubelet's Service proxy */
  serviceCidr?: string;
  /**
   * serve kube-apiserver's "cluster" egress (cluster-egress.ts) on this Unix socket: webhooks'
   * Services reached at their ClusterIPs, and nothing off the machine
   */
  clusterEgressSocket?: string;
  /** status.hostIP of every Pod (default 127.0.0.1) */
  hostIP?: string;
  /** local etcd releases; default: every release test/support/etcd-binaries.ts finds (one per exact version) */
  etcdBinaries?: EtcdBinaries[];
  /** argv that runs the operator's agent (the operator image's entry point) */
  agentCommand?: string[];
  /** argv of the function server, for the operator image's `node dist/functions/serve.js` */
  functionCommand?: string[];
  /** repositories or `*` patterns of the operator's image (default $ETCDFN_IMAGE's repository, ghcr.io/etcdfn/etcdfn) */
  agentImages?: string[];
  /** images whose commands run as host programs (default busybox, alpine, debian, ubuntu, bash) */
  hostImages?: string[];
  /** first Pod IP minus one, e.g. '127.66.0.0' (default: a random 127.100-199.x.0) */
  ipBase?: string;
  /** hosts file maintained by the kubelet (default <dataDir>/hosts); false: no DNS */
  hostsFile?: string | false;
  /** bind the hosts file over /etc/hosts: 'auto' (default) = when inside the private mount namespace */
  bindHosts?: boolean | 'auto';
  /**
   * answer Pod and Service names over DNS too (dns-server.ts; needs the right to listen on port 53):
   * true by default; false keeps the hosts file alone
   */
  nameServer?: boolean;
  clusterDomain?: string;
  /** restart back-off (default 1 s doubling up to 10 s, reset after 20 s of running) */
  backoff?: Partial<BackoffConfig>;
  /** control endpoint port on 127.0.0.1 (default 0 = any); false: none */
  controlPort?: number | false;
  /**
   * run the storage provisioner and resizer (default true). Jobs, PDB status, Pod GC and Endpoints
   * are kube-controller-manager's, not a node's; Services' addresses are computed for DNS only.
   */
  controllers?: { pvcs?: boolean };
  /**
   * how often a running Pod's secret / configMap / downwardAPI / projected volumes are re-projected
   * from their sources (default 2000 ms; the real kubelet: about a minute); 0: written once only
   */
  volumeRefreshMs?: number;
  /** grace period given to container processes when the kubelet stops (default 2000 ms) */
  stopGraceMs?: number;
  /**
   * the kubelet's serving certificate: with one, it serves its API (containerLogs, for kubectl logs
   * through the API server) over HTTPS on 127.0.0.1 and names the port in each Node's status
   */
  serving?: { cert: string; key: string; ca: string };
  /** log lines (default: appended to <dataDir>/kubelet.log, and stderr when $SANDBOX_VERBOSE is set) */
  log?: Logger;
}

export function loadKubeConfig(opts: KubeletOptions): KubeConfig {
  if (opts.kc) return opts.kc;
  const kc = new KubeConfig();
  if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
  else kc.loadFromDefault();
  return kc;
}

/** Every etcd release installed locally, by exact version (none: logged, etcd images fail to pull). */
export function discoverEtcd(given: EtcdBinaries[] | undefined, log: Logger): Map<string, EtcdBinaries> {
  const list = given ?? localEtcdReleases();
  if (!list.length) log('no local etcd release: run `npm run setup` (scripts/build-go.sh)');
  return new Map(list.map(b => [b.version, b]));
}

/** The operator image repositories: $ETCDFN_IMAGE (without its tag) and the published one. */
export function defaultAgentImages(): string[] {
  const images = ['ghcr.io/etcdfn/etcdfn'];
  const env = process.env.ETCDFN_IMAGE;
  if (env) {
    const slash = env.lastIndexOf('/');
    const colon = env.lastIndexOf(':');
    images.unshift(colon > slash ? env.slice(0, colon) : env);
  }
  return images;
}

export const DEFAULT_HOST_IMAGES = ['busybox', 'alpine', 'debian', 'ubuntu', 'bash'];

/** The kubelet's CrashLoopBackOff unless told otherwise (tests pass shorter figures). */
export function backoffConfig(given: Partial<BackoffConfig> | undefined): BackoffConfig {
  const initialMs = given?.initialMs ?? KUBELET_BACKOFF.initialMs;
  const maxMs = given?.maxMs ?? KUBELET_BACKOFF.maxMs;
  return { initialMs, maxMs, resetMs: given?.resetMs ?? 2 * maxMs };
}

/** Creates <dataDir>/bin/<version>/{etcd,etcdctl,etcdutl} links for containers' PATH. */
export function makeBinDirs(
  dataDir: string,
  etcd: Map<string, EtcdBinaries>,
): (b: EtcdBinaries | undefined) => string {
  const empty = join(dataDir, 'bin', 'none');
  mkdirSync(empty, { recursive: true });
  for (const bins of etcd.values()) {
    const dir = join(dataDir, 'bin', bins.version);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    symlinkSync(bins.etcd, join(dir, 'etcd'));
    symlinkSync(bins.etcdctl, join(dir, 'etcdctl'));
    if (bins.etcdutl) symlinkSync(bins.etcdutl, join(dir, 'etcdutl'));
  }
  return b => (b ? join(dataDir, 'bin', b.version) : empty);
}
