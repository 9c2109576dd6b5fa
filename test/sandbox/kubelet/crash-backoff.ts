// CrashLoopBackOff as a kubelet computes it: a container that exits is restarted at once the first
// time, then after 10 s, 20 s, 40 s … capped at 5 min; a container that ran for 10 min before it
// exited starts over (its back-off is forgotten). Pure: times come in as epoch milliseconds, so the
// policy is tested with an injected clock and the runner sleeps for what it returns.
import type { BackoffConfig } from './container.ts';

/** The kubelet's own figures (pkg/kubelet: 10 s initial, 300 s cap, reset after 2 × cap = 10 min). */
export const KUBELET_BACKOFF: BackoffConfig = { initialMs: 10_000, maxMs: 300_000, resetMs: 600_000 };

/** The delay before the restart that follows the `failures`-th exit in a row (0: the first, immediate). */
export function backoffDelay(cfg: BackoffConfig, failures: number): number {
  return failures <= 0 ? 0 : Math.min(cfg.maxMs, cfg.initialMs * 2 ** (failures - 1));
}

/** One container's back-off across its restarts. */
export class CrashBackoff {
  private failures = 0;
  private readonly cfg: BackoffConfig;

  constructor(cfg: BackoffConfig) {
    this.cfg = cfg;
  }

  /** How long to wait before restarting a container that ran from `startedAt` to `finishedAt`. */
  afterExit(startedAt: number, finishedAt: number): number {
    if (finishedAt - startedAt >= this.cfg.resetMs) this.failures = 0;
    return backoffDelay(this.cfg, this.failures++);
  }
}
