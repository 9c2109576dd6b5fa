// The sandbox kubelet's probe loop keeps a kubelet's timing: one attempt when the container starts,
// then the ticks of the Pod's probe worker (made when the kubelet took the Pod, not when the
// container started), and an extra readiness attempt when the Pod is synced (manualTriggerCh).
// Mocked clock: the times below are the loop's own schedule, not the machine's speed.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { V1Probe } from '@kubernetes/client-node';
import { ProbeLoop } from '../sandbox/kubelet/probes.ts';

const flush = () => new Promise<void>(resolve => setImmediate(resolve));

function loop(probe: V1Probe, healthy: () => boolean, anchor?: number) {
  const attempts: number[] = [];
  const verdicts: { at: number; ok: boolean }[] = [];
  const target = {
    podIP: '127.0.0.1',
    ports: [],
    exec: () => {
      attempts.push(Date.now());
      return Promise.resolve(healthy() ? 0 : 1);
    },
  };
  const probeLoop = new ProbeLoop('readiness', probe, target, {
    onChange: ok => verdicts.push({ at: Date.now(), ok }),
    paused: () => false,
    ...(anchor !== undefined && { anchor }),
  });
  return { probeLoop, attempts, verdicts };
}

async function advance(ms: number): Promise<void> {
  mock.timers.tick(ms);
  await flush();
  await flush();
}

describe('sandbox kubelet: probe timing', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 }));
  afterEach(() => mock.timers.reset());
  const probe: V1Probe = { exec: { command: ['health'] }, periodSeconds: 1 };

  it("probes at the container's start, then on the Pod's ticks", async () => {
    const { probeLoop, attempts } = loop(probe, () => false, 0);
    await advance(700); // the container starts 0.7 s after the kubelet took the Pod
    probeLoop.start();
    await advance(0);
    await advance(300);
    await advance(1000);
    probeLoop.stop();
    assert.deepEqual(attempts, [700, 1000, 2000]);
  });

  it("without a Pod's worker, a whole period after each attempt", async () => {
    const { probeLoop, attempts } = loop(probe, () => false);
    await advance(700);
    probeLoop.start();
    await advance(0);
    await advance(300);
    await advance(700);
    probeLoop.stop();
    assert.deepEqual(attempts, [700, 1700]);
  });

  it('a sync between ticks probes at once, and the ticks stay where they were', async () => {
    let up = false;
    const { probeLoop, attempts, verdicts } = loop(probe, () => up, 0);
    probeLoop.start();
    await advance(0);
    await advance(400);
    up = true;
    probeLoop.trigger();
    await advance(0);
    await advance(600);
    probeLoop.stop();
    assert.deepEqual(attempts, [0, 400, 1000]);
    assert.deepEqual(verdicts, [{ at: 400, ok: true }]);
  });

  it('a sync before initialDelaySeconds is over does not probe', async () => {
    const { probeLoop, attempts } = loop({ ...probe, initialDelaySeconds: 2 }, () => true, 0);
    probeLoop.start();
    await advance(500);
    probeLoop.trigger();
    await advance(0);
    assert.deepEqual(attempts, []);
    await advance(1500);
    probeLoop.stop();
    assert.deepEqual(attempts, [2000]);
  });
});
