// Runs the kubectl binary against a kubeconfig, with a private cache directory.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const cacheDir = mkdtempSync(join(tmpdir(), 'etcdfn-kubectl-'));

export async function kubectl(kubeconfig: string, ...args: string[]): Promise<string> {
  return (await kubectlOutput(kubeconfig, ...args)).stdout;
}

/** Both streams: some commands (drain) report progress and refusals on stderr. */
export async function kubectlOutput(
  kubeconfig: string,
  ...args: string[]
): Promise<{ stdout: string; stderr: string }> {
  return run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args], {
    env: { ...process.env, HOME: cacheDir },
  });
}
