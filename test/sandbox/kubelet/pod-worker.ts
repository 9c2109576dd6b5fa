// The life of one Pod on the sandbox node: admission (Pod IP, DNS name), volumes, init containers
// in order, main containers, status reporting, graceful deletion and clean-up.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Api } from './api.ts';
import { errorText, isNotFound, mergePatch } from './api.ts';
import { ContainerRunner } from './container.ts';
import type { RunnerHost, RuntimeConfig } from './container.ts';
import type { PodIpAllocator } from './ipam.ts';
import { wantsPodNetwork } from './pod-network.ts';
import type { PodNetns, PodNetwork } from './pod-network.ts';
import { Conditions, podPhase, qosClass, updateConditions } from './status.ts';
import type { Phase } from './status.ts';
import type { Logger, Pod, PodStatusJson, Pvc } from './types.ts';
import { nowIso } from './types.ts';
import { sleep } from './util.ts';
import { ClaimNotBound, VolumeNotReady, refreshVolumes, setUpVolumes, tearDownVolumes } from './volumes.ts';
import type { VolumeContext, VolumeInfo } from './volumes.ts';

export const VOLUMES_ANNOTATION = 'sandbox.etcdfn.io/volumes';

/** What every Pod worker shares: the node. */
export interface NodeContext {
  api: Api;
  cfg: RuntimeConfig;
  dataDir: string;
  nodeName: string;
  hostIP: string;
  ipam: PodIpAllocator;
  /** namespaces for the Pods that ask for one (pod-network.ts); undefined: every Pod on loopback */
  network?: PodNetwork;
  pvc(namespace: string, name: string): Pvc | undefined;
  /** a Pod's IP or DNS identity changed: rewrite the hosts file */
  dnsChanged(): void;
  frozen(): boolean;
  /** resolves when the node is not frozen */
  unfrozen(): Promise<void>;
  /** injected start delay for this Pod, in ms (fault) */
  startDelayMs(namespace: string, name: string): number;
  /** how often a running Pod's secret/configMap/projected volumes are re-projected (0: never) */
  volumeRefreshMs: number;
  log: Logger;
}

export class PodWorker {
  podIP: string | undefined;
  /** the Pod's own network namespace, when it runs in one */
  private netns: PodNetns | undefined;
  private startTime: string | undefined;
  private readonly conditions = new Conditions();
  private init: ContainerRunner[] = [];
  private main: ContainerRunner[] = [];
  private initialized: boolean;
  private initFailed = false;
  private terminating = false;
  private gone = false;
  private cleaned = false;
  private volumes = new Map<string, VolumeInfo>();
  private volumeMessage: string | undefined;
  /** Set while a claim of the Pod is unbound: the Pod is reported unscheduled. */
  private unschedulable: { message: string; since: string } | undefined;
  private notBefore = 0;
  private writeTimer: NodeJS.Timeout | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  /** no container will run again */
  private done = false;
  private writing: Promise<void> | undefined;
  private lastWritten = '';
  private dirty = false;
  private started = false;
  private stopPromise: Promise<void> | undefined;
  readonly podDir: string;

  /** When this kubelet took the Pod: its probe workers tick from then (probes.ts). */
  private readonly admittedAt: number;
  private pod: Pod;
  private readonly node: NodeContext;
  constructor(pod: Pod, node: NodeContext) {
    this.admittedAt = Date.now();
    this.pod = pod;
    this.node = node;
    const m = pod.metadata;
    this.podDir = join(node.dataDir, 'pods', `${m.namespace}_${m.name}_${m.uid}`);
    this.initialized = !(pod.spec.initContainers ?? []).length;
  }

  get namespace(): string {
    return this.pod.metadata.namespace ?? 'default';
  }

  /** the node the Pod runs on */
  get nodeName(): string {
    return this.node.nodeName;
  }

  get name(): string {
    return this.pod.metadata.name;
  }

  get uid(): string {
    return this.pod.metadata.uid;
  }

  get current(): Pod {
    return this.pod;
  }

  /** Host name parts for DNS: spec.hostname + spec.subdomain. */
  get dnsIdentity(): { hostname?: string; subdomain?: string } {
    return { hostname: this.pod.spec.hostname, subdomain: this.pod.spec.subdomain };
  }

  containers(): ContainerRunner[] {
    return [...this.init, ...this.main];
  }

