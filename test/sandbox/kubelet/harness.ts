// For tests: the sandbox (the real control plane + our process kubelet) as a child process inside
// its own private mount namespace, so that Pod and Service DNS names resolve for the etcd members it
// runs while the test process itself stays an ordinary `node --test` child (it needs no DNS: it
// talks to the API server through the kubeconfig, to members by status.podIP, and to the kubelet's
// fault API over its loopback control endpoint).
//
//   const sandbox = await startSandbox();
//   after(() => sandbox.stop());            // SIGTERM, wait, SIGKILL if need be; removes the temp dir
//   sandbox.core.createNamespacedPod(...); await sandbox.faults.kill({ pod: 'etcd-1' });
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatchV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { namespacedCommand } from '../namespace.ts';
import { startReadyChild, type ReadyChild } from '../ready-child.ts';
import { lockPodNetwork } from './pod-network-lock.ts';
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
  /** run Pods that ask for it in network namespaces of their own (kubelet/pod-network.ts) */
  podNetwork?: boolean;
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
  if (opts.podNetwork) args.push('--pod-network');
  if (opts.backoffMaxMs !== undefined) args.push('--backoff-max-ms', String(opts.backoffMaxMs));
  const cmd = namespacedCommand([process.execPath, '--import', 'tsx', ...args]);
  const unlock = opts.podNetwork ? await lockPodNetwork() : () => undefined;
  let started: ReadyChild<ReadyLine>;
  try {
    started = await startReadyChild<ReadyLine>({
      command: cmd.command,
      args: cmd.args,
      cwd: repoRoot,
      env: cmd.env,
      startTimeoutMs: opts.startTimeoutMs ?? 60_000,
      stopGraceMs: 20_000,
      echoStderr: Boolean(process.env.SANDBOX_VERBOSE),
    });
  } catch (err) {
    unlock();
    if (ownDir) rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const { ready } = started;
  const stop = async (): Promise<void> => {
    await started.stop().finally(unlock);
    if (ownDir) rmSync(dir, { recursive: true, force: true });
  };
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
    stderr: () => started.output(),
    stop,
  };
}
