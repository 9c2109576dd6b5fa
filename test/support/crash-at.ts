// A crash at one named crash point (shared/runtime/crash.ts), in process: the point is armed in a
// temporary $ETCDFN_CRASH_DIR and the SIGKILL it sends itself is turned into a thrown Crash, so the
// invocation stops exactly where a real crash would stop it (nothing after the point runs) and the
// test can look at what it left and invoke again. The real SIGKILL is test/unit/crash.test.ts's and
// the e2e crash tests'.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CrashPoint } from '../../shared/runtime/crash.ts';

export class Crash extends Error {}

/**
 * Runs `fn` with `point` armed. Resolves 'crashed' when the point fired (fn stopped there), else
 * fn's own result; the point is disarmed and the environment restored either way.
 */
export async function crashAt<T>(point: CrashPoint, fn: () => Promise<T>): Promise<'crashed' | T> {
  const dir = mkdtempSync(join(tmpdir(), 'etcdfn-crash-at-'));
  writeFileSync(join(dir, point), '');
  const before = process.env.ETCDFN_CRASH_DIR;
  const realKill = Object.getOwnPropertyDescriptor(process, 'kill')!;
  process.env.ETCDFN_CRASH_DIR = dir;
  process.kill = ((pid: number, signal?: string | number) => {
    if (pid === process.pid && signal === 'SIGKILL') throw new Crash(point);
    return realKill.value.call(process, pid, signal) as boolean;
  }) as typeof process.kill;
  try {
    return await fn();
  } catch (err) {
    if (err instanceof Crash) return 'crashed';
    throw err;
  } finally {
    Object.defineProperty(process, 'kill', realKill);
    if (before === undefined) delete process.env.ETCDFN_CRASH_DIR;
    else process.env.ETCDFN_CRASH_DIR = before;
    rmSync(dir, { recursive: true, force: true });
  }
}