  /** A newer version of the Pod object arrived. */
  update(pod: Pod): void {
    const before = this.pod;
    this.pod = pod;
    if (pod.metadata.deletionTimestamp && !this.terminating) void this.terminate();
    // A kubelet syncs a Pod whose labels, annotations or spec changed (not its status alone).
    if (differsBeyondStatus(before, pod)) for (const c of this.main) c.synced();
  }

  /** Starts the Pod's life cycle (once). */
  start(): void {
    if (this.started) return;
    this.started = true;
    const phase = this.pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') {
      // Already finished (e.g. before a kubelet restart): nothing to run, only deletion to handle.
      this.terminating = !!this.pod.metadata.deletionTimestamp;
      if (this.terminating) void this.finishDeletion();
      return;
    }
    if (this.pod.metadata.deletionTimestamp) {
      void this.terminate();
      return;
    }
    void this.run().catch(err =>
      this.node.log(`pod ${this.describe()}: ${(err as Error).stack ?? String(err)}`),
    );
  }

  /** The Pod object is gone from the API (deleted with grace 0 by someone): kill and clean up. */
  async forget(): Promise<void> {
    this.gone = true;
    this.terminating = true;
    await Promise.all(this.containers().map(c => c.stop(0)));
    this.cleanup();
  }

  /** Stops every process (kubelet shutdown), leaving the API objects alone. */
  async shutdown(graceMs: number): Promise<void> {
    this.gone = true;
    this.terminating = true;
    if (this.writeTimer) clearTimeout(this.writeTimer);
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    await Promise.all(this.containers().map(c => c.stop(graceMs)));
    if (this.netns) this.releaseAddress();
  }

  describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  private async run(): Promise<void> {
    await this.allocateAddress();
    if (this.terminating) {
      // Forgotten at once: cleanup() would release it again, maybe after another Pod got it.
      this.releaseAddress();
      return;
    }
    this.startTime = nowIso();
    mkdirSync(this.podDir, { recursive: true });
    this.notBefore = Math.max(this.notBefore, Date.now() + this.node.startDelayMs(this.namespace, this.name));
    const host = this.runnerHost();
    this.init = (this.pod.spec.initContainers ?? []).map(c => new ContainerRunner(c, 'init', host));
    this.main = this.pod.spec.containers.map(c => new ContainerRunner(c, 'main', host));
    // While init containers run, the main containers wait with reason PodInitializing (as a kubelet reports).
    if (this.init.length) for (const c of this.main) c.state = { waiting: { reason: 'PodInitializing' } };
    this.node.dnsChanged();
    this.changed();
    if (!(await this.setUpVolumes())) return;
    if (!(await this.runInitContainers())) return this.finished();
    this.initialized = true;
    this.changed();
    for (const c of this.main) c.start();
    await Promise.all(this.main.map(c => c.finished));
    this.finished();
  }

  /** A loopback IP, or (asked for, and the node has a pod network) a network namespace of its own. */
  private async allocateAddress(): Promise<void> {
    if (this.node.network && wantsPodNetwork(this.pod)) {
      this.netns = await this.node.network.attach(this.uid);
      this.podIP = this.netns.ip;
      return;
    }
    if (wantsPodNetwork(this.pod))
      this.node.log(`pod ${this.describe()}: asks for a network namespace, but the pod network is off`);
    const ports = this.pod.spec.containers.flatMap(c => (c.ports ?? []).map(p => p.containerPort));
    this.podIP = await this.node.ipam.allocate(ports);
  }

  private releaseAddress(): void {
    if (this.netns) void this.node.network?.detach(this.uid);
    else if (this.podIP) this.node.ipam.release(this.podIP);
    this.netns = undefined;
    this.podIP = undefined;
  }

  private runnerHost(): RunnerHost {
    return {
      cfg: this.node.cfg,
      pod: () => this.pod,
      podIP: () => this.podIP ?? '',
      netns: () => this.netns,
      hostIP: this.node.hostIP,
      nodeName: this.node.nodeName,
      podDir: this.podDir,
      volumes: () => this.volumes,
      changed: () => this.changed(),
      gate: () => this.gate(),
      frozen: () => this.node.frozen(),
      admittedAt: this.admittedAt,
    };
  }

  /** Waits for the node to be unfrozen and for the injected start delay. */
  private async gate(): Promise<void> {
    for (;;) {
      await this.node.unfrozen();
      const wait = this.notBefore - Date.now();
      if (wait <= 0 || this.terminating) return;
      await sleep(Math.min(wait, 500));
    }
  }

  private async setUpVolumes(): Promise<boolean> {
    for (;;) {
      await this.gate();
      if (this.terminating) return false;
      try {
        this.volumes = await setUpVolumes(this.volumeContext());
        this.volumeMessage = undefined;
        this.unschedulable = undefined;
        await this.annotateVolumes();
        this.scheduleVolumeRefresh();
        return true;
      } catch (err) {
        if (!(err instanceof VolumeNotReady)) throw err;
        if (this.volumeMessage !== err.message) {
          this.volumeMessage = err.message;
          this.unschedulable =
            err instanceof ClaimNotBound
              ? { message: err.message, since: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') }
              : undefined;
          this.node.log(`pod ${this.describe()}: waiting for volumes: ${err.message}`);
          this.changed();
        }
        await sleep(500);
      }
    }
  }

  private volumeContext(): VolumeContext {
    return {
      pod: this.pod,
      podDir: this.podDir,
      dataDir: this.node.dataDir,
      podIP: this.podIP ?? '',
      hostIP: this.node.hostIP,
      nodeName: this.node.nodeName,
      reader: this.node.cfg.reader,
      pvc: (ns, name) => this.node.pvc(ns, name),
    };
  }

  /**
   * Re-projects the Pod's Secret-like volumes every volumeRefreshMs while it is not terminating, as
   * the kubelet's sync loop does (there: about a minute plus the Secret cache's TTL).
   */
  private scheduleVolumeRefresh(): void {
    const period = this.node.volumeRefreshMs;
    if (period <= 0 || this.terminating || this.done || this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      void (async () => {
        try {
          if (this.terminating || this.node.frozen()) return;
          const changed = await refreshVolumes(this.volumeContext(), this.volumes);
          if (changed.length)
            this.node.log(`pod ${this.describe()}: volumes refreshed: ${changed.join(', ')}`);
        } catch (err) {
          this.node.log(`pod ${this.describe()}: volume refresh failed: ${(err as Error).message}`);
        } finally {
          this.refreshTimer = undefined;
          this.scheduleVolumeRefresh();
        }
      })();
    }, period);
    this.refreshTimer.unref();
  }

  /** Records where each volume lives on the host (and emptyDir medium/sizeLimit) in an annotation. */
  private async annotateVolumes(): Promise<void> {
    if (this.volumes.size === 0) return;
    const value = JSON.stringify(Object.fromEntries(this.volumes));
    if (this.pod.metadata.annotations?.[VOLUMES_ANNOTATION] === value) return;
    try {
      await this.node.api.core.patchNamespacedPod(
        {
          name: this.name,
          namespace: this.namespace,
          body: { metadata: { annotations: { [VOLUMES_ANNOTATION]: value } } },
        },
        mergePatch,
      );
    } catch (err) {
      this.node.log(`pod ${this.describe()}: cannot annotate volumes: ${errorText(err)}`);
    }
  }

  private async runInitContainers(): Promise<boolean> {
    for (const runner of this.init) {
      if (this.terminating) return false;
      runner.start();
      const code = await runner.finished;
      if (this.terminating) return false;
      if (code !== 0) {
        this.initFailed = true;
        this.changed();
        return false;
      }
    }
    return true;
  }

  /** No container will run again: the Pod is terminal (Succeeded or Failed). */
  private finished(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.refreshTimer = undefined;
    this.done = true;
    if (this.terminating) return;
    this.changed();
    if (this.podIP) {
      this.releaseAddress();
      this.node.dnsChanged();
    }
  }

  /** Graceful deletion: SIGTERM, SIGKILL after the grace period, then remove the Pod object. */
  private terminate(): Promise<void> {
    if (this.stopPromise) return this.stopPromise;
    this.terminating = true;
    this.stopPromise = (async () => {
      await this.node.unfrozen();
      const grace =
        this.pod.metadata.deletionGracePeriodSeconds ?? this.pod.spec.terminationGracePeriodSeconds ?? 30;
      await Promise.all(this.containers().map(c => c.stop(grace * 1000)));
      this.changed();
      await this.flushStatus();
      await this.finishDeletion();
    })();
    return this.stopPromise;
  }

  private async finishDeletion(): Promise<void> {
    for (let attempt = 0; !this.gone; attempt++) {
      await this.node.unfrozen();
      try {
        await this.node.api.core.deleteNamespacedPod({
          name: this.name,
          namespace: this.namespace,
          gracePeriodSeconds: 0,
          body: { gracePeriodSeconds: 0, preconditions: { uid: this.uid } },
        });
        break;
      } catch (err) {
        if (isNotFound(err)) break;
        this.node.log(`pod ${this.describe()}: delete failed (${errorText(err)}), retrying`);
        await sleep(Math.min(5000, 200 * 2 ** attempt));
      }
    }
    this.cleanup();
  }

  private cleanup(): void {
    if (this.cleaned) return;
    this.cleaned = true;
    if (this.writeTimer) clearTimeout(this.writeTimer);
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.releaseAddress();
    this.node.dnsChanged();
    tearDownVolumes(this.podDir);
    rmSync(this.podDir, { recursive: true, force: true });
  }

  // ---- status ----

  status(): PodStatusJson {
    if (this.unschedulable) {
      return {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: this.unschedulable.message,
            lastProbeTime: null,
            lastTransitionTime: this.unschedulable.since,
          },
        ],
        qosClass: qosClass(this.pod.spec),
      };
    }
    const init = this.init.map(c => c.status());
    const main = this.main.map(c => c.status());
    if (this.volumeMessage) {
      for (const s of [...init, ...main]) {
        if (s.state.waiting)
          s.state = { waiting: { reason: 'ContainerCreating', message: this.volumeMessage } };
      }
    }
    const phase: Phase = podPhase({
      spec: this.pod.spec,
      init,
      main,
      initialized: this.initialized,
      initFailed: this.initFailed,
      terminating: this.terminating,
    });
    updateConditions(this.conditions, {
      phase,
      sandboxReady: !!this.podIP || !!this.startTime,
      initialized: this.initialized,
      init,
      main,
    });
    const ip = this.podIP ?? this.pod.status?.podIP;
    const status: PodStatusJson = {
      phase,
      conditions: this.conditions.list(),
      hostIP: this.node.hostIP,
      hostIPs: [{ ip: this.node.hostIP }],
      qosClass: qosClass(this.pod.spec),
      containerStatuses: main,
    };
    if (ip) Object.assign(status, { podIP: ip, podIPs: [{ ip }] });
    if (this.startTime) status.startTime = this.startTime;
    if (init.length) status.initContainerStatuses = init;
    return status;
  }

  /** Schedules a status write (coalescing bursts of changes). */
  changed(): void {
    this.dirty = true;
    if (this.writeTimer || this.gone) return;
    this.writeTimer = setTimeout(() => {
      this.writeTimer = undefined;
      void this.flushStatus();
    }, 20);
  }

  /** Writes the status if it changed; one write at a time; deferred while the node is frozen. */
  async flushStatus(): Promise<void> {
    while (this.writing) await this.writing;
    if (!this.dirty || this.gone) return;
    if (this.node.frozen()) return; // the unfreeze calls changed() on every worker
    this.dirty = false;
    this.writing = this.writeStatus().finally(() => (this.writing = undefined));
    await this.writing;
    if (this.dirty) this.changed();
  }

  private async writeStatus(): Promise<void> {
    const status = this.status();
    const text = JSON.stringify(status);
    if (text === this.lastWritten) return;
    // JSON merge patch: lists are replaced whole; fields we no longer set are cleared with null.
    const body = { status: { message: null, reason: null, nominatedNodeName: null, ...status } };
    try {
      await this.node.api.core.patchNamespacedPodStatus(
        { name: this.name, namespace: this.namespace, body },
        mergePatch,
      );
      this.lastWritten = text;
    } catch (err) {
      if (isNotFound(err)) return;
      this.node.log(`pod ${this.describe()}: status write failed: ${errorText(err)}`);
      this.dirty = true;
      await sleep(500);
    }
  }

  // ---- faults ----

  /** Containers start (or restart) no earlier than `until` (epoch ms). */
  delayUntil(until: number): void {
    this.notBefore = Math.max(this.notBefore, until);
  }

  kill(container: string | undefined, signal: NodeJS.Signals): string[] {
    const targets = this.containers().filter(c => (container ? c.name === container : c.pid !== undefined));
    return targets.filter(c => c.kill(signal)).map(c => c.name);
  }

  pause(): void {
    for (const c of this.containers()) c.pause();
  }

  resume(): void {
    for (const c of this.containers()) c.resume();
  }
}

/** What makes a kubelet sync a Pod on an update from the API server (its config source's check). */
function differsBeyondStatus(a: Pod, b: Pod): boolean {
  const same = (x: unknown, y: unknown) => isDeepStrictEqual(x ?? {}, y ?? {});
  return (
    !same(a.metadata.labels, b.metadata.labels) ||
    !same(a.metadata.annotations, b.metadata.annotations) ||
    !same(a.spec, b.spec)
  );
}
