// The sandbox's test clock (test/sandbox/clock.ts) for the event bridge, which runs in the sandbox's
// own process: ms since the epoch plus the offset in $SANDBOX_CLOCK_FILE, so that the PingSources of
// EtcdSnapshotSchedules fire when the functions' clock reaches their minute. Undefined without it.
import { readFileSync } from 'node:fs';

export function sandboxClock(file = process.env.SANDBOX_CLOCK_FILE): (() => number) | undefined {
  if (!file) return undefined;
  return () => {
    let offset = 0;
    try {
      offset = Number(readFileSync(file, 'utf8').trim()) || 0;
    } catch {
      // no file yet: the real clock
    }
    return Date.now() + offset;
  };
}
