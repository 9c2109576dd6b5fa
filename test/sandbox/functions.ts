// Runs each etcdfn function as its own HTTP server process, through the functions framework, as
// Knative would run each as its own Service. Functions not built yet are skipped. A function process
// that dies is started again on the same port, as Knative starts a new instance behind the same
// URL, so the event bridge's retries reach the new one.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FUNCTION_NAMES, type FunctionName } from '../../functions/registry.ts';

const repoRoot = resolve(import.meta.dirname, '..', '..');

export interface RunningFunctions {
  urls: Partial<Record<FunctionName, string>>;
  /** How many times each function's process died and was started again. */
  restarts(): Partial<Record<FunctionName, number>>;
  stop(): Promise<void>;
}

export interface FunctionsOptions {
  kubeconfig: string;
  env?: NodeJS.ProcessEnv;
  /** Called with each line a function writes (its JSON logs). */
  onLog?: (name: FunctionName, line: string) => void;
  /** Called when a function's process died and a new one serves again (`restarts` so far). */
  onRestart?: (name: FunctionName, restarts: number, why: string) => void;
  startTimeoutMs?: number;
}

export function builtFunctions(): FunctionName[] {
  return FUNCTION_NAMES.filter(name => existsSync(join(repoRoot, 'functions', name, 'index.ts')));
}

export async function startFunctions(opts: FunctionsOptions): Promise<RunningFunctions> {
  const supervisors = builtFunctions().map(name => new Supervisor(name, opts));
  const stop = async () => {
    await Promise.all(supervisors.map(s => s.stop()));
  };
  try {
    const entries = await Promise.all(supervisors.map(async s => [s.name, await s.start()] as const));
    return {
      urls: Object.fromEntries(entries),
      restarts: () => Object.fromEntries(supervisors.map(s => [s.name, s.restarts])),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** One function: its current process, and a new one on the same port whenever that one dies. */
class Supervisor {
  restarts = 0;
  private child: ChildProcess | undefined;
  private port = 0;
  private stopping = false;

  readonly name: FunctionName;
  private readonly opts: FunctionsOptions;
  constructor(name: FunctionName, opts: FunctionsOptions) {
    this.name = name;
    this.opts = opts;
  }

  async start(): Promise<string> {
    const url = await this.spawnOne();
    this.port = Number(new URL(url).port);
    return url;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.child) await stopChild(this.child);
  }

  /** Starts a process; resolves with its URL once it serves, rejects if it exits before. */
  private spawnOne(): Promise<string> {
    const { name, opts } = this;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        // A test-controlled clock (test/sandbox/clock.ts), only when the sandbox was given one.
        ...(process.env.SANDBOX_CLOCK_FILE
          ? ['--import', join(repoRoot, 'test', 'sandbox', 'clock.ts')]
          : []),
        join(repoRoot, 'functions', 'serve.ts'),
        name,
        '--port',
        String(this.port),
        '--exit-with-stdin',
      ],
      {
        cwd: repoRoot,
        env: {
          // The sandbox's object store (s3rver) speaks plain http on loopback: allow-listed here,
          // as an operator's configuration would (docs/snapshots.md, endpoint policy).
          ETCDFN_S3_ALLOWED_ENDPOINTS: 'http://127.0.0.0/8',
          // The sandbox's Pod IPs are IPv4 loopback addresses, whatever the host's own addresses
          // (which the operator would otherwise detect the family from).
          ETCDFN_POD_IP_FAMILY: 'IPv4',
          ...process.env,
          ...opts.env,
          KUBECONFIG: opts.kubeconfig,
          FUNCTION_TARGET: name,
        },
        // stdin is a pipe the function watches: if the sandbox dies without stopping it, it exits.
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    this.child = child;
    return new Promise((resolveUrl, reject) => {
      let buffer = '';
      let ready = false;
      const timer = setTimeout(
        () => {
          reject(new Error(`function ${name} did not start`));
          child.kill('SIGKILL');
        },
        opts.startTimeoutMs ?? Number(process.env.ETCDFN_SANDBOX_FUNCTION_START_MS ?? 240_000),
      );
      const onLine = (line: string) => {
        if (!ready && line.startsWith('{"serving"')) {
          ready = true;
          clearTimeout(timer);
          resolveUrl((JSON.parse(line) as { url: string }).url);
          return;
        }
        if (line.trim()) opts.onLog?.(name, line);
      };
      const split = (chunk: Buffer) => {
        buffer += chunk.toString('utf8');
        const lines = buffer.split('\n');
        buffer = lines.pop() ?? '';
        lines.forEach(onLine);
      };
      child.stdout.on('data', split);
      child.stderr.on('data', split);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (!ready) reject(new Error(`function ${name} exited (${signal ?? code}) before serving`));
        else void this.restart(signal ?? `exit code ${code}`);
      });
    });
  }

  /** After a serving process died: start another on the same port until one serves (or we stop). */
  private async restart(why: string): Promise<void> {
    for (let attempt = 0; !this.stopping; attempt++) {
      try {
        await this.spawnOne();
        if (this.stopping) {
          if (this.child) await stopChild(this.child);
          return;
        }
        this.restarts++;
        this.opts.onRestart?.(this.name, this.restarts, why);
        return;
      } catch (err) {
        if (this.stopping) return;
        this.opts.onLog?.(
          this.name,
          `restart attempt ${attempt + 1} failed: ${err instanceof Error ? err.message : String(err)}`,
        );
        await sleep(Math.min(200 * 2 ** attempt, 5_000));
      }
    }
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>(r => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
