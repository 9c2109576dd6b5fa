// One container of a Pod: resolves its image, environment and command line, runs it as a host
// process, restarts it per restartPolicy with exponential back-off (CrashLoopBackOff), runs its
// probes, and reports its Kubernetes containerStatus.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Container, V1LifecycleHandler, V1Probe } from '@kubernetes/client-node';
import type { EtcdBinaries } from '../../support/etcd-binaries.ts';
import { etcdServerDefaults } from './etcd-defaults.ts';
import { CrashBackoff, backoffDelay } from './crash-backoff.ts';
import { ConfigError, containerEnv } from './env.ts';
import type { SourceReader } from './env.ts';
import { expandAll } from './expand.ts';
import { ImagePullError, containerArgv, resolveImage, toolBinaries } from './images.ts';
import type { ImageConfig, ImageRuntime } from './images.ts';
import { Proc } from './proc.ts';
import type { ProcExit } from './proc.ts';
import { ProbeLoop, probeOnce } from './probes.ts';
import type { ProbeKind, ProbeTarget } from './probes.ts';
import { podKubeconfig } from './pod-network.ts';
import type { PodNetns } from './pod-network.ts';
import { pathRewriter, valueRewriter } from './rewrite.ts';
import type { ContainerStateJson, ContainerStatusJson, Logger, Pod } from './types.ts';
import { nowIso } from './types.ts';
import { containerMappings } from './volumes.ts';
import type { VolumeInfo } from './volumes.ts';

/**
 * Set in every container: the container paths the kubelet maps (mountPaths, terminationMessagePath)
 * and their host directories, as JSON, for programs that use such paths internally rather than in
 * their command line (e.g. the agent writing /dev/termination-log).
 */
export const SANDBOX_PATHS_ENV = 'ETCDFN_SANDBOX_PATHS';
/** Set in every container: the Pod's IP (all Pods share the host network; bind to this, not 0.0.0.0). */
export const SANDBOX_POD_IP_ENV = 'ETCDFN_SANDBOX_POD_IP';
/** Where a Pod's service-account token, CA and namespace are mounted. */
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface BackoffConfig {
  /** first delay before a restart that follows a crash (the very first restart is immediate) */
  initialMs: number;
  /** cap of the exponential back-off */
  maxMs: number;
  /** a container that ran at least this long restarts with no back-off */
  resetMs: number;
}

export interface RuntimeConfig {
  images: ImageConfig;
  reader: SourceReader;
  backoff: BackoffConfig;
  /** host:port strings never rewritten to the Pod IP (the API server's address) */
  keepAddresses: string[];
  /** a directory holding etcd/etcdctl/etcdutl links, put first on the container's PATH */
  binDir(bins: EtcdBinaries | undefined): string;
  /** extra environment for the operator's image (e.g. KUBECONFIG) */
  agentEnv: Record<string, string>;
  log: Logger;
}

/** What a container needs from its Pod. */
export interface RunnerHost {
  cfg: RuntimeConfig;
  pod(): Pod;
  podIP(): string;
  /** the Pod's own network namespace (pod-network.ts), if it has one */
  netns?(): PodNetns | undefined;
  hostIP: string;
  nodeName: string;
  podDir: string;
  volumes(): Map<string, VolumeInfo>;
  /** the container's status changed */
  changed(): void;
  /** resolves when the node is not frozen and any injected start delay is over */
  gate(): Promise<void>;
  frozen(): boolean;
  /** When the kubelet took the Pod (epoch ms): its probe workers tick from then (probes.ts). */
  admittedAt?: number;
}

export type RunnerRole = 'init' | 'main';

interface Prepared {
  runtime: ImageRuntime;
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  rewrite: (value: string) => string;
  path: string;
  terminationFile: string;
}

