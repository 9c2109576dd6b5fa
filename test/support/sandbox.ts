// For e2e tests: the whole sandbox (API server, kubelet, functions, event bridge) as a child
// process in its own mount namespace, exactly what `npm run sandbox` runs. The test process talks
// to it through the kubeconfig, to etcd members by Pod IP, and to the kubelet's fault endpoint.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { FaultClient } from '../sandbox/kubelet/control.ts';
import { startReadyChild, type ReadyChild } from '../sandbox/ready-child.ts';

const repoRoot = resolve(import.meta.dirname, '..', '..');

export interface FullSandboxOptions {
  chaos?: boolean;
  chaosSeed?: number;
  tickSeconds?: number;
  startTimeoutMs?: number;
  /** Arm crash points through files in this directory (shared/runtime/crash.ts). */
  crashDir?: string;
  /** Share of watch events the bridge loses on purpose (1 = only ticks get through). */
  loseEvents?: number;
  /** Run as `npm run sandbox` does: apply examples/etcdcluster.yaml and start the object store. */
  asUserSees?: boolean;
  /** Nodes of the sandbox (`--nodes`; default 1). */
  nodes?: number;
  /** Extra environment for the sandbox process (e.g. ETCD_3_4_BIN pointing nowhere: no 3.4 image). */
  env?: Record<string, string>;
}

export interface FullSandbox {
  dir: string;
  url: string;
  kubeconfig: string;
  kc: KubeConfig;
  faults: FaultClient;
  functions: Record<string, string>;
  /** How many times each function's process died and was started again. */
  restarts(): Record<string, number>;
  /** How many events of a CloudEvent type the bridge delivered to a function and got a 2xx for. */
  delivered(fn: string, type: string): number;
  stop(): Promise<void>;
  /** The sandbox's own output, for failure messages. */
  output(): string;
}

interface ReadyLine {
  url: string;
  kubeconfig: string;
  controlUrl: string;
  functions: Record<string, string>;
}

export async function startFullSandbox(opts: FullSandboxOptions = {}): Promise<FullSandbox> {
  const dir = mkdtempSync(join(tmpdir(), 'etcdfn-e2e-'));
  const args = [
    '--import',
    'tsx',
    join(repoRoot, 'test', 'sandbox', 'main.ts'),
    '--dir',
    dir,
    '--ready-json',
    '--watch-stdin',
  ];
  if (!opts.asUserSees) args.push('--no-example', '--no-s3');
  args.push('--tick-seconds', String(opts.tickSeconds ?? 10));
  if (opts.chaos) args.push('--chaos', '--chaos-seed', String(opts.chaosSeed ?? 1));
  if (opts.crashDir) args.push('--crash-dir', opts.crashDir);
  if (opts.loseEvents) args.push('--lose-events', String(opts.loseEvents));
  if (opts.nodes) args.push('--nodes', String(opts.nodes));
  // ETCDFN_E2E_KEEP=1 keeps the directory (functions.log, bridge.log, Pod logs) to read after a failure.
  const keep = process.env.ETCDFN_E2E_KEEP === '1';
  const removeDir = (): void => {
    if (keep) process.stderr.write(`etcdfn e2e: sandbox directory kept at ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  };
  let started: ReadyChild<ReadyLine>;
  try {
    started = await startReadyChild<ReadyLine>({
      command: process.execPath,
      args,
      cwd: repoRoot,
      env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', ...opts.env },
      startTimeoutMs: opts.startTimeoutMs ?? 480_000,
      stopGraceMs: 30_000,
    });
  } catch (err) {
    removeDir();
    throw err;
  }
  const { ready } = started;
  const stop = async (): Promise<void> => {
    await started.stop();
    removeDir();
  };
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(ready.kubeconfig);
    return {
      dir,
      url: ready.url,
      kubeconfig: ready.kubeconfig,
      kc,
      faults: new FaultClient(ready.controlUrl),
      functions: ready.functions,
      restarts: () => {
        try {
          return JSON.parse(readFileSync(join(dir, 'function-restarts.json'), 'utf8')) as Record<
            string,
            number
          >;
        } catch {
          return {};
        }
      },
      delivered: (fn, type) => {
        try {
          const counts = JSON.parse(readFileSync(join(dir, 'delivered.json'), 'utf8')) as Record<
            string,
            Record<string, number>
          >;
          return counts[fn]?.[type] ?? 0;
        } catch {
          return 0;
        }
      },
      stop,
      output: () => started.output(),
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
