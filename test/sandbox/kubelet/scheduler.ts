// The sandbox's scheduler, for a kubelet that runs more than one node: binds each Pod that names no
// node to the node placement.ts chooses (pinning WaitForFirstConsumer claims to it first, as the
// VolumeBinding plugin's PreBind does), or leaves it Pending as kube-scheduler does: PodScheduled
// False with reason Unschedulable and a FailedScheduling Warning Event, both with the scheduler's
// words; tried again when a Node or a claim changes, and every few seconds (upstream retries
// unschedulable Pods on cluster events and at least every 5 minutes).
import type { Api } from './api.ts';
import { errorText, isNotFound, mergePatch } from './api.ts';
import type { Informer } from './informer.ts';
import { SELECTED_NODE_ANNOTATION, placePod, type Placement } from './placement.ts';
import type { KObj, Logger, Pod, Pvc, Service } from './types.ts';
import { nowIso } from './types.ts';

export interface SchedulerInformers {
  pods: Informer<Pod>;
  pvcs: Informer<Pvc>;
  volumes: Informer<KObj>;
  classes: Informer<KObj>;
  nodes: Informer<KObj>;
  services: Informer<Service>;
}

export class Scheduler {
  private readonly busy = new Set<string>();
  /** Pods bound here whose binding the informer may not show yet (the scheduler cache's "assume") */
  private readonly assumed = new Map<string, string>();
  private readonly timer: NodeJS.Timeout;
  private stopped = false;

  private readonly api: Api;
  private readonly inf: SchedulerInformers;
  private readonly hosted: readonly string[];
  private readonly log: Logger;
  /** `hosted`: the kubelet's nodes; with one, the kubelet binds its Pods itself (bind below). */
  constructor(api: Api, informers: SchedulerInformers, hosted: readonly string[], log: Logger) {
    this.api = api;
    this.inf = informers;
    this.hosted = hosted;
    this.log = log;
    this.timer = setInterval(() => this.retry(), 5_000);
    this.timer.unref();
    if (hosted.length < 2) return;
    informers.pods.on({
      upsert: pod => void this.schedule(pod),
      deleted: pod => this.assumed.delete(pod.metadata.uid),
    });
    informers.nodes.on({ upsert: () => this.retry() });
    informers.pvcs.on({ upsert: () => this.retry() });
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private retry(): void {
    if (this.hosted.length < 2) return;
    for (const pod of this.inf.pods.list()) void this.schedule(pod);
  }

  /** The nodes Pods can go to: this kubelet's, while their Node object exists. */
  private nodes(): string[] {
    return this.hosted.filter(n => this.inf.nodes.get(undefined, n) !== undefined);
  }

  placement(pod: Pod): Placement {
    const live = this.inf.pods
      .list()
      .filter(p => !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''))
      .map(p => {
        const node = p.spec.nodeName ? undefined : this.assumed.get(p.metadata.uid);
        return node ? { ...p, spec: { ...p.spec, nodeName: node } } : p;
      });
    return placePod({
      pod,
      nodes: this.nodes(),
      pods: live,
      services: this.inf.services.list(),
      claim: (ns, name) => this.inf.pvcs.get(ns, name),
      volume: name => this.inf.volumes.get(undefined, name),
      bindingMode: name =>
        (this.inf.classes.get(undefined, name) as { volumeBindingMode?: string })?.volumeBindingMode,
    });
  }

  async schedule(pod: Pod): Promise<void> {
    const uid = pod.metadata.uid;
    if (pod.spec.nodeName || pod.metadata.deletionTimestamp) this.assumed.delete(uid);
    if (this.stopped || pod.spec.nodeName || pod.metadata.deletionTimestamp || this.busy.has(uid)) return;
    if (this.assumed.has(uid)) return;
    if (!this.inf.nodes.hasSynced || !this.inf.pvcs.hasSynced) return;
    this.busy.add(uid);
    try {
      const placed = this.placement(pod);
      if (placed.kind === 'bind') await this.bind(pod, placed.node, placed.pin);
      else await this.unschedulable(pod, placed.message);
    } finally {
      this.busy.delete(uid);
    }
  }

  /** Pins the Pod's WaitForFirstConsumer claims to `node`, then binds the Pod (pods/binding). */
  async bind(pod: Pod, node: string, pin: string[]): Promise<void> {
    const namespace = pod.metadata.namespace ?? 'default';
    const { name } = pod.metadata;
    // Assumed at once: the next Pod's placement counts this one before the informer shows it.
    if (this.hosted.length > 1) this.assumed.set(pod.metadata.uid, node);
    try {
      for (const claim of pin) {
        await this.api.core.patchNamespacedPersistentVolumeClaim(
          {
            name: claim,
            namespace,
            body: { metadata: { annotations: { [SELECTED_NODE_ANNOTATION]: node } } },
          },
          mergePatch,
        );
      }
      await this.api.core.createNamespacedPodBinding({
        name,
        namespace,
        body: {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name, namespace },
          target: { apiVersion: 'v1', kind: 'Node', name: node },
        },
      });
      this.log(`scheduler: ${namespace}/${name} bound to ${node}`);
    } catch (err) {
      this.assumed.delete(pod.metadata.uid);
      if (!isNotFound(err)) this.log(`scheduler: ${namespace}/${name}: binding failed: ${errorText(err)}`);
    }
  }

  private async unschedulable(pod: Pod, message: string): Promise<void> {
    const namespace = pod.metadata.namespace ?? 'default';
    const { name } = pod.metadata;
    const current = pod.status?.conditions?.find(c => c.type === 'PodScheduled');
    if (current?.status === 'False' && current.message === message) return;
    const now = nowIso();
    const condition = {
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
      message,
      lastProbeTime: null,
      lastTransitionTime: now,
    };
    try {
      await this.api.core.patchNamespacedPodStatus(
        { name, namespace, body: { status: { phase: 'Pending', conditions: [condition] } } },
        mergePatch,
      );
      await this.api.core.createNamespacedEvent({
        namespace,
        body: {
          metadata: { generateName: `${name}.`, namespace },
          involvedObject: { apiVersion: 'v1', kind: 'Pod', name, namespace, uid: pod.metadata.uid },
          reason: 'FailedScheduling',
          message,
          type: 'Warning',
          source: { component: 'default-scheduler' },
          reportingComponent: 'default-scheduler',
          count: 1,
          firstTimestamp: new Date(),
          lastTimestamp: new Date(),
        },
      });
      this.log(`scheduler: ${namespace}/${name} unschedulable: ${message}`);
    } catch (err) {
      if (!isNotFound(err)) this.log(`scheduler: ${namespace}/${name}: ${errorText(err)}`);
    }
  }
}
