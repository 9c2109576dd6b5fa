// One pod-network sandbox at a time (test/sandbox/kubelet/pod-network-lock.ts): a second holder
// waits for the first's release, a lock whose owner died is taken over, and a held lock times out
// with the owner's PID in the message.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { lockPodNetwork } from '../sandbox/kubelet/pod-network-lock.ts';

const root = mkdtempSync(join(tmpdir(), 'etcdfn-lock-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('pod-network lock', () => {
  it('a second holder gets the lock only after the first releases it', async () => {
    const dir = join(root, 'a.lock');
    const release = await lockPodNetwork(5_000, dir);
    let second = false;
    const waiting = lockPodNetwork(5_000, dir).then(r => {
      second = true;
      return r;
    });
    await sleep(800);
    assert.equal(second, false, 'still held');
    release();
    const releaseSecond = await waiting;
    assert.equal(second, true);
    assert.ok(existsSync(dir));
    releaseSecond();
    assert.equal(existsSync(dir), false);
  });

  it('takes over a lock whose owner is gone', async () => {
    const dir = join(root, 'b.lock');
    mkdirSync(dir);
    writeFileSync(join(dir, 'pid'), '2147483646'); // no such process
    const release = await lockPodNetwork(3_000, dir);
    release();
  });

  it('gives up after its timeout, naming the holder', async () => {
    const dir = join(root, 'c.lock');
    const release = await lockPodNetwork(1_000, dir);
    await assert.rejects(lockPodNetwork(700, dir), new RegExp(`PID ${process.pid}\\) held`));
    release();
  });
});
