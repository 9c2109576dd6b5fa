// The sandbox kubelet's CrashLoopBackOff policy on its own, over an injected clock: immediate first
// restart, then 10 s doubling to a 5 min cap, and a reset once a container ran for 10 minutes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backoffConfig } from '../sandbox/kubelet/options.ts';
import { CrashBackoff, KUBELET_BACKOFF, backoffDelay } from '../sandbox/kubelet/crash-backoff.ts';

const S = 1000;
const MIN = 60 * S;

/** Runs a container that crashes after `ran` ms each time, on a fake clock; returns the delays. */
function crashLoop(backoff: CrashBackoff, runs: number[], start = 0): number[] {
  let clock = start;
  const delays: number[] = [];
  for (const ran of runs) {
    const startedAt = clock;
    clock += ran;
    const delay = backoff.afterExit(startedAt, clock);
    delays.push(delay);
    clock += delay;
  }
  return delays;
}

describe('sandbox kubelet: CrashLoopBackOff', () => {
  it("uses the kubelet's figures by default", () => {
    assert.deepEqual(backoffConfig(undefined), KUBELET_BACKOFF);
    assert.deepEqual(KUBELET_BACKOFF, { initialMs: 10 * S, maxMs: 5 * MIN, resetMs: 10 * MIN });
  });

  it('restarts at once, then after 10 s, 20 s, 40 s … and never more than 5 min', () => {
    const delays = crashLoop(new CrashBackoff(KUBELET_BACKOFF), Array(10).fill(2 * S));
    assert.deepEqual(
      delays.map(d => d / S),
      [0, 10, 20, 40, 80, 160, 300, 300, 300, 300],
    );
  });

  it('forgets the back-off once a container ran for 10 minutes, not before', () => {
    const backoff = new CrashBackoff(KUBELET_BACKOFF);
    assert.deepEqual(
      crashLoop(backoff, [S, S, S, S]).map(d => d / S),
      [0, 10, 20, 40],
    );
    // 9m59s of running is not enough: the next delay keeps doubling.
    assert.equal(backoff.afterExit(0, 10 * MIN - S), 80 * S);
    // 10 minutes is: the restart is immediate again, then 10 s.
    assert.equal(backoff.afterExit(0, 10 * MIN), 0);
    assert.equal(backoff.afterExit(0, S), 10 * S);
  });

  it('a shorter configuration (for quick tests) follows the same shape', () => {
    const quick = backoffConfig({ initialMs: 300, maxMs: 1000 });
    assert.deepEqual(
      [0, 1, 2, 3, 4].map(n => backoffDelay(quick, n)),
      [0, 300, 600, 1000, 1000],
    );
    assert.equal(quick.resetMs, 2000, 'reset after twice the cap, as the kubelet does');
  });
});
