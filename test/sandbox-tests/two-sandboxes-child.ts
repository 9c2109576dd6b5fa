// Child of two-sandboxes.test.ts, run inside a private mount namespace: starts a sandbox core, stops
// it and deletes its directory (as the benchmarks do between sections), then starts a second one in
// the same process. Prints one JSON line: whether the second bound its hosts file and what
// /etc/hosts shows after each stop.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCore } from '../sandbox/core.ts';

const result: Record<string, unknown> = {};
const machineHosts = readFileSync('/etc/hosts', 'utf8');
for (const round of [1, 2]) {
  const dir = mkdtempSync(join(tmpdir(), `etcdfn-two-sandboxes-${round}-`));
  try {
    const core = await startCore({ dir });
    result[`dns active ${round}`] = core.kubelet.dnsActive;
    result[`hosts is sandbox's ${round}`] =
      core.kubelet.hostsFile !== undefined &&
      readFileSync('/etc/hosts', 'utf8') === readFileSync(core.kubelet.hostsFile, 'utf8');
    await core.stop();
    result[`machine's hosts after stop ${round}`] = readFileSync('/etc/hosts', 'utf8') === machineHosts;
  } catch (err) {
    result[`error ${round}`] = (err as Error).message;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(JSON.stringify(result));
process.exit(0);
