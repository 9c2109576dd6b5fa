// Starts a sandbox program as a child process and waits for the JSON line it prints once it
// serves ({"ready":true,...}). Shared by the tests' two sandboxes (kubelet/harness.ts: API server
// and kubelet; test/support/sandbox.ts: the whole sandbox with functions and bridge).
//
// The child gets stdin as a pipe: started with --watch-stdin, it stops when this process goes,
// even after a SIGKILL. Children still running when this process exits are killed.
import { spawn, type ChildProcess } from 'node:child_process';

export interface ReadyChildOptions {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** How long to wait for the ready line. */
  startTimeoutMs: number;
  /** Between SIGTERM and SIGKILL when stopping. */
  stopGraceMs: number;
  /** Also copy the child's stderr to this process's stderr. */
  echoStderr?: boolean;
}

export interface ReadyChild<Ready> {
  child: ChildProcess;
  /** The parsed ready line. */
  ready: Ready;
  /** The child's output so far (stderr and stdout, the last 100-200 kB). */
  output(): string;
  /** SIGTERM, SIGKILL after the grace period; resolves once the child has exited. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
let hooked = false;

function killAllOnExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** Starts the child; rejects (with its output) if it exits or times out before its ready line. */
export async function startReadyChild<Ready>(opts: ReadyChildOptions): Promise<ReadyChild<Ready>> {
  const child = spawn(opts.command, opts.args, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  killAllOnExit();
  let out = '';
  const collect = (chunk: Buffer): void => {
    out += chunk.toString('utf8');
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stderr.on('data', (chunk: Buffer) => {
    collect(chunk);
    if (opts.echoStderr) process.stderr.write(chunk);
  });
  const exited = new Promise<void>(r => child.once('exit', () => r()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), opts.stopGraceMs);
      await exited;
      clearTimeout(timer);
    }
    running.delete(child);
  };
  try {
    const ready = await readyLine<Ready>(child, opts.startTimeoutMs, collect, () => out);
    return { child, ready, output: () => out, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function readyLine<Ready>(
  child: ChildProcess,
  timeoutMs: number,
  collect: (chunk: Buffer) => void,
  output: () => string,
): Promise<Ready> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let done = false;
    const fail = (message: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(new Error(`${message}\n--- sandbox output ---\n${output()}`));
    };
    const timer = setTimeout(() => fail(`the sandbox did not start within ${timeoutMs} ms`), timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      collect(chunk);
      if (done) return;
      stdout += chunk.toString('utf8');
      const line = stdout.split('\n').find(l => l.startsWith('{"ready":true'));
      if (!line) return;
      done = true;
      clearTimeout(timer);
      resolve(JSON.parse(line) as Ready);
    });
    child.once('exit', (code, signal) => fail(`the sandbox exited early (code ${code}, signal ${signal})`));
    child.once('error', err => fail(err.message));
  });
}
