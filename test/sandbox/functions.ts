// Runs each etcdfn function as its own HTTP server process, through the functions framework, as
// Knative would run each as its own Service. Functions not built yet are skipped.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FUNCTION_NAMES, type FunctionName } from '../../functions/registry.ts';

const repoRoot = resolve(import.meta.dirname, '..', '..');

export interface RunningFunctions {
  urls: Partial<Record<FunctionName, string>>;
  stop(): Promise<void>;
}

export interface FunctionsOptions {
  kubeconfig: string;
  env?: NodeJS.ProcessEnv;
  /** Called with each line a function writes (its JSON logs). */
  onLog?: (name: FunctionName, line: string) => void;
  startTimeoutMs?: number;
}

export function builtFunctions(): FunctionName[] {
  return FUNCTION_NAMES.filter(name => existsSync(join(repoRoot, 'functions', name, 'index.ts')));
}

export async function startFunctions(opts: FunctionsOptions): Promise<RunningFunctions> {
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(children.map(stopChild));
  };
  try {
    const entries = await Promise.all(
      builtFunctions().map(async name => [name, await startOne(name, opts, children)] as const),
    );
    return { urls: Object.fromEntries(entries), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function startOne(name: FunctionName, opts: FunctionsOptions, children: ChildProcess[]): Promise<string> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, 'functions', 'serve.ts'), name, '--port', '0'],
    {
      cwd: repoRoot,
      env: { ...process.env, ...opts.env, KUBECONFIG: opts.kubeconfig, FUNCTION_TARGET: name },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  return new Promise((resolveUrl, reject) => {
    let buffer = '';
    let ready = false;
    const timer = setTimeout(
      () => reject(new Error(`function ${name} did not start`)),
      opts.startTimeoutMs ?? 30_000,
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
    child.stdout!.on('data', split);
    child.stderr!.on('data', split);
    child.once('exit', code => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`function ${name} exited (${code}) before serving`));
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>(r => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
