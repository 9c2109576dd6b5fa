// Helpers for tests that drive the sandbox API server with the real kubectl binary.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeKubeconfig } from '../kubeconfig.ts';

export interface KubectlEnv {
  dir: string;
  kubeconfig: string;
  /** HOME of kubectl, so its discovery cache stays inside dir */
  home: string;
  cleanup(): void;
}

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';

/** A private directory with a kubeconfig for `url` and an empty HOME for kubectl. */
export function kubectlEnv(url: string, namespace = 'default'): KubectlEnv {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-kubectl-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const home = join(dir, 'home');
  mkdirSync(home);
  writeKubeconfig(kubeconfig, url, namespace);
  return { dir, kubeconfig, home, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Start kubectl; the caller reads or stops the child. */
export function spawnKubectl(env: KubectlEnv, args: string[]): ChildProcess {
  return spawn(KUBECTL, ['--kubeconfig', env.kubeconfig, ...args], {
    env: { ...process.env, HOME: env.home, KUBECONFIG: env.kubeconfig },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Run kubectl to completion (killed after timeoutMs). */
export function kubectl(
  env: KubectlEnv,
  args: string[],
  opts: { input?: string; timeoutMs?: number } = {},
): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawnKubectl(env, args);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', code => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin!.end(opts.input ?? '');
  });
}

/** Collects a running child's stdout so a test can wait for a line to appear. */
export class OutputCollector {
  text = '';
  private waiters: { predicate: (out: string) => boolean; resolve: (out: string) => void }[] = [];

  constructor(child: ChildProcess) {
    child.stdout!.on('data', (d: Buffer) => {
      this.text += d.toString();
      this.waiters = this.waiters.filter(w => {
        if (!w.predicate(this.text)) return true;
        w.resolve(this.text);
        return false;
      });
    });
  }

  /** Resolves with the output so far once `predicate` holds for it. */
  waitFor(predicate: (out: string) => boolean, timeoutMs = 10_000): Promise<string> {
    if (predicate(this.text)) return Promise.resolve(this.text);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out waiting for output; got:\n${this.text}`)),
        timeoutMs,
      );
      this.waiters.push({
        predicate,
        resolve: out => {
          clearTimeout(timer);
          resolve(out);
        },
      });
    });
  }
}
