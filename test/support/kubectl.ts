// Runs the kubectl binary against a kubeconfig, with a private cache directory.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const cacheDir = mkdtempSync(join(tmpdir(), 'etcdfn-kubectl-'));

export async function kubectl(kubeconfig: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args], {
    env: { ...process.env, HOME: cacheDir },
  });
  return stdout;
}
