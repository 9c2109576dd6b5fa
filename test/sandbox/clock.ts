// The function processes' clock, for tests that must decide when "now" is (a schedule's minute)
// instead of waiting for the wall clock: preloaded (`--import`) into each function process by the
// sandbox when $SANDBOX_CLOCK_FILE is set. The file holds an offset in milliseconds that is added
// to the real clock (`new Date()` and `Date.now()`); the test moves time by rewriting it. Timers are
// untouched and time never stops, so deadlines and timeouts still pass. No product code knows.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const file = process.env.SANDBOX_CLOCK_FILE;
if (file) {
  const RealDate = Date;
  let offsetMs = 0;
  let readAt = Number.NEGATIVE_INFINITY;
  const offset = (): number => {
    const t = performance.now();
    if (t - readAt > 100) {
      readAt = t;
      try {
        offsetMs = Number(readFileSync(file, 'utf8').trim()) || 0;
      } catch {
        // no file yet: the real clock
      }
    }
    return offsetMs;
  };
  class SandboxDate extends RealDate {
    constructor(...args: ConstructorParameters<DateConstructor> | []) {
      if (args.length === 0) super(RealDate.now() + offset());
      else super(...args);
    }
    static override now(): number {
      return RealDate.now() + offset();
    }
  }
  globalThis.Date = SandboxDate as DateConstructor;
}
