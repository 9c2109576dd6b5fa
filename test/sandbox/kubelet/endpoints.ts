// A minimal Endpoints controller: for every Service with a selector, keeps a core/v1 Endpoints
// object of the same name listing the matching Pods (ready ones in `addresses`, others in
// `notReadyAddresses`, or all in `addresses` with publishNotReadyAddresses), with the Service's
// ports resolved to target ports. No EndpointSlices.
import type {
  V1EndpointAddress,
  CoreV1EndpointPort,
  V1EndpointSubset,
  V1ServicePort,
} from '@kubernetes/client-node';
import type { Api } from './api.ts';
import { errorText, isNotFound } from './api.ts';
import type { Informer } from './informer.ts';
import type { Endpoints, Logger, Pod, Service } from './types.ts';
import { sameJson } from './util.ts';

export function selects(
  selector: Record<string, string> | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

export function podReady(pod: Pod): boolean {
  return pod.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True') ?? false;
}

function targetPort(port: V1ServicePort, pod: Pod | undefined): number {
  const target = port.targetPort;
  if (target === undefined) return port.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  for (const c of pod?.spec.containers ?? []) {
    const named = c.ports?.find(p => p.name === target);
    if (named) return named.containerPort;
  }
  return port.port;
}

/** The subsets an Endpoints object should have for a Service and the Pods of its namespace. */
export function desiredSubsets(svc: Service, pods: Pod[]): V1EndpointSubset[] {
  const publishAll = svc.spec?.publishNotReadyAddresses === true;
  const ready: V1EndpointAddress[] = [];
  const notReady: V1EndpointAddress[] = [];
  let first: Pod | undefined;
  for (const pod of pods) {
    if (!selects(svc.spec?.selector, pod.metadata.labels)) continue;
    const ip = pod.status?.podIP;
    const phase = pod.status?.phase;
    if (!ip || phase === 'Succeeded' || phase === 'Failed') continue;
    if (pod.metadata.deletionTimestamp && !publishAll) continue;
    first ??= pod;
    const address: V1EndpointAddress = {
      ip,
      targetRef: {
        kind: 'Pod',
        namespace: pod.metadata.namespace,
        name: pod.metadata.name,
        uid: pod.metadata.uid,
      },
    };
    if (pod.spec.nodeName) address.nodeName = pod.spec.nodeName;
    if (pod.spec.hostname && pod.spec.subdomain === svc.metadata.name) address.hostname = pod.spec.hostname;
    (publishAll || podReady(pod) ? ready : notReady).push(address);
  }
  if (!ready.length && !notReady.length) return [];
  const byIp = (a: V1EndpointAddress, b: V1EndpointAddress): number =>
    a.ip.localeCompare(b.ip, 'en', { numeric: true });
  const subset: V1EndpointSubset = {};
  if (ready.length) subset.addresses = ready.sort(byIp);
  if (notReady.length) subset.notReadyAddresses = notReady.sort(byIp);
  const ports: CoreV1EndpointPort[] = (svc.spec?.ports ?? []).map(p => {
    const port: CoreV1EndpointPort = { port: targetPort(p, first), protocol: p.protocol ?? 'TCP' };
    if (p.name) port.name = p.name;
    if (p.appProtocol) port.appProtocol = p.appProtocol;
    return port;
  });
  if (ports.length) subset.ports = ports;
  return [subset];
}

export class EndpointsController {
  private timer: NodeJS.Timeout | undefined;
  private readonly pending = new Set<string>();
  private stopped = false;

  private readonly api: Api;
  private readonly services: Informer<Service>;
  private readonly endpoints: Informer<Endpoints>;
  private readonly pods: Informer<Pod>;
  private readonly log: Logger;
  constructor(
    api: Api,
    services: Informer<Service>,
    endpoints: Informer<Endpoints>,
    pods: Informer<Pod>,
    log: Logger,
  ) {
    this.api = api;
    this.services = services;
    this.endpoints = endpoints;
    this.pods = pods;
    this.log = log;
    services.on({
      upsert: svc => this.enqueue(svc.metadata.namespace ?? 'default'),
      deleted: svc => void this.deleteEndpoints(svc),
    });
    pods.on({
      upsert: pod => this.enqueue(pod.metadata.namespace ?? 'default'),
      deleted: pod => this.enqueue(pod.metadata.namespace ?? 'default'),
    });
    endpoints.on({ upsert: ep => this.enqueue(ep.metadata.namespace ?? 'default') });
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Syncs every Service of a namespace soon (coalesced). */
  enqueue(namespace: string): void {
    this.pending.add(namespace);
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const namespaces = [...this.pending];
      this.pending.clear();
      void Promise.all(namespaces.map(ns => this.syncNamespace(ns)));
    }, 10);
  }

  private async syncNamespace(namespace: string): Promise<void> {
    const pods = this.pods.list().filter(p => p.metadata.namespace === namespace);
    const services = this.services.list().filter(s => s.metadata.namespace === namespace && s.spec?.selector);
    await Promise.all(services.map(svc => this.syncService(svc, pods)));
  }

  private async syncService(svc: Service, pods: Pod[]): Promise<void> {
    if (svc.metadata.deletionTimestamp || svc.spec?.type === 'ExternalName') return;
    const namespace = svc.metadata.namespace ?? 'default';
    const name = svc.metadata.name;
    const subsets = desiredSubsets(svc, pods);
    const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}) };
    if (svc.spec?.clusterIP === 'None') labels['service.kubernetes.io/headless'] = '';
    const current = this.endpoints.get(namespace, name);
    if (
      current &&
      sameJson(current.subsets ?? [], subsets) &&
      sameJson(current.metadata.labels ?? {}, labels)
    )
      return;
    const body = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name,
        namespace,
        labels,
        ...(current ? { resourceVersion: current.metadata.resourceVersion } : {}),
      },
      subsets,
    };
    try {
      if (current) await this.api.core.replaceNamespacedEndpoints({ name, namespace, body });
      else await this.api.core.createNamespacedEndpoints({ namespace, body });
    } catch (err) {
      // A conflict or a race with the watch: the next event re-syncs.
      this.log(`endpoints ${namespace}/${name}: ${errorText(err)}`);
      setTimeout(() => this.enqueue(namespace), 500);
    }
  }

  private async deleteEndpoints(svc: Service): Promise<void> {
    if (!svc.spec?.selector) return;
    const namespace = svc.metadata.namespace ?? 'default';
    try {
      await this.api.core.deleteNamespacedEndpoints({ name: svc.metadata.name, namespace });
    } catch (err) {
      if (!isNotFound(err)) this.log(`delete endpoints ${namespace}/${svc.metadata.name}: ${errorText(err)}`);
    }
  }
}