/** An interruptible sleep. */
class Sleeper {
  private wake: (() => void) | undefined;
  sleep(ms: number): Promise<void> {
    return new Promise(resolve => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
  interrupt(): void {
    this.wake?.();
  }
}

export class ContainerRunner {
  state: ContainerStateJson;
  lastState: ContainerStateJson = {};
  restartCount = 0;
  ready = false;
  started = false;
  imageID = '';
  containerID: string | undefined;
  /** resolves with the last exit code once the container will not run again */
  readonly finished: Promise<number>;
  private proc: Proc | undefined;
  private prepared: Prepared | undefined;
  private probes: ProbeLoop[] = [];
  private stopping = false;
  private crashBackoff: CrashBackoff | undefined;
  private killedBecause: string | undefined;
  private readonly sleeper = new Sleeper();
  private resolveFinished!: (code: number) => void;

  readonly spec: V1Container;
  readonly role: RunnerRole;
  private readonly host: RunnerHost;
  constructor(spec: V1Container, role: RunnerRole, host: RunnerHost) {
    this.spec = spec;
    this.role = role;
    this.host = host;
    this.state = { waiting: { reason: role === 'init' ? 'PodInitializing' : 'ContainerCreating' } };
    this.finished = new Promise(resolve => (this.resolveFinished = resolve));
  }

  get name(): string {
    return this.spec.name;
  }

  get pid(): number | undefined {
    return this.proc?.running ? this.proc.pid : undefined;
  }

  /** Starts the run loop (once). */
  start(): void {
    this.loop().then(this.resolveFinished, err => {
      this.host.cfg.log(`container ${this.describe()} loop failed: ${(err as Error).stack ?? String(err)}`);
      this.resolveFinished(1);
    });
  }

  /** Stops for good: SIGTERM, SIGKILL after graceMs; resolves once nothing runs. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.stopProbes();
    this.sleeper.interrupt();
    if (this.proc?.running) await this.terminate(graceMs);
    if (this.state.waiting && this.lastState.terminated) {
      this.state = this.lastState;
      this.lastState = {};
    }
    this.ready = false;
  }

  /** Runs the preStop hook (within the grace period), then SIGTERM, SIGKILL when the period is over. */
  private async terminate(graceMs: number): Promise<void> {
    const proc = this.proc;
    if (!proc?.running) return;
    const started = Date.now();
    const hook = this.spec.lifecycle?.preStop;
    if (hook && graceMs > 0) {
      const timeout = new Promise<void>(r => setTimeout(r, graceMs).unref());
      await Promise.race([this.runHook(hook, graceMs), timeout]);
    }
    await proc.stop(Math.max(0, graceMs - (Date.now() - started)));
  }

  /** Runs a lifecycle hook handler; resolves true when it succeeded. */
  private async runHook(hook: V1LifecycleHandler, timeoutMs: number): Promise<boolean> {
    if (hook.sleep) {
      await new Promise(r => setTimeout(r, hook.sleep!.seconds * 1000));
      return true;
    }
    if (hook.exec) return (await this.execProbe(hook.exec.command ?? [], timeoutMs)) === 0;
    const timeoutSeconds = Math.max(1, Math.ceil(timeoutMs / 1000));
    return (
      await probeOnce(
        { httpGet: hook.httpGet, tcpSocket: hook.tcpSocket, timeoutSeconds },
        this.probeTarget(),
      )
    ).ok;
  }

  /** postStart: runs beside the fresh process; a failure kills the container like in Kubernetes. */
  private postStart(proc: Proc): void {
    const hook = this.spec.lifecycle?.postStart;
    if (!hook) return;
    void this.runHook(hook, 30_000).then(ok => {
      if (ok || !proc.running || this.stopping) return;
      this.killedBecause = 'PostStartHook failed';
      void proc.stop((this.host.pod().spec.terminationGracePeriodSeconds ?? 30) * 1000);
    });
  }

  /** Sends a signal to the container's processes (fault injection); the run loop handles the exit. */
  kill(signal: NodeJS.Signals): boolean {
    if (!this.proc?.running) return false;
    this.proc.signal(signal);
    return true;
  }

  pause(): void {
    this.proc?.signal('SIGSTOP');
  }

  resume(): void {
    this.proc?.signal('SIGCONT');
  }

  status(): ContainerStatusJson {
    const s: ContainerStatusJson = {
      name: this.spec.name,
      state: this.state,
      lastState: this.lastState,
      ready: this.role === 'init' ? this.state.terminated?.exitCode === 0 : this.ready,
      restartCount: this.restartCount,
      image: this.spec.image ?? '',
      imageID: this.imageID,
      started: this.started,
    };
    if (this.containerID) s.containerID = this.containerID;
    return s;
  }

  private describe(): string {
    const pod = this.host.pod();
    return `${pod.metadata.namespace}/${pod.metadata.name}/${this.spec.name}`;
  }

  private setState(state: ContainerStateJson): void {
    this.state = state;
    this.host.changed();
  }

  private policy(): 'Always' | 'OnFailure' | 'Never' {
    const pod = this.host.pod().spec.restartPolicy ?? 'Always';
    if (this.role === 'init') return pod === 'Never' ? 'Never' : 'OnFailure';
    return pod as 'Always' | 'OnFailure' | 'Never';
  }

  private backoffMs(index: number): number {
    return backoffDelay(this.host.cfg.backoff, index);
  }

  private async loop(): Promise<number> {
    let failures = 0;
    for (;;) {
      await this.host.gate();
      if (this.stopping) return this.lastExitCode();
      let prepared: Prepared;
      try {
        prepared = await this.prepare();
        failures = 0;
      } catch (err) {
        if (this.stopping) return this.lastExitCode();
        if (err instanceof ImagePullError || err instanceof ConfigError) {
          await this.waitAfterSetupError(err, ++failures);
          continue;
        }
        const exit: ProcExit = { code: 128, signal: null, exitCode: 128, error: (err as Error).message };
        if (!(await this.afterExit(exit, new Date(), undefined))) return this.lastExitCode();
        continue;
      }
      const exit = await this.runOnce(prepared);
      if (!(await this.afterExit(exit.exit, exit.startedAt, prepared))) return this.lastExitCode();
    }
  }

  private lastExitCode(): number {
    return this.state.terminated?.exitCode ?? this.lastState.terminated?.exitCode ?? 0;
  }

  private async waitAfterSetupError(err: Error, failures: number): Promise<void> {
    const pull = err instanceof ImagePullError;
    this.setState({
      waiting: { reason: pull ? 'ErrImagePull' : 'CreateContainerConfigError', message: err.message },
    });
    const delay = Math.max(1000, this.backoffMs(failures));
    if (pull) {
      await this.sleeper.sleep(1000);
      if (this.stopping) return;
      const message = `Back-off pulling image "${this.spec.image}": ${err.message}`;
      this.setState({ waiting: { reason: 'ImagePullBackOff', message } });
    }
    await this.sleeper.sleep(delay);
  }

  private async prepare(): Promise<Prepared> {
    const { cfg } = this.host;
    const podIP = this.host.podIP();
    const pod = this.host.pod();
    const runtime = resolveImage(this.spec.image ?? '', cfg.images);
    this.imageID = runtime.imageID;
    const own = await containerEnv({
      pod,
      container: this.spec,
      podIP,
      hostIP: this.host.hostIP,
      nodeName: this.host.nodeName,
      reader: cfg.reader,
    });
    const dir = join(this.host.podDir, 'containers', this.spec.name);
    mkdirSync(dir, { recursive: true });
    const terminationFile = join(dir, 'termination-log');
    writeFileSync(terminationFile, '');
    const mappings = containerMappings(
      this.spec,
      this.host.volumes(),
      join(this.host.podDir, 'volume-subpaths'),
    );
    mappings.push({
      containerPath: this.spec.terminationMessagePath ?? '/dev/termination-log',
      hostPath: terminationFile,
    });
    const netns = this.host.netns?.();
    // In a namespace of its own, a Pod's wildcard and loopback addresses are its own: nothing to rewrite.
    const rewrite = netns ? pathRewriter(mappings) : valueRewriter(mappings, podIP, cfg.keepAddresses);
    const command = expandAll(this.spec.command, own).map(rewrite);
    const args = expandAll(this.spec.args, own).map(rewrite);
    const bins = toolBinaries(runtime, cfg.images);
    const path = `${cfg.binDir(bins)}:${process.env.PATH ?? '/usr/bin:/bin'}`;
    const env: Record<string, string> = {
      PATH: path,
      HOME: dir,
      HOSTNAME: pod.spec.hostname ?? pod.metadata.name,
      [SANDBOX_PATHS_ENV]: JSON.stringify(
        Object.fromEntries(mappings.map(m => [m.containerPath, m.hostPath])),
      ),
      [SANDBOX_POD_IP_ENV]: podIP,
      ...(runtime.kind === 'agent' ? cfg.agentEnv : {}),
      ...(netns ? this.inClusterEnv(netns, mappings, dir) : {}),
    };
    for (const [k, v] of Object.entries(own)) env[k] = rewrite(v);
    const argv = [...(netns?.enter ?? []), ...containerArgv(runtime, command, args, cfg.images, path)];
    if (runtime.kind === 'etcd' && argv[0] === runtime.bins.etcd) {
      Object.assign(env, etcdServerDefaults(argv.slice(1), env, podIP));
    }
    const cwd = this.workingDir(rewrite, dir);
    const prepared = { runtime, argv, env, cwd, rewrite, path, terminationFile };
    this.prepared = prepared;
    return prepared;
  }

  /**
   * Inside a Pod namespace the API server is at the gateway: a kubeconfig with the Pod's own
   * service-account token and CA (its automounted volume), what in-cluster config would use.
   */
  private inClusterEnv(
    netns: PodNetns,
    mappings: { containerPath: string; hostPath: string }[],
    dir: string,
  ): Record<string, string> {
    const sa = mappings.find(m => m.containerPath.replace(/\/+$/, '') === SERVICE_ACCOUNT_DIR);
    if (!sa) return {};
    return { KUBECONFIG: podKubeconfig(join(dir, 'kubeconfig'), netns.apiServer, sa.hostPath) };
  }

  /** workingDir: created when it lies in a volume; an unmapped path is used only if it exists on the host. */
  private workingDir(rewrite: (value: string) => string, fallback: string): string {
    if (!this.spec.workingDir) return fallback;
    const mapped = rewrite(this.spec.workingDir);
    if (mapped !== this.spec.workingDir) {
      mkdirSync(mapped, { recursive: true });
      return mapped;
    }
    return existsSync(mapped) ? mapped : fallback;
  }

  private async runOnce(p: Prepared): Promise<{ exit: ProcExit; startedAt: Date }> {
    const logDir = join(this.host.podDir, 'logs', this.spec.name);
    mkdirSync(logDir, { recursive: true });
    const proc = Proc.spawn({
      argv: p.argv,
      env: p.env,
      cwd: p.cwd,
      logFile: join(logDir, `${this.restartCount}.log`),
    });
    this.proc = proc;
    this.containerID = `sandbox://${randomBytes(16).toString('hex')}`;
    this.killedBecause = undefined;
    const startedAt = proc.startedAt;
    this.ready = false;
    this.started = !this.spec.startupProbe;
    this.setState({ running: { startedAt: startedAt.toISOString().replace(/\.\d+Z$/, 'Z') } });
    if (this.host.frozen()) proc.signal('SIGSTOP');
    this.postStart(proc);
    this.startProbes();
    const exit = await proc.exited;
    this.stopProbes();
    this.ready = false;
    return { exit, startedAt };
  }

  private terminationMessage(p: Prepared | undefined, exit: ProcExit): string | undefined {
    if (exit.error) return exit.error;
    if (!p) return undefined;
    let message = '';
    try {
      message = readFileSync(p.terminationFile, 'utf8').slice(0, 4096);
    } catch {
      // no file
    }
    if (!message && exit.exitCode !== 0 && this.spec.terminationMessagePolicy === 'FallbackToLogsOnError') {
      message = this.logTail(80, 2048);
    }
    return message || undefined;
  }

  /** The last lines of the current log (the FallbackToLogsOnError termination message). */
  logTail(lines: number, bytes: number): string {
    try {
      const file = join(this.host.podDir, 'logs', this.spec.name, `${this.restartCount}.log`);
      const text = readFileSync(file, 'utf8');
      return text
        .split('\n')
        .slice(-lines - 1)
        .join('\n')
        .slice(-bytes);
    } catch {
      return '';
    }
  }

  /** Records an exit; returns true when the container is to run again. */
  private async afterExit(exit: ProcExit, startedAt: Date, p: Prepared | undefined): Promise<boolean> {
    const finishedAt = nowIso();
    const reason = exit.error ? 'StartError' : exit.exitCode === 0 ? 'Completed' : 'Error';
    const terminated: NonNullable<ContainerStateJson['terminated']> = {
      exitCode: exit.exitCode,
      reason,
      startedAt: startedAt.toISOString().replace(/\.\d+Z$/, 'Z'),
      finishedAt,
    };
    if (exit.signal) terminated.signal = exit.exitCode - 128;
    const message = this.terminationMessage(p, exit);
    if (message) terminated.message = message;
    if (this.containerID) terminated.containerID = this.containerID;
    if (this.killedBecause) this.host.cfg.log(`container ${this.describe()} killed: ${this.killedBecause}`);
    const policy = this.policy();
    const again = !this.stopping && (policy === 'Always' || (policy === 'OnFailure' && exit.exitCode !== 0));
    if (!again) {
      this.setState({ terminated });
      return false;
    }
    this.lastState = { terminated };
    this.crashBackoff ??= new CrashBackoff(this.host.cfg.backoff);
    const delay = this.crashBackoff.afterExit(startedAt.getTime(), Date.now());
    if (delay > 0) {
      const message = `back-off ${Math.round(delay / 1000)}s restarting failed container=${this.spec.name} pod=${this.podRef()}`;
      this.setState({ waiting: { reason: 'CrashLoopBackOff', message } });
      await this.sleeper.sleep(delay);
      if (this.stopping) return false;
    } else {
      this.setState({ waiting: { reason: 'ContainerCreating' } });
    }
    this.restartCount++;
    return true;
  }

  private podRef(): string {
    const pod = this.host.pod();
    return `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`;
  }

  private probeTarget(): ProbeTarget {
    return {
      podIP: this.host.podIP(),
      ports: this.spec.ports ?? [],
      exec: (command, timeoutMs) => this.execProbe(command, timeoutMs),
    };
  }

  private makeLoop(kind: ProbeKind, probe: V1Probe): ProbeLoop {
    return new ProbeLoop(kind, probe, this.probeTarget(), {
      onChange: (ok, message) => this.onProbe(kind, ok, message),
      paused: () => this.host.frozen(),
      ...(this.host.admittedAt !== undefined && { anchor: this.host.admittedAt }),
    });
  }

  /** Liveness and readiness loops (they start once a startup probe, if any, has passed). */
  private mainLoops(): ProbeLoop[] {
    const loops: ProbeLoop[] = [];
    if (this.spec.livenessProbe) loops.push(this.makeLoop('liveness', this.spec.livenessProbe));
    if (this.spec.readinessProbe) loops.push(this.makeLoop('readiness', this.spec.readinessProbe));
    return loops;
  }

  private startProbes(): void {
    if (this.role === 'init') return;
    this.probes = this.spec.startupProbe
      ? [this.makeLoop('startup', this.spec.startupProbe)]
      : this.mainLoops();
    for (const loop of this.probes) loop.start();
    if (!this.spec.readinessProbe && this.started) this.setReady(true);
  }

  /**
   * The kubelet synced the Pod (its labels, annotations or spec changed): while the container runs
   * and is not ready, its readiness probe runs now, as a kubelet's prober manager does in
   * UpdatePodStatus on every sync (manualTriggerCh), besides the period's ticks.
   */
  synced(): void {
    if (this.ready || !this.proc?.running || this.stopping) return;
    for (const loop of this.probes) if (loop.kind === 'readiness') loop.trigger();
  }

  private stopProbes(): void {
    for (const loop of this.probes) loop.stop();
    this.probes = [];
  }

  private setReady(ready: boolean): void {
    if (this.ready === ready) return;
    this.ready = ready;
    this.host.changed();
  }

  private onProbe(kind: ProbeKind, ok: boolean, message: string | undefined): void {
    if (!this.proc?.running || this.stopping) return;
    if (kind === 'readiness') return this.setReady(ok && this.started);
    if (kind === 'startup' && ok) {
      this.started = true;
      this.stopProbes();
      this.probes = this.mainLoops();
      for (const loop of this.probes) loop.start();
      if (!this.spec.readinessProbe) this.setReady(true);
      else this.host.changed();
      return;
    }
    if (!ok) {
      // Failed liveness or startup probe: kill the container; the policy decides about a restart.
      this.killedBecause = `${kind} probe failed: ${message ?? ''}`;
      const grace = (this.host.pod().spec.terminationGracePeriodSeconds ?? 30) * 1000;
      void this.terminate(grace);
    }
  }

  /** Runs an exec probe's command like the container's own (same image mapping, env, paths). */
  private execProbe(command: string[], timeoutMs: number): Promise<number> {
    const p = this.prepared;
    if (!p) return Promise.resolve(1);
    let argv: string[];
    try {
      argv = [
        ...(this.host.netns?.()?.enter ?? []),
        ...containerArgv(p.runtime, command.map(p.rewrite), [], this.host.cfg.images, p.path),
      ];
    } catch {
      return Promise.resolve(126);
    }
    return new Promise(resolve => {
      const child = spawn(argv[0], argv.slice(1), {
        env: p.env,
        cwd: p.cwd,
        stdio: 'ignore',
        timeout: timeoutMs,
      });
      child.once('error', () => resolve(127));
      child.once('exit', (code, signal) => resolve(signal ? 1 : (code ?? 1)));
    });
  }
}
