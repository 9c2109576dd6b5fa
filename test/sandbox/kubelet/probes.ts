// Readiness, liveness and startup probes: httpGet, tcpSocket and exec (grpc is approximated by a
// TCP connect). Defaults and thresholds as in Kubernetes: initialDelaySeconds 0, periodSeconds 10,
// timeoutSeconds 1, successThreshold 1, failureThreshold 3.
import http from 'node:http';
import https from 'node:https';
import { connect } from 'node:net';
import type { V1ContainerPort, V1Probe } from '@kubernetes/client-node';

export type ProbeKind = 'readiness' | 'liveness' | 'startup';

export interface ProbeTarget {
  podIP: string;
  ports: V1ContainerPort[];
  /** Runs an exec probe's command in the container's context; resolves with the exit code. */
  exec(command: string[], timeoutMs: number): Promise<number>;
}

export interface ProbeResult {
  ok: boolean;
  message?: string;
}

function resolvePort(port: number | string | undefined, ports: V1ContainerPort[]): number {
  if (typeof port === 'number') return port;
  if (port === undefined) throw new Error('probe has no port');
  if (/^\d+$/.test(port)) return Number(port);
  const named = ports.find(p => p.name === port);
  if (!named) throw new Error(`port "${port}" is not a named port of the container`);
  return named.containerPort;
}

/** The request path of an httpGet probe: like the kubelet's URL, rooted even when `path` is not ("health"). */
export function probePath(path: string | undefined): string {
  if (!path) return '/';
  return path.startsWith('/') ? path : `/${path}`;
}

function httpProbe(probe: NonNullable<V1Probe['httpGet']>, target: ProbeTarget, timeoutMs: number) {
  return new Promise<ProbeResult>(resolve => {
    const secure = probe.scheme === 'HTTPS';
    const headers: Record<string, string> = { 'user-agent': 'kube-probe/sandbox' };
    for (const h of probe.httpHeaders ?? []) headers[h.name] = h.value;
    const lib = secure ? https : http;
    const req = lib.request(
      {
        host: probe.host || target.podIP,
        port: resolvePort(probe.port, target.ports),
        path: probePath(probe.path),
        method: 'GET',
        headers,
        rejectUnauthorized: false,
        timeout: timeoutMs,
      },
      res => {
        res.resume();
        const code = res.statusCode ?? 0;
        resolve(
          code >= 200 && code < 400
            ? { ok: true }
            : { ok: false, message: `HTTP probe failed with statuscode: ${code}` },
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded')));
    req.on('error', err => resolve({ ok: false, message: `Get "${probe.path ?? '/'}": ${err.message}` }));
    req.end();
  });
}

function tcpProbe(host: string, port: number, timeoutMs: number) {
  return new Promise<ProbeResult>(resolve => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ ok: false, message: `dial tcp ${host}:${port}: i/o timeout` });
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ ok: true });
    });
    socket.once('error', err => {
      clearTimeout(timer);
      resolve({ ok: false, message: `dial tcp ${host}:${port}: ${err.message}` });
    });
  });
}

/** Runs one probe attempt. */
export async function probeOnce(probe: V1Probe, target: ProbeTarget): Promise<ProbeResult> {
  const timeoutMs = Math.max(1, probe.timeoutSeconds ?? 1) * 1000;
  try {
    if (probe.httpGet) return await httpProbe(probe.httpGet, target, timeoutMs);
    if (probe.tcpSocket) {
      const port = resolvePort(probe.tcpSocket.port, target.ports);
      return await tcpProbe(probe.tcpSocket.host || target.podIP, port, timeoutMs);
    }
    if (probe.grpc) return await tcpProbe(target.podIP, probe.grpc.port, timeoutMs);
    if (probe.exec) {
      const code = await target.exec(probe.exec.command ?? [], timeoutMs);
      return code === 0 ? { ok: true } : { ok: false, message: `command exited with ${code}` };
    }
    return { ok: false, message: 'probe has no handler' };
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
}

export interface ProbeLoopOptions {
  /** Called when the probe's verdict changes (after the success/failure thresholds). */
  onChange(ok: boolean, message?: string): void;
  /** While true (frozen node), attempts are skipped. */
  paused(): boolean;
  /**
   * When the kubelet took the Pod (epoch ms). A kubelet's probe worker is made then, with the Pod,
   * and ticks every period from then on, not from the container's start; the first attempt comes at
   * the container's start (the status sync that sees it running triggers a readiness probe at once).
   */
  anchor?: number;
}

/** Runs a probe at the container's start, then on the Pod's probe ticks, and reports verdict changes. */
export class ProbeLoop {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running = false;
  /** No attempt before this (epoch ms): the container's start plus initialDelaySeconds. */
  private notBefore = Infinity;
  private successes = 0;
  private failures = 0;
  private verdict: boolean | undefined;

  readonly kind: ProbeKind;
  private readonly probe: V1Probe;
  private readonly target: ProbeTarget;
  private readonly opts: ProbeLoopOptions;
  constructor(kind: ProbeKind, probe: V1Probe, target: ProbeTarget, opts: ProbeLoopOptions) {
    this.kind = kind;
    this.probe = probe;
    this.target = target;
    this.opts = opts;
    // Liveness starts out successful, readiness failed; startup has no verdict until it passes or fails.
    this.verdict = kind === 'liveness' ? true : kind === 'readiness' ? false : undefined;
  }

  start(): void {
    const delay = Math.max(0, this.probe.initialDelaySeconds ?? 0) * 1000;
    this.notBefore = Date.now() + delay;
    this.schedule(delay);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /**
   * An attempt now, the period's ticks unchanged (a kubelet's manualTriggerCh): skipped while one
   * runs or before the first (initialDelaySeconds).
   */
  trigger(): void {
    if (this.stopped || this.running || this.timer === undefined || Date.now() < this.notBefore) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    void this.tick();
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.tick();
    }, ms);
  }

  /** The time until the next tick of a worker made at `anchor` (a whole period without one). */
  private untilNextTick(period: number): number {
    const anchor = this.opts.anchor;
    if (anchor === undefined) return period;
    return period - (Math.max(0, Date.now() - anchor) % period);
  }

  private async tick(): Promise<void> {
    const period = Math.max(1, this.probe.periodSeconds ?? 10) * 1000;
    if (this.opts.paused()) return this.schedule(this.untilNextTick(period));
    this.running = true;
    const result = await probeOnce(this.probe, this.target).finally(() => (this.running = false));
    if (this.stopped) return;
    if (result.ok) {
      this.successes++;
      this.failures = 0;
      const threshold = this.kind === 'readiness' ? (this.probe.successThreshold ?? 1) : 1;
      if (this.successes >= threshold && this.verdict !== true) this.change(true);
      // A passed startup probe is done for good.
      if (this.kind === 'startup' && this.verdict) return;
    } else {
      this.failures++;
      this.successes = 0;
      if (this.failures >= (this.probe.failureThreshold ?? 3) && this.verdict !== false) {
        this.change(false, result.message);
        // A failed liveness or startup probe restarts the container: a new loop takes over.
        if (this.kind !== 'readiness') return;
      }
    }
    this.schedule(this.untilNextTick(period));
  }

  private change(ok: boolean, message?: string): void {
    this.verdict = ok;
    this.opts.onChange(ok, message);
  }
}
