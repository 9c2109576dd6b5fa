// An EtcdCluster on the lifecycle benchmark's sandbox, driven with kubectl and watched through
// its status: apply a fresh one and time it to N/N Ready, wait for a size, delete it and wait until
// its members and Pods are gone.
import { KubeConfig } from '@kubernetes/client-node';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember as EtcdMemberObject } from '../../shared/api/etcd-member.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import type { KubeObject, KubeObjects } from '../../shared/k8s/objects.ts';
import { ResourceWatcher } from '../../standalone/bridge/watcher.ts';
import { pino } from 'pino';
import { POD_VERSION, secondsSince, STEP_TIMEOUT_MS } from './by-hand.ts';
import type { GrowthTimeline, PodSeen } from './growth-timeline.ts';

export const NS = 'default';
export const VERSION = POD_VERSION;
/** How often the operator's status is read. */
const STATUS_POLL_MS = 100;

export type Cluster = EtcdCluster & KubeObject;
export type Kubectl = (kubeconfig: string, ...args: string[]) => Promise<string>;

/** Writes the manifest of a `replicas`-member EtcdCluster and returns its path. */
export function writeManifest(work: string, name: string, replicas: number): string {
  const manifest = join(work, `${name}.yaml`);
  writeFileSync(
    manifest,
    stringify({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name, namespace: NS },
      spec: { replicas, version: VERSION, storage: { size: '1Gi' } },
    }),
  );
  return manifest;
}

export interface SandboxCluster {
  kube: KubeObjects;
  kubectl: Kubectl;
  kubeconfig: string;
  work: string;
  say: (line: string) => void;
}

/**
 * `kubectl apply -f` of a fresh `n`-member EtcdCluster: seconds to n/n Ready and Running. The
 * cluster is deleted afterwards (and its members and Pods waited out) whatever happened.
 */
export async function applyFresh(sc: SandboxCluster, name: string, n: number): Promise<number> {
  const manifest = writeManifest(sc.work, name, n);
  const watched = await watchReadyRunning(sc.kubeconfig, name, n);
  try {
    const start = performance.now();
    await sc.kubectl(sc.kubeconfig, 'apply', '-f', manifest);
    await readyRunning(sc.kube, name, n, { start, say: sc.say });
    return watched.seconds(start);
  } finally {
    await watched.stop();
    await deleteCluster(sc.kube, sc.kubectl, sc.kubeconfig, name).catch((err: unknown) =>
      sc.say(`  could not delete ${name}: ${err instanceof Error ? err.message : String(err)}`),
    );
  }
}

export const clusterRef = (name: string) => ({
  apiVersion: API_VERSION,
  kind: 'EtcdCluster',
  namespace: NS,
  name,
});

/**
 * The scale, as the operator receives it: spec.replicas written to the API server (what `kubectl
 * scale` sends, without the CLI's own start, timed on its own by kubectlScaleSeconds).
 */
export async function writeReplicas(kube: KubeObjects, name: string, replicas: number): Promise<void> {
  const written = await kube.mergePatch(clusterRef(name), { spec: { replicas } });
  if (written.kind !== 'written') throw new Error(`scaling ${name} to ${replicas}: ${written.kind}`);
}

/** Seconds `kubectl scale` takes to change nothing (replicas as they are): the CLI's own time. */
export async function kubectlScaleSeconds(
  kubectl: Kubectl,
  kubeconfig: string,
  name: string,
  replicas: number,
): Promise<number> {
  const start = performance.now();
  await kubectl(kubeconfig, 'scale', 'etcdcluster', name, `--replicas=${replicas}`, '-n', NS);
  return (performance.now() - start) / 1000;
}

export async function readCluster(kube: KubeObjects, name: string): Promise<Cluster | undefined> {
  const read = await kube.get<Cluster>(clusterRef(name));
  return read.kind === 'found' ? read.object : undefined;
}

/**
 * When the API server first told a watcher that the cluster's status says ready "n/n" and phase
 * Running (what `kubectl wait` sees), rather than when a poll happened to read it: the operator's
 * figure then carries no polling delay, as the by-hand figures carry none.
 */
