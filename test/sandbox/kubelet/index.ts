// The sandbox's process kubelet: runs the Pods of an API server (the sandbox's, or any) as local
// processes, one loopback IP per Pod, real etcd binaries for etcd images. See README.md beside
// this file for what is supported and how DNS, paths and addresses are mapped.
//
//   const kubelet = await startKubelet({ kubeconfig, dataDir });
//   await kubelet.faults.kill({ namespace: 'default', pod: 'etcd-0' });
//   await kubelet.stop();
import { appendFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { HostsFile } from '../hosts.ts';
import { bindHostsFile, insidePrivateMountNamespace, unbindFile } from '../namespace.ts';
import { Api } from './api.ts';
import type { RuntimeConfig } from './container.ts';
import { startControlServer } from './control.ts';
import { Dns } from './dns.ts';
import { nameServerCandidates, startNameServer, type NameServer } from './dns-server.ts';
import { desiredSubsets } from './endpoints.ts';
import { NodeHeartbeat } from './heartbeat.ts';
import { startKubeletServer } from './logs.ts';
import type {
  DelayRequest,
  DiskFaultRequest,
  Faults,
  KillRequest,
  KillResult,
  NodeState,
  WipeRequest,
} from './faults.ts';
import { FaultError } from './faults.ts';
import { Informer } from './informer.ts';
import { DiskFaults } from './disk-faults.ts';
import { PodIpAllocator, randomBase } from './ipam.ts';
import { apiSourceReader, registerNode } from './node.ts';
import type { KubeletOptions } from './options.ts';
import {
  DEFAULT_HOST_IMAGES,
  backoffConfig,
  defaultAgentImages,
  discoverEtcd,
  loadKubeConfig,
  makeBinDirs,
} from './options.ts';
import { startClusterEgress } from './cluster-egress.ts';
import { EndpointsWriter } from './endpoints-writer.ts';
import { knativePrograms } from './knative-images.ts';
import { PodNetwork } from './pod-network.ts';
import { ServiceProxy } from './service-proxy.ts';
import { PodWorker } from './pod-worker.ts';
import type { NodeContext } from './pod-worker.ts';
import { PvcController } from './pvcs.ts';
import { PvcResizeController } from './pvc-resize.ts';
import { Scheduler } from './scheduler.ts';
import type { Endpoints, KObj, Logger, Pod, Pvc, Service } from './types.ts';
import { pvcDir } from './volumes.ts';

export type { KubeletOptions } from './options.ts';
export type { Faults, NodeState, PodState, KillRequest, WipeRequest, DelayRequest } from './faults.ts';
export { FaultClient, controlUrlOf } from './control.ts';
export { VOLUMES_ANNOTATION } from './pod-worker.ts';
export { SANDBOX_PATHS_ENV, SANDBOX_POD_IP_ENV } from './container.ts';
export { POD_NETWORK_ANNOTATION } from './pod-network.ts';

export interface Kubelet {
  readonly nodeName: string;
  /** every node this kubelet runs Pods for (nodeName first, then options.extraNodes) */
  readonly nodeNames: readonly string[];
  readonly dataDir: string;
  /** the loopback control endpoint (fault injection over HTTP), if enabled */
  readonly controlUrl: string | undefined;
  /** the hosts file the kubelet maintains (bound over /etc/hosts inside the namespace) */
  readonly hostsFile: string | undefined;
  /** true when the hosts file is bind-mounted over /etc/hosts for this process tree */
  readonly dnsActive: boolean;
  /** the loopback address of the name server answering Pod and Service names (port 53), if any */
  readonly nameServerIP: string | undefined;
  readonly faults: Faults;
  /** The IP the kubelet gave a Pod (undefined when it does not run it). */
  podIP(namespace: string, name: string): string | undefined;
  /** A container's log (the current run, or the previous one). */
  logs(namespace: string, pod: string, container: string, previous?: boolean): string;
  /** Stops watching and stops every process (SIGTERM, then SIGKILL); leaves the API objects alone. */
  stop(): Promise<void>;
}

function defaultLogger(dataDir: string): Logger {
  const file = join(dataDir, 'kubelet.log');
  const verbose = !!process.env.SANDBOX_VERBOSE;
  return message => {
    const line = `${new Date().toISOString()} ${message}\n`;
    try {
      appendFileSync(file, line);
    } catch {
      // data dir gone (shutdown)
    }
    if (verbose) process.stderr.write(`[kubelet] ${line}`);
  };
}

class ProcessKubelet implements Kubelet, Faults {
  readonly nodeName: string;
  readonly nodeNames: readonly string[];
  /** hosted nodes whose Node object was deleted: machines that are gone */
  private readonly lostNodes = new Set<string>();
  private readonly nodeContexts = new Map<string, NodeContext>();
  private scheduler: Scheduler | undefined;
  readonly dataDir: string;
  controlUrl: string | undefined;
  hostsFile: string | undefined;
  dnsActive = false;
  /** Files bind-mounted over (/etc/hosts, /etc/resolv.conf), undone on stop, last first. */
  private readonly bound: string[] = [];
  private nameServer: NameServer | undefined;
  /** the name server's second address, on the pod network's gateway (Pods in namespaces ask there) */
  private gatewayNameServer: NameServer | undefined;
  /** ClusterIP Services of the pod network's Pods (service-proxy.ts) */
  private serviceProxy: ServiceProxy | undefined;

  get nameServerIP(): string | undefined {
    return this.nameServer?.ip;
  }
  private readonly api: Api;
  private readonly log: Logger;
  private readonly workers = new Map<string, PodWorker>();
  private readonly delays = new Map<string, number>();
  private readonly pods: Informer<Pod>;
  private readonly services: Informer<Service>;
  private readonly endpoints: Informer<Endpoints>;
  private readonly pvcs: Informer<Pvc>;
  private readonly storageClasses: Informer<KObj>;
  private readonly disks = new DiskFaults();
  private readonly node: NodeContext;
  private dns: Dns | undefined;
  private controllers: { stop(): void }[] = [];
  private closeControl: (() => Promise<void>) | undefined;
  private closeServing: (() => Promise<void>) | undefined;
  private closeEgress: (() => Promise<void>) | undefined;
  private frozen = false;
  private thaw: { promise: Promise<void>; resolve: () => void } | undefined;
  private stopped = false;

  private readonly opts: KubeletOptions;
  constructor(opts: KubeletOptions) {
    this.opts = opts;
    this.dataDir = opts.dataDir;
    mkdirSync(this.dataDir, { recursive: true });
    this.nodeName = opts.nodeName ?? 'sandbox';
    this.nodeNames = [this.nodeName, ...(opts.extraNodes ?? []).filter(n => n !== this.nodeName)];
    this.log = opts.log ?? defaultLogger(this.dataDir);
    const kc = loadKubeConfig(opts);
    this.api = new Api(kc);
    this.pods = new Informer<Pod>(this.api, '/api/v1/pods', this.log);
    this.services = new Informer<Service>(this.api, '/api/v1/services', this.log);
    this.endpoints = new Informer<Endpoints>(this.api, '/api/v1/endpoints', this.log);
    this.pvcs = new Informer<Pvc>(this.api, '/api/v1/persistentvolumeclaims', this.log);
    this.storageClasses = new Informer<KObj>(this.api, '/apis/storage.k8s.io/v1/storageclasses', this.log);
    this.node = this.nodeContext();
  }

  private runtimeConfig(): RuntimeConfig {
    const etcd = discoverEtcd(this.opts.etcdBinaries, this.log);
    let kubeconfig = this.opts.kubeconfig;
    if (!kubeconfig) {
      kubeconfig = join(this.dataDir, 'kubeconfig');
      writeFileSync(kubeconfig, this.api.kc.exportConfig());
    }
    return {
      images: {
        etcd,
        agentImages: this.opts.agentImages ?? defaultAgentImages(),
        agentCommand: this.opts.agentCommand,
        functionCommand: this.opts.functionCommand,
        hostImages: this.opts.hostImages ?? DEFAULT_HOST_IMAGES,
        programs: knativePrograms(),
      },
      reader: apiSourceReader(this.api),
      backoff: backoffConfig(this.opts.backoff),
      keepAddresses: [new URL(this.api.server).host],
      binDir: makeBinDirs(this.dataDir, etcd),
      agentEnv: { KUBECONFIG: kubeconfig },
      log: this.log,
    };
  }

  private nodeContext(): NodeContext {
    return {
      api: this.api,
      cfg: this.runtimeConfig(),
      dataDir: this.dataDir,
      nodeName: this.nodeName,
      hostIP: this.opts.hostIP ?? '127.0.0.1',
      ipam: new PodIpAllocator(this.opts.ipBase ?? randomBase()),
      pvc: (ns, name) => this.pvcs.get(ns, name),
      dnsChanged: () => this.dns?.refreshNow(),
      frozen: () => this.frozen,
      unfrozen: () => this.thaw?.promise ?? Promise.resolve(),
      startDelayMs: (ns, name) => Math.max(0, (this.delays.get(`${ns}/${name}`) ?? 0) - Date.now()),
      volumeRefreshMs: this.opts.volumeRefreshMs ?? 2000,
      log: this.log,
    };
  }

  async start(): Promise<void> {
    if (this.opts.podNetwork)
      this.node.network = await PodNetwork.start({
        apiServer: this.api.server,
        log: this.log,
        serviceCidr: this.opts.serviceCidr,
      });
    await this.setUpDns();
    const ctl = this.opts.controllers ?? {};
    if (ctl.pvcs !== false)
      this.controllers.push(
        new PvcController(
          this.api,
          { pvcs: this.pvcs, pods: this.pods, classes: this.storageClasses },
          this.dataDir,
          this.log,
        ),
      );
    if (ctl.pvcs !== false)
      this.controllers.push(
        new PvcResizeController(this.api, { pvcs: this.pvcs, pods: this.pods }, this.log),
      );
    const nodes = new Informer<KObj>(this.api, '/api/v1/nodes', this.log);
    this.controllers.push(nodes);
    nodes.on({ deleted: node => void this.nodeGone(node.metadata.name) });
    const volumes = new Informer<KObj>(this.api, '/api/v1/persistentvolumes', this.log);
    this.controllers.push(volumes);
    const informers = {
      pods: this.pods,
      pvcs: this.pvcs,
      volumes,
      classes: this.storageClasses,
      nodes,
      services: this.services,
    };
    this.scheduler = new Scheduler(this.api, informers, this.nodeNames, this.log);
    this.controllers.push(this.scheduler);
    this.controllers.push(...[this.pods, this.services, this.endpoints, this.pvcs, this.storageClasses]);
    const network = this.node.network;
    if (network) {
      const informers = { pods: this.pods, services: this.services, endpoints: this.endpoints };
      this.controllers.push(new EndpointsWriter(this.api, informers, ip => network.contains(ip), this.log));
      const view = {
        services: () => this.services.list(),
        endpoints: () => this.computedEndpoints(),
      };
      const proxy = (this.serviceProxy = new ServiceProxy(network.bridge, view, this.log));
      const sync = { upsert: () => proxy.sync(), deleted: () => proxy.sync() };
      this.services.on(sync);
      this.pods.on(sync);
    }
    this.pods.on({ upsert: pod => this.onPod(pod), deleted: pod => this.onPodDeleted(pod) });
    const refresh = { upsert: () => this.dns?.refresh(), deleted: () => this.dns?.refresh() };
    this.services.on(refresh);
    this.endpoints.on(refresh);
    this.pods.on(refresh);
    // Classes first: a claim is judged against them.
    await this.storageClasses.start();
    await Promise.all([
      this.pvcs.start(),
      this.services.start(),
      this.endpoints.start(),
      nodes.start(),
      volumes.start(),
    ]);
    if (this.opts.clusterEgressSocket) {
      const egress = await startClusterEgress(
        this.opts.clusterEgressSocket,
        {
          services: () => this.services.list(),
          endpoints: () => this.computedEndpoints(),
          local: ip => ip.startsWith('127.') || !!this.node.network?.contains(ip),
        },
        this.log,
      );
      this.closeEgress = () => egress.close();
    }
    let kubeletPort: number | undefined;
    if (this.opts.serving) {
      const server = await startKubeletServer(this, this.opts.serving);
      kubeletPort = server.port;
      this.closeServing = () => server.close();
    }
    for (const name of this.nodeNames)
      await registerNode(this.api, name, this.node.hostIP, this.log, kubeletPort);
    const heartbeat = new NodeHeartbeat(
      this.api,
      () => this.nodeNames.filter(n => !this.lostNodes.has(n)),
      this.log,
      () => this.frozen,
    );
    this.controllers.push(heartbeat);
    await heartbeat.start();
    await this.pods.start();
    if (this.opts.controlPort !== false) {
      const logs = (ns: string, pod: string, c: string, prev: boolean): string => this.logs(ns, pod, c, prev);
      const control = await startControlServer(this, logs, this.dataDir, this.opts.controlPort ?? 0);
      this.controlUrl = control.url;
      this.closeControl = () => control.close();
      this.node.cfg.keepAddresses.push(new URL(control.url).host);
    }
    this.log(
      `kubelet ${this.nodeName} started (API ${this.api.server}, DNS ${this.dnsActive ? 'on' : 'off'})`,
    );
  }

  private async setUpDns(): Promise<void> {
    if (this.opts.hostsFile === false) return;
    this.hostsFile = this.opts.hostsFile ?? join(this.dataDir, 'hosts');
    const hosts = new HostsFile(this.hostsFile);
    this.dns = new Dns(
      hosts,
      {
        pods: () =>
          [...this.workers.values()].map(w => ({ namespace: w.namespace, ip: w.podIP, ...w.dnsIdentity })),
        endpoints: () => this.computedEndpoints(),
        service: (ns, name) => this.services.get(ns, name),
        services: () => this.services.list(),
        clusterIP: (ns, name) => this.serviceProxy?.clusterIP(ns, name),
      },
      this.opts.clusterDomain,
    );
    const bind = this.opts.bindHosts ?? 'auto';
    if (bind === true || (bind === 'auto' && insidePrivateMountNamespace())) {
      await bindHostsFile(this.hostsFile);
      this.bound.push('/etc/hosts');
      // Every name the sandbox uses is in the hosts file. A name not there yet (a Pod about to be
      // created) must fail at once, not wait seconds for the machine's DNS server: etcd treats a
      // slow lookup as a lost peer, which restarts its 5 s wait before the next membership change.
      const nameserver = await this.startNameServer();
      const resolv = join(dirname(this.hostsFile), 'resolv.conf');
      const gateway = await this.startGatewayNameServer();
      // Inside a Pod namespace the first address is unreachable (refused at once): the second answers.
      const second = gateway ? `nameserver ${gateway}\n` : '';
      writeFileSync(resolv, `nameserver ${nameserver}\n${second}options timeout:1 attempts:1\n`);
      await bindHostsFile(resolv, '/etc/resolv.conf');
      this.bound.push('/etc/resolv.conf');
      if (this.nameServer) this.dns.servedByNameServer();
      this.dnsActive = true;
    } else {
      this.log(
        'not inside the private mount namespace: Pod and Service names will not resolve (see namespace.ts)',
      );
    }
  }

  /**
   * Starts the name server (see dns-server.ts) and returns the address for resolv.conf; without the
   * privilege to listen on port 53, 127.0.0.1, where nothing answers, so unknown names fail at once.
   */
  private async startNameServer(): Promise<string> {
    if (this.opts.nameServer === false) return '127.0.0.1';
    try {
      const dns = this.dns!;
      this.nameServer = await startNameServer(nameServerCandidates(), name => dns.lookup(name));
      return this.nameServer.ip;
    } catch (err) {
      this.log(`no name server (${(err as Error).message}): names come from the hosts file alone`);
      return '127.0.0.1';
    }
  }

  /** The same name server on the pod network's gateway, for Pods in namespaces of their own. */
  private async startGatewayNameServer(): Promise<string | undefined> {
    const network = this.node.network;
    if (!network || !this.nameServer) return undefined;
    const dns = this.dns!;
    this.gatewayNameServer = await startNameServer([network.gateway], name => dns.lookup(name, true));
    return network.gateway;
  }

  /**
   * Whether this kubelet runs the Pod: bound to one of its nodes that is not lost, or (one node
   * only) not bound yet — a single-node kubelet starts a Pod while binding it, as it always has;
   * with more nodes the scheduler binds it first.
   */
  private ours(pod: Pod): boolean {
    const node = pod.spec.nodeName;
    if (!node) return this.nodeNames.length === 1;
    return this.nodeNames.includes(node) && !this.lostNodes.has(node);
  }

  private contextFor(nodeName: string | undefined): NodeContext {
    const name = nodeName ?? this.nodeName;
    if (name === this.nodeName) return this.node;
    let ctx = this.nodeContexts.get(name);
    if (!ctx) this.nodeContexts.set(name, (ctx = { ...this.node, nodeName: name }));
    return ctx;
  }

  private onPod(pod: Pod): void {
    const existing = this.workers.get(pod.metadata.uid);
    if (existing && !this.stopped) return existing.update(pod);
    if (this.stopped || !this.ours(pod)) return;
    const worker = new PodWorker(pod, this.contextFor(pod.spec.nodeName));
    this.workers.set(pod.metadata.uid, worker);
    if (!pod.spec.nodeName) void this.bind(pod);
    worker.start();
  }

  /**
   * A hosted node's Node object is gone: the machine is gone. Its Pods' processes die at once and
   * nothing reports on them any more; their API objects stay as they were until
   * kube-controller-manager's pod GC deletes them (their workers clean up then).
   */
  private async nodeGone(name: string): Promise<void> {
    if (!this.nodeNames.includes(name) || this.lostNodes.has(name)) return;
    this.lostNodes.add(name);
    const lost = [...this.workers.values()].filter(w => w.nodeName === name);
    this.log(`node ${name} deleted: the machine is gone with ${lost.length} Pod(s)`);
    await Promise.all(lost.map(w => w.shutdown(0)));
  }

  private onPodDeleted(pod: Pod): void {
    const worker = this.workers.get(pod.metadata.uid);
    if (!worker) return;
    this.workers.delete(pod.metadata.uid);
    void worker.forget();
  }

  /** One node: binds a Pod to it (pinning WaitForFirstConsumer claims to it), as the scheduler would. */
  private async bind(pod: Pod): Promise<void> {
    const placed = this.scheduler?.placement(pod);
    const pin = placed?.kind === 'bind' ? placed.pin : [];
    await this.scheduler?.bind(pod, this.nodeName, pin);
  }

  private worker(namespace: string | undefined, name: string): PodWorker {
    const ns = namespace ?? 'default';
    const found = [...this.workers.values()].filter(w => w.namespace === ns && w.name === name);
    const worker = found.find(w => !w.current.metadata.deletionTimestamp) ?? found[0];
    if (!worker) throw new FaultError(`pod ${ns}/${name} does not run on node ${this.nodeName}`, 404);
    return worker;
  }

  // ---- Kubelet ----

  get faults(): Faults {
    return this;
  }

  podIP(namespace: string, name: string): string | undefined {
    try {
      return this.worker(namespace, name).podIP;
    } catch {
      return undefined;
    }
  }

  /**
   * Each Service's Endpoints as the endpoints controller would write them, for DNS only (nothing
   * writes them: the real API server refuses the sandbox's loopback Pod IPs in Endpoints). Services
   * without a selector keep whatever Endpoints the user wrote.
   */
  private computedEndpoints(): Endpoints[] {
    const pods = this.pods.list();
    const computed = this.services
      .list()
      .filter(svc => svc.spec?.selector && Object.keys(svc.spec.selector).length > 0)
      .map(
        svc =>
          ({
            apiVersion: 'v1',
            kind: 'Endpoints',
            metadata: { name: svc.metadata.name, namespace: svc.metadata.namespace },
            subsets: desiredSubsets(
              svc,
              pods.filter(p => p.metadata.namespace === svc.metadata.namespace),
            ),
          }) as Endpoints,
      );
    const selected = new Set(computed.map(e => `${e.metadata.namespace}/${e.metadata.name}`));
    const written = this.endpoints
      .list()
      .filter(e => !selected.has(`${e.metadata.namespace}/${e.metadata.name}`));
    return [...computed, ...written];
  }

  logs(namespace: string, pod: string, container: string, previous = false): string {
    const worker = this.worker(namespace, pod);
    const runner = worker.containers().find(c => c.name === container);
    if (!runner) throw new FaultError(`container ${container} is not valid for pod ${pod}`, 400);
    const run = runner.restartCount - (previous ? 1 : 0);
    if (run < 0) throw new FaultError(`previous terminated container "${container}" not found`, 400);
    try {
      return readFileSync(join(worker.podDir, 'logs', container, `${run}.log`), 'utf8');
    } catch {
      return '';
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const c of this.controllers) c.stop();
    this.dns?.stop();
    this.thaw?.resolve();
    await this.closeControl?.();
    await this.closeServing?.();
    await this.closeEgress?.();
    const grace = this.opts.stopGraceMs ?? 2000;
    await Promise.all([...this.workers.values()].map(w => w.shutdown(grace)));
    this.workers.clear();
    await this.nameServer?.close();
    await this.gatewayNameServer?.close();
    await this.serviceProxy?.stop();
    await this.node.network?.stop();
    // Before the sandbox's directory goes: a later sandbox in this process binds its own files.
    for (const target of this.bound.splice(0).reverse()) {
      try {
        await unbindFile(target);
      } catch (err) {
        this.log(`${(err as Error).message}`);
      }
    }
    this.disks.releaseAll();
    this.log(`kubelet ${this.nodeName} stopped`);
  }

  // ---- Faults ----

  async kill(req: KillRequest): Promise<KillResult> {
    const worker = this.worker(req.namespace, req.pod);
    const pids = new Map(worker.containers().map(c => [c.name, c.pid]));
    const killed = worker.kill(req.container, req.signal ?? 'SIGKILL');
    if (!killed.length) {
      throw new FaultError(
        `pod ${worker.describe()}: no running container${req.container ? ` ${req.container}` : ''}`,
        409,
      );
    }
    this.log(`fault: ${req.signal ?? 'SIGKILL'} ${worker.describe()} [${killed.join(', ')}]`);
    return { killed: killed.map(container => ({ container, pid: pids.get(container) ?? -1 })) };
  }

  async wipePvc(req: WipeRequest): Promise<{ path: string }> {
    const ns = req.namespace ?? 'default';
    const pvc = this.pvcs.get(ns, req.claim);
    if (!pvc) throw new FaultError(`persistentvolumeclaim ${ns}/${req.claim} not found`, 404);
    const dir = pvcDir(this.dataDir, pvc);
    mkdirSync(dir, { recursive: true });
    for (const entry of readdirSync(dir)) rmSync(join(dir, entry), { recursive: true, force: true });
    this.log(`fault: wiped the data of pvc ${ns}/${req.claim} (${dir})`);
    return { path: dir };
  }

  private claimDir(req: DiskFaultRequest): string {
    const ns = req.namespace ?? 'default';
    const pvc = this.pvcs.get(ns, req.claim);
    if (!pvc) throw new FaultError(`persistentvolumeclaim ${ns}/${req.claim} not found`, 404);
    const dir = pvcDir(this.dataDir, pvc);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  async fillPvc(req: DiskFaultRequest): Promise<{ path: string }> {
    const dir = this.claimDir(req);
    if (!req.bytes || req.bytes <= 0) throw new FaultError('fill-pvc needs bytes > 0', 400);
    this.disks.fill(dir, req.bytes);
    this.log(
      `fault: pvc ${req.namespace ?? 'default'}/${req.claim} is now a ${req.bytes}-byte disk (${dir})`,
    );
    return { path: dir };
  }

  async readOnlyPvc(req: DiskFaultRequest): Promise<{ path: string }> {
    const dir = this.claimDir(req);
    this.disks.readOnly(dir);
    this.log(`fault: pvc ${req.namespace ?? 'default'}/${req.claim} is read-only (${dir})`);
    return { path: dir };
  }

  async releasePvc(req: DiskFaultRequest): Promise<{ path: string }> {
    const dir = this.claimDir(req);
    this.disks.release(dir);
    this.log(`fault: pvc ${req.namespace ?? 'default'}/${req.claim} disk fault released (${dir})`);
    return { path: dir };
  }

  async freeze(): Promise<void> {
    if (this.frozen) return;
    this.frozen = true;
    let resolve!: () => void;
    const promise = new Promise<void>(r => (resolve = r));
    this.thaw = { promise, resolve };
    for (const w of this.workers.values()) w.pause();
    this.log('fault: node frozen');
  }

  async unfreeze(): Promise<void> {
    if (!this.frozen) return;
    this.frozen = false;
    for (const w of this.workers.values()) w.resume();
    this.thaw?.resolve();
    this.thaw = undefined;
    for (const w of this.workers.values()) w.changed();
    this.log('fault: node unfrozen');
  }

  async delayStart(req: DelayRequest): Promise<void> {
    const ns = req.namespace ?? 'default';
    const until = Date.now() + req.seconds * 1000;
    this.delays.set(`${ns}/${req.pod}`, until);
    for (const w of this.workers.values()) if (w.namespace === ns && w.name === req.pod) w.delayUntil(until);
    this.log(`fault: start of ${ns}/${req.pod} delayed by ${req.seconds}s`);
  }

  async state(): Promise<NodeState> {
    return {
      nodeName: this.nodeName,
      frozen: this.frozen,
      hostsFile: this.hostsFile,
      pods: [...this.workers.values()].map(w => ({
        namespace: w.namespace,
        name: w.name,
        uid: w.uid,
        ip: w.podIP,
        dir: w.podDir,
        deleting: !!w.current.metadata.deletionTimestamp,
        resourceVersion: w.current.metadata.resourceVersion,
        containers: w.containers().map(c => ({
          name: c.name,
          pid: c.pid,
          restartCount: c.restartCount,
          state: Object.keys(c.state)[0] ?? 'unknown',
          ready: c.ready,
        })),
      })),
    };
  }
}

/** Starts a process kubelet; resolves once it has listed the API server's objects. */
export async function startKubelet(opts: KubeletOptions): Promise<Kubelet> {
  const kubelet = new ProcessKubelet(opts);
  try {
    await kubelet.start();
  } catch (err) {
    await kubelet.stop();
    throw err;
  }
  return kubelet;
}
