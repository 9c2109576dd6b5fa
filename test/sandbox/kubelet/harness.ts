// For tests: the sandbox (API server + process kubelet) as a child process inside its own private
// mount namespace, so that Pod and Service DNS names resolve for the etcd members it runs while
// the test process itself stays an ordinary `node --test` child (it needs no DNS: it talks to the
// API server through the kubeconfig, to members by status.podIP, and to the kubelet's fault API
// over its loopback control endpoint).
//
//   const sandbox = await startSandbox();
//   after(() => sandbox.stop());            // SIGTERM, wait, SIGKILL if need be; removes the temp dir
//   sandbox.core.createNamespacedPod(...); await sandbox.faults.kill({ pod: 'etcd-1' });
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatchV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { namespacedCommand } from '../namespace.ts';
import { FaultClient } from './control.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..', '..');

export interface SandboxOptions {
  /** state directory; default a fresh temp dir that stop() removes */
  dir?: string;
  crdDir?: string;
  agentCommand?: string[];
  ipBase?: string;
  backoffMaxMs?: number;
  /** default 60 s */
  startTimeoutMs?: number;
}

export interface Sandbox {
  dir: string;
  url: string;
  kubeconfig: string;
  kc: KubeConfig;
  core: CoreV1Api;
  batch: BatchV1Api;
  faults: FaultClient;
  hostsFile: string;
  dnsActive: boolean;
  /** the sandbox's name server (port 53), null without the privilege to listen there */
  nameServerIP: string | null;
  pid: number;
  /** everything the child wrote on stderr so far */
  stderr(): string;
  stop(): Promise<void>;
}

interface ReadyLine {
  url: string;
  kubeconfig: string;
  controlUrl: string;
  hostsFile: string;
  dnsActive: boolean;
  nameServerIP: string | null;
  pid: number;
}

const children = new Set<ChildProcess>();
let hooked = false;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const child of children) child.kill('SIGKILL');
  });
}

function waitReady(child: ChildProcess, timeoutMs: number, stderr: () => string): Promise<ReadyLine> {
  return new Promise((resolveReady, reject) => {
    let out = '';
    const timer = setTimeout(
      () => fail(new Error(`sandbox did not start within ${timeoutMs} ms`)),
      timeoutMs,
    );
    function fail(err: Error): void {
      clearTimeout(timer);
      reject(new Error(`${err.message}\n--- sandbox stderr ---\n${stderr()}`));
    }
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const line = out.split('\n').find(l => l.startsWith('{"ready":true'));
      if (!line) return;
      clearTimeout(timer);
      resolveReady(JSON.parse(line) as ReadyLine);
    });
    child.once('exit', (code, signal) =>
      fail(new Error(`sandbox exited early (code ${code}, signal ${signal})`)),
    );
    child.once('error', err => fail(err));
  });
}

/** Starts the sandbox child process and resolves once its API server and kubelet are up. */
export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const ownDir = !opts.dir;
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'etcdfn-sandbox-'));
  const args = [join(here, 'sandbox-process.ts'), '--dir', dir, '--watch-stdin'];
  // The child removes a temp dir itself too, so that it goes even if this process is SIGKILLed.
  if (ownDir) args.push('--remove-dir');
  if (opts.crdDir) args.push('--crds', opts.crdDir);
  if (opts.agentCommand) args.push('--agent-command', JSON.stringify(opts.agentCommand));
  if (opts.ipBase) args.push('--ip-base', opts.ipBase);
  if (opts.backoffMaxMs !== undefined) args.push('--backoff-max-ms', String(opts.backoffMaxMs));
  const cmd = namespacedCommand([process.execPath, '--import', 'tsx', ...args]);
  const child = spawn(cmd.command, cmd.args, {
    cwd: repoRoot,
    env: cmd.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  hookExit();
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
    if (err.length > 200_000) err = err.slice(-100_000);
    if (process.env.SANDBOX_VERBOSE) process.stderr.write(chunk);
  });
  const exited = new Promise<void>(r => child.once('exit', () => r()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
    children.delete(child);
    if (ownDir) rmSync(dir, { recursive: true, force: true });
  };
  let ready: ReadyLine;
  try {
    ready = await waitReady(child, opts.startTimeoutMs ?? 60_000, () => err);
  } catch (e) {
    await stop();
    throw e;
  }
  const kc = new KubeConfig();
  kc.loadFromFile(ready.kubeconfig);
  return {
    dir,
    url: ready.url,
    kubeconfig: ready.kubeconfig,
    kc,
    core: kc.makeApiClient(CoreV1Api),
    batch: kc.makeApiClient(BatchV1Api),
    faults: new FaultClient(ready.controlUrl),
    hostsFile: ready.hostsFile,
    dnsActive: ready.dnsActive,
    nameServerIP: ready.nameServerIP,
    pid: ready.pid,
    stderr: () => err,
    stop,
  };
}