export async function watchReadyRunning(
  kubeconfig: string,
  name: string,
  n: number,
): Promise<{ seconds: (start: number) => number; stop: () => Promise<void> }> {
  let at: number | undefined;
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const watcher = new ResourceWatcher({
    kubeConfig: kc,
    target: { apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS },
    log: pino({ level: 'silent' }),
    onEvent: (_verb, object) => {
      const status = (object as unknown as Cluster).status;
      if (at !== undefined || object.metadata?.name !== name) return;
      if (status?.ready === `${n}/${n}` && status.phase === 'Running') at = performance.now();
    },
  });
  await watcher.start();
  return {
    // A poll saw it first only if the watch's event is still on its way: then the poll's time.
    seconds: start => (at === undefined ? secondsSince(start) : (at - start) / 1000),
    stop: () => watcher.stop(),
  };
}

export function describeStatus(cluster: Cluster | undefined): string {
  const s = cluster?.status;
  const progressing = s?.conditions?.find(c => c.type === 'Progressing');
  return `ready ${s?.ready ?? '-'}, phase ${s?.phase ?? '-'}, Progressing ${progressing?.reason ?? '-'}: ${progressing?.message ?? ''}`;
}

/**
 * status.ready "n/n" with phase Running, read every STATUS_POLL_MS. Each change of what the status
 * says goes to `say` with the seconds since `start`, to show where the time went.
 */
export async function readyRunning(
  kube: KubeObjects,
  name: string,
  n: number,
  {
    start,
    say,
    timeline,
    exact,
  }: {
    start: number;
    say: (line: string) => void;
    timeline?: GrowthTimeline;
    /** Also n etcd members in status and n Pods (a scale-down is done once the others are gone). */
    exact?: boolean;
  },
): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  let seen = '';
  for (;;) {
    let podCount = n;
    if (timeline || exact) {
      const { members, pods } = await listMembersAndPods(kube, name);
      timeline?.observe(secondsSince(start), members, pods);
      podCount = pods.length;
    }
    const cluster = await readCluster(kube, name);
    const s = cluster?.status;
    const learners = s?.members?.filter(m => m.role === 'learner').length ?? 0;
    const progressing = s?.conditions?.find(c => c.type === 'Progressing');
    const now = `ready ${s?.ready ?? '-'}, ${s?.phase ?? '-'}, ${progressing?.reason ?? '-'}; etcd members ${s?.members?.length ?? 0} (${learners} learner)${exact ? `; ${podCount} Pods` : ''}`;
    if (now !== seen) say(`    +${secondsSince(start).toFixed(2).padStart(6)} s  ${(seen = now)}`);
    const sized = !exact || (s?.members?.length === n && podCount === n);
    if (s?.ready === `${n}/${n}` && s.phase === 'Running' && sized) return;
    if (Date.now() > deadline)
      throw new Error(
        `${name} not ${n}/${n} Running after ${STEP_TIMEOUT_MS / 1000} s (${describeStatus(cluster)})`,
      );
    await sleep(STATUS_POLL_MS);
  }
}

export async function listMembersAndPods(
  kube: KubeObjects,
  name: string,
): Promise<{ members: (EtcdMemberObject & KubeObject)[]; pods: PodSeen[] }> {
  const selector = `etcdfn.io/cluster=${name}`;
  const [members, pods] = await Promise.all([
    kube.list<EtcdMemberObject & KubeObject>(API_VERSION, 'EtcdMember', NS, selector),
    kube.list<KubeObject & PodSeen>('v1', 'Pod', NS, selector),
  ]);
  return { members, pods };
}

export async function deleteCluster(
  kube: KubeObjects,
  kubectl: Kubectl,
  kubeconfig: string,
  name: string,
): Promise<void> {
  await kubectl(kubeconfig, 'delete', 'etcdcluster', name, '-n', NS, '--wait=false', '--ignore-not-found');
  const selector = `etcdfn.io/cluster=${name}`;
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const [cluster, members, pods] = await Promise.all([
      readCluster(kube, name),
      kube.list<EtcdMemberObject & KubeObject>(API_VERSION, 'EtcdMember', NS, selector),
      kube.list('v1', 'Pod', NS, selector),
    ]);
    if (!cluster && members.length === 0 && pods.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`still there after delete: ${members.length} EtcdMembers, ${pods.length} Pods`);
    await sleep(250);
  }
}
