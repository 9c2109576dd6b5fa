// One container process: spawned in its own process group (so `sh -c` children go with it), its
// stdout/stderr appended to a log file, and — through `setpriv --pdeathsig KILL` when available —
// SIGKILLed by the kernel if the kubelet itself dies without cleaning up. Every live process is
// also SIGKILLed from a process 'exit' hook.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { constants } from 'node:os';

export interface ProcExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Kubernetes' exit code: the code, or 128 + signal number. */
  exitCode: number;
  /** set when the process could not be started at all */
  error?: string;
}

export interface ProcSpec {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  logFile: string;
}

const live = new Set<Proc>();
let hooked = false;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const proc of live) proc.signal('SIGKILL');
  });
}

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find(p => existsSync(p));

export function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal] ?? 0;
}

export class Proc {
  readonly pid: number;
  readonly exited: Promise<ProcExit>;
  readonly startedAt = new Date();
  private done = false;

  private constructor(spec: ProcSpec) {
    const [file, ...args] = spec.argv;
    if (!file) throw new Error('empty command');
    const fd = openSync(spec.logFile, 'a');
    const command = SETPRIV ?? file;
    const argv = SETPRIV ? ['--pdeathsig', 'KILL', '--', file, ...args] : args;
    let child;
    try {
      child = spawn(command, argv, {
        cwd: spec.cwd,
        env: spec.env,
        stdio: ['ignore', fd, fd],
        detached: true,
      });
    } finally {
      closeSync(fd);
    }
    this.exited = new Promise<ProcExit>(resolve => {
      child.once('error', err => {
        this.done = true;
        live.delete(this);
        resolve({ code: 128, signal: null, exitCode: 128, error: err.message });
      });
      child.once('exit', (code, signal) => {
        this.done = true;
        live.delete(this);
        // The container is gone: take anything it left in its process group with it.
        this.signal('SIGKILL');
        resolve({ code, signal, exitCode: code ?? 128 + signalNumber(signal ?? 'SIGKILL') });
      });
    });
    this.pid = child.pid ?? -1;
    live.add(this);
    hookExit();
  }

  static spawn(spec: ProcSpec): Proc {
    return new Proc(spec);
  }

  get running(): boolean {
    return !this.done;
  }

  /** Sends a signal to the whole process group (falls back to the process itself). */
  signal(signal: NodeJS.Signals): void {
    if (this.pid <= 0) return;
    try {
      process.kill(-this.pid, signal);
    } catch {
      try {
        if (!this.done) process.kill(this.pid, signal);
      } catch {
        // already gone
      }
    }
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  async stop(graceMs: number): Promise<ProcExit> {
    if (this.done) return this.exited;
    this.signal('SIGCONT');
    this.signal(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
    if (graceMs > 0) {
      const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
      try {
        return await this.exited;
      } finally {
        clearTimeout(timer);
      }
    }
    return this.exited;
  }
}
