// The pod garbage collector of kube-controller-manager, for Pods bound to a node that does not exist
// (its Node object deleted: the machine is gone, and no kubelet will ever stop or report them).
// As PodGC's gcOrphaned does: a Pod whose spec.nodeName names no Node is left alone for a quarantine
// (40 s upstream), the node's absence is then confirmed with a read of its own, and the Pod is
// marked failed — phase Failed (kept if it already ended), condition DisruptionTarget True with
// reason DeletionByPodGC — and deleted with a grace period of 0. A Pod still waiting to be bound
// (no spec.nodeName) is not touched.
import type { Api } from './api.ts';
import { errorText, isNotFound, mergePatch } from './api.ts';
import type { Informer } from './informer.ts';
import type { KObj, Logger, Pod } from './types.ts';
import { nowIso } from './types.ts';

export interface PodGcOptions {
  /** How long a node must be missing before its Pods go (upstream: 40 s). */
  quarantineMs?: number;
  /** How often the Pods are checked (upstream: every 20 s). */
  periodMs?: number;
}

export class PodGcController {
  private readonly timer: NodeJS.Timeout;
  /** node name → when it was first seen missing */
  private readonly missingSince = new Map<string, number>();
  private running = false;
  private stopped = false;
  /** Pods force-deleted (for tests and logs) */
  readonly collected: string[] = [];

  private readonly api: Api;
  private readonly nodes: Informer<KObj>;
  private readonly pods: Informer<Pod>;
  private readonly log: Logger;
  private readonly quarantineMs: number;
  constructor(api: Api, nodes: Informer<KObj>, pods: Informer<Pod>, log: Logger, opts: PodGcOptions = {}) {
    this.api = api;
    this.nodes = nodes;
    this.pods = pods;
    this.log = log;
    this.quarantineMs = opts.quarantineMs ?? 40_000;
    this.timer = setInterval(() => void this.sync(), opts.periodMs ?? 1_000);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private async sync(): Promise<void> {
    if (this.running || this.stopped || !this.nodes.hasSynced || !this.pods.hasSynced) return;
    this.running = true;
    try {
      const now = Date.now();
      const missing = new Set(
        this.pods
          .list()
          .map(p => p.spec.nodeName)
          .filter((n): n is string => !!n && !this.nodes.get(undefined, n)),
      );
      for (const name of [...this.missingSince.keys()])
        if (!missing.has(name)) this.missingSince.delete(name);
      for (const name of missing) {
        const since = this.missingSince.get(name) ?? now;
        this.missingSince.set(name, since);
        if (now - since < this.quarantineMs || !(await this.confirmedGone(name))) continue;
        for (const pod of this.pods.list().filter(p => p.spec.nodeName === name))
          await this.collect(pod, name);
      }
    } finally {
      this.running = false;
    }
  }

  /** The informer may lag: only a NotFound from the API server itself counts. */
  private async confirmedGone(node: string): Promise<boolean> {
    try {
      await this.api.core.readNode({ name: node });
      return false;
    } catch (err) {
      return isNotFound(err);
    }
  }

  private async collect(pod: Pod, node: string): Promise<void> {
    const { name } = pod.metadata;
    const namespace = pod.metadata.namespace ?? 'default';
    const ended = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
    const condition = {
      type: 'DisruptionTarget',
      status: 'True',
      reason: 'DeletionByPodGC',
      message: 'PodGC: node no longer exists',
      lastTransitionTime: nowIso(),
    };
    try {
      if (!pod.metadata.deletionTimestamp || !ended) {
        const conditions = [
          ...(pod.status?.conditions ?? []).filter(c => c.type !== 'DisruptionTarget'),
          condition,
        ];
        await this.api.core.patchNamespacedPodStatus(
          { name, namespace, body: { status: { ...(ended ? {} : { phase: 'Failed' }), conditions } } },
          mergePatch,
        );
      }
      await this.api.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 });
      this.collected.push(`${namespace}/${name}`);
      this.log(`podgc: ${namespace}/${name}: node ${node} no longer exists; marked Failed and deleted`);
    } catch (err) {
      if (!isNotFound(err)) this.log(`podgc: ${namespace}/${name}: ${errorText(err)}`);
    }
  }
}
