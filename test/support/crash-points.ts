// Arming the crash points of shared/runtime/crash.ts from an e2e test. A point is armed by an empty
// file of its name in the sandbox's crash directory; the function deletes that file as it kills
// itself, so "file gone and the function started again" is the evidence that the crash happened.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CrashPoint } from '../../shared/runtime/crash.ts';
import { waitFor } from './wait.ts';

/** Which function a point's prefix belongs to (the restart counters are per function). */
const FUNCTION_OF_PREFIX: Record<string, string> = {
  cluster: 'reconcile-cluster',
  member: 'reconcile-member',
  finalize: 'finalize-member',
  snapshot: 'run-snapshot',
  schedule: 'run-snapshot',
};

export function functionOf(point: CrashPoint): string {
  const fn = FUNCTION_OF_PREFIX[point.split(':')[0] ?? ''];
  if (!fn) throw new Error(`no function for crash point ${point}`);
  return fn;
}

/** How long to wait for an armed point to fire, and what to print when it does not. */
export interface CrashWait {
  timeoutMs: number;
  intervalMs?: number;
  describe?: () => Promise<string> | string;
}

/** An armed point. */
export interface ArmedCrash {
  point: CrashPoint;
  fn: string;
  /** Waits until the point fired and its function was started again; disarms it whatever happens. */
  crashed(wait: CrashWait): Promise<void>;
}

/** Points kept armed in the background, each again after it fires, until it fired its count. */
export interface Rearming {
  /** How often each point has fired so far (a point that never fired has no entry). */
  fired: Map<CrashPoint, number>;
  /** How many more times each point is to fire. */
  left: Map<CrashPoint, number>;
  /** Stops re-arming and disarms every point. */
  stop: () => Promise<void>;
}

/** The crash points of one sandbox: its crash directory and its functions' restart counts. */
export class CrashPoints {
  readonly dir: string;
  private readonly restarts: () => Record<string, number>;

  /**
   * `dir` is the directory the sandbox was started with (`crashDir`); `restarts` reads the
   * sandbox's restart count per function (a function, as the sandbox may start after this).
   */
  constructor(dir: string, restarts: () => Record<string, number>) {
    this.dir = dir;
    this.restarts = restarts;
  }

  /** In a new temporary directory; `remove()` deletes it. */
  static inTempDir(prefix: string, restarts: () => Record<string, number>): CrashPoints {
    return new CrashPoints(mkdtempSync(join(tmpdir(), prefix)), restarts);
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  restartsOf(fn: string): number {
    return this.restarts()[fn] ?? 0;
  }

  /** The restarts of every function together. */
  totalRestarts(): number {
    return Object.values(this.restarts()).reduce((a, b) => a + b, 0);
  }

  private file(point: CrashPoint): string {
    return join(this.dir, point);
  }

  isArmed(point: CrashPoint): boolean {
    return existsSync(this.file(point));
  }

  disarm(point: CrashPoint): void {
    rmSync(this.file(point), { force: true });
  }

  /**
   * Arms `point` for `fn` (by default the function its prefix names). A crash counts only once
   * `fn` restarted more often than `restartsBefore`, by default its count now.
   */
  arm(
    point: CrashPoint,
    { fn = functionOf(point), restartsBefore }: { fn?: string; restartsBefore?: number } = {},
  ): ArmedCrash {
    const before = restartsBefore ?? this.restartsOf(fn);
    writeFileSync(this.file(point), '');
    return {
      point,
      fn,
      crashed: async ({ timeoutMs, intervalMs = 250, describe }) => {
        try {
          await waitFor(
            `the crash at ${point} (${fn} killed and started again)`,
            async () => !this.isArmed(point) && this.restartsOf(fn) > before,
            { timeoutMs, intervalMs },
            describe,
          );
        } finally {
          this.disarm(point);
        }
      },
    };
  }

  /** Arms `point`, runs `drive` (what makes the function pass it), and waits for the crash. */
  async crashThrough(
    point: CrashPoint,
    drive: () => Promise<unknown>,
    wait: CrashWait & { fn?: string; restartsBefore?: number },
  ): Promise<void> {
    const armed = this.arm(point, wait);
    try {
      await drive();
    } catch (err) {
      this.disarm(point);
      throw err;
    }
    await armed.crashed(wait);
  }

  /**
   * Arms each point now and again each time it fires, until it fired its count (Infinity: until
   * stopped). Polled: a run that passes a point between its firing and the re-arming goes on.
   */
  rearming(counts: Iterable<readonly [CrashPoint, number]>, intervalMs = 50): Rearming {
    const left = new Map(counts);
    const fired = new Map<CrashPoint, number>();
    for (const point of left.keys()) writeFileSync(this.file(point), '');
    let running = true;
    const loop = (async () => {
      while (running) {
        for (const [point, count] of left) {
          if (count > 0 && !this.isArmed(point)) {
            fired.set(point, (fired.get(point) ?? 0) + 1);
            left.set(point, count - 1);
            if (count - 1 > 0) writeFileSync(this.file(point), '');
          }
        }
        await sleep(intervalMs);
      }
    })();
    return {
      fired,
      left,
      stop: async () => {
        running = false;
        await loop;
        for (const point of left.keys()) this.disarm(point);
      },
    };
  }
}
