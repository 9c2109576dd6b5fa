// Optional chaos between routing and delivery, to prove that functions converge whatever the event
// system does: duplicate deliveries, reordering (hold a small window and release it shuffled), random
// delays, and parallel delivery for the same object (no per-object ordering). Every random choice
// comes from one seeded PRNG, so a given seed and event sequence always produce the same chaos.

export interface ChaosOptions {
  /** PRNG seed; without one the chaos differs from run to run. */
  seed?: number;
  /** Probability (0..1) that a delivery is made twice. */
  duplicate?: number;
  /** Hold up to this many deliveries and release them in a shuffled order (0/1 = off). */
  reorderWindow?: number;
  /** Release a partly filled reorder window after this long (default 50 ms). */
  reorderFlushMs?: number;
  /** Delay each delivery by a random 0..maxDelayMs. */
  maxDelayMs?: number;
  /** Deliver events about the same object concurrently instead of one after the other. */
  parallel?: boolean;
}

export interface ChaosStats {
  duplicated: number;
  delayed: number;
  reordered: number;
}

/** mulberry32: a tiny, fast 32-bit PRNG; returns floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** True when the options ask for any chaos at all. */
export function chaosEnabled(options: ChaosOptions | undefined): boolean {
  if (!options) return false;
  return (
    (options.duplicate ?? 0) > 0 ||
    (options.reorderWindow ?? 0) > 1 ||
    (options.maxDelayMs ?? 0) > 0 ||
    options.parallel === true
  );
}

/** Applies the chaos to a stream of items and forwards them (possibly twice, late, or shuffled). */
export class Chaos<T> {
  readonly stats: ChaosStats = { duplicated: 0, delayed: 0, reordered: 0 };
  private readonly random: () => number;
  private readonly held: T[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private flushTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  private readonly options: ChaosOptions;
  private readonly forward: (item: T) => void;
  constructor(options: ChaosOptions, forward: (item: T) => void) {
    this.options = options;
    this.forward = forward;
    this.random = seededRandom(options.seed ?? Math.floor(Math.random() * 2 ** 32));
  }

  get parallel(): boolean {
    return this.options.parallel === true;
  }

  submit(item: T): void {
    if (this.stopped) return;
    const copies = this.random() < (this.options.duplicate ?? 0) ? 2 : 1;
    if (copies === 2) this.stats.duplicated++;
    for (let i = 0; i < copies; i++) this.hold(item);
  }

  /** Releases whatever the reorder window holds now. */
  flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.held.splice(0);
    if (batch.length > 1) {
      // Fisher–Yates with the seeded PRNG.
      for (let i = batch.length - 1; i > 0; i--) {
        const j = Math.floor(this.random() * (i + 1));
        [batch[i], batch[j]] = [batch[j], batch[i]];
      }
      this.stats.reordered += batch.length;
    }
    for (const item of batch) this.delay(item);
  }

  /** Drops everything held or delayed. */
  stop(): void {
    this.stopped = true;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.held.splice(0);
    this.timers.forEach(clearTimeout);
    this.timers.clear();
  }

  private hold(item: T): void {
    const window = this.options.reorderWindow ?? 0;
    if (window <= 1) return this.delay(item);
    this.held.push(item);
    if (this.held.length >= window) return this.flush();
    this.flushTimer ??= setTimeout(() => this.flush(), this.options.reorderFlushMs ?? 50);
  }

  private delay(item: T): void {
    const max = this.options.maxDelayMs ?? 0;
    if (max <= 0) return this.forward(item);
    const ms = Math.floor(this.random() * (max + 1));
    this.stats.delayed++;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.stopped) this.forward(item);
    }, ms);
    this.timers.add(timer);
  }
}
