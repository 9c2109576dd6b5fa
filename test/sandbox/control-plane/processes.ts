// Child processes of the control plane: started with their output in a log file, stopped by PID
// (SIGTERM, then SIGKILL after a grace period), and free loopback ports to give them.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export interface Child {
  name: string;
  proc: ChildProcess;
  log: string;
  /** set once the process has exited */
  exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts a program with its output appended to `log`. It runs under `setpriv --pdeathsig KILL`, so
 * the kernel kills it when this process dies, even by SIGKILL: no orphaned API server outlives a
 * test.
 */
export function startChild(
  name: string,
  command: string,
  args: string[],
  log: string,
  env?: NodeJS.ProcessEnv,
): Child {
  const fd = openSync(log, 'a');
  const proc = spawn('setpriv', ['--pdeathsig', 'KILL', '--', command, ...args], {
    stdio: ['ignore', fd, fd],
    env: env ?? process.env,
  });
  closeSync(fd);
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const done = new Promise<void>(resolve => {
    proc.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve();
    });
    proc.once('error', () => {
      exit ??= { code: null, signal: null };
      resolve();
    });
  });
  return {
    name,
    proc,
    log,
    exited: () => exit,
    stop: async (graceMs = 10_000) => {
      if (exit) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await done;
      clearTimeout(timer);
    },
  };
}

/** The last lines of a child's log, for an error message. */
export function logTail(child: Child, lines = 20): string {
  try {
    return readFileSync(child.log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** A TCP port free on 127.0.0.1 right now (the caller binds it soon after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
