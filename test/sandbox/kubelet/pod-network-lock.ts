// One pod-network sandbox at a time on this machine. Each serves its Services' ClusterIPs on the
// host (service-proxy.ts) from the same service range, so two at once (test files running side by
// side) could put one ClusterIP on two bridges and cross their traffic. The lock is a directory
// (mkdir is atomic) holding its owner's PID; a lock whose owner is gone is taken over.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const LOCK = join(tmpdir(), 'etcdfn-pod-network.lock');

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Waits (up to `timeoutMs`) for the lock; resolves with its release. */
export async function lockPodNetwork(timeoutMs = 900_000, dir = LOCK): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(join(dir, 'pid'), String(process.pid));
      return () => rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let owner = NaN;
    try {
      owner = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    } catch {
      // Made but its PID not written yet: its owner is alive (or the next look finds it gone).
    }
    if (Number.isInteger(owner) && owner > 0 && !alive(owner)) rmSync(dir, { recursive: true, force: true });
    else if (Date.now() >= deadline)
      throw new Error(`another pod-network sandbox (PID ${owner}) held ${dir} for ${timeoutMs} ms`);
    else await sleep(500);
  }
}
