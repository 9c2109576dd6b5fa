// Endpoints for the Services of the pod network's Pods (pod-network.ts). kube-controller-manager
// runs without its endpoints controller (the API server refuses the other Pods' loopback IPs), but
// programs such as Knative's controllers read Endpoints to judge their data plane ready. So the
// kubelet writes, as the endpoints controller would (endpoints.ts computes them), the Endpoints of
// every Service that selects Pods of the pod network and no loopback Pod; it keeps the ones it
// wrote up to date (empty when their Pods are gone) and leaves every other Endpoints alone.
import { isDeepStrictEqual } from 'node:util';
import type { Api } from './api.ts';
import { errorText, isNotFound } from './api.ts';
import { desiredSubsets, selects } from './endpoints.ts';
import type { Informer } from './informer.ts';
import type { Endpoints, Logger, Pod, Service } from './types.ts';

export class EndpointsWriter {
  private readonly written = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  private readonly api: Api;
  private readonly informers: {
    pods: Informer<Pod>;
    services: Informer<Service>;
    endpoints: Informer<Endpoints>;
  };
  private readonly inPodNetwork: (ip: string) => boolean;
  private readonly log: Logger;
  constructor(
    api: Api,
    informers: { pods: Informer<Pod>; services: Informer<Service>; endpoints: Informer<Endpoints> },
    inPodNetwork: (ip: string) => boolean,
    log: Logger,
  ) {
    this.api = api;
    this.informers = informers;
    this.inPodNetwork = inPodNetwork;
    this.log = log;
    const poke = { upsert: () => this.poke(), deleted: () => this.poke() };
    informers.pods.on(poke);
    informers.services.on(poke);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private poke(): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.running) {
        this.again = true;
        return;
      }
      this.running = this.sync()
        .catch(err => this.log(`endpoints: ${(err as Error).message}`))
        .finally(() => {
          this.running = undefined;
          if (this.again) {
            this.again = false;
            this.poke();
          }
        });
    }, 100);
  }

  private async sync(): Promise<void> {
    const pods = this.informers.pods.list();
    for (const svc of this.informers.services.list()) {
      const ns = svc.metadata.namespace ?? 'default';
      const key = `${ns}/${svc.metadata.name}`;
      const own = pods.filter(
        p => p.metadata.namespace === ns && selects(svc.spec?.selector, p.metadata.labels) && p.status?.podIP,
      );
      const ours = own.length > 0 && own.every(p => this.inPodNetwork(p.status!.podIP!));
      if (!ours && !this.written.has(key)) continue;
      const subsets = ours ? desiredSubsets(svc, own) : [];
      const current = this.informers.endpoints.get(ns, svc.metadata.name);
      if (current && isDeepStrictEqual(current.subsets ?? [], subsets)) {
        this.written.add(key);
        continue;
      }
      await this.write(ns, svc.metadata.name, subsets, current);
      this.written.add(key);
    }
  }

  private async write(
    ns: string,
    name: string,
    subsets: Endpoints['subsets'],
    current?: Endpoints,
  ): Promise<void> {
    const body = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace: ns }, subsets };
    try {
      if (current) {
        await this.api.core.replaceNamespacedEndpoints({
          name,
          namespace: ns,
          body: {
            ...body,
            metadata: { ...body.metadata, resourceVersion: current.metadata.resourceVersion },
          },
        });
      } else {
        await this.api.core.createNamespacedEndpoints({ namespace: ns, body });
      }
    } catch (err) {
      if (!isNotFound(err)) this.log(`endpoints ${ns}/${name}: ${errorText(err)}`);
      this.poke();
    }
  }
}
