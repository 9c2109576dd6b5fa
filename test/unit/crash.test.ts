import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { syncBuiltinESMExports } from 'node:module';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  CRASH_POINTS,
  FORCE_CRASH_POINTS,
  RESTORE_CRASH_POINTS,
  SPACE_CRASH_POINTS,
  DEFRAG_CRASH_POINTS,
  crashPoint,
  crashPointWith,
  type CrashPoint,
} from '../../shared/runtime/crash.ts';

const repoRoot = resolve(import.meta.dirname, '..', '..');
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'etcdfn-crash-'));
  dirs.push(dir);
  return dir;
};
after(() => dirs.forEach(dir => rmSync(dir, { recursive: true, force: true })));

/** A crash point whose "kill" only counts, and whose last words are kept. */
function harness(dir: string | undefined) {
  const kills: number[] = [];
  const said: string[] = [];
  const point = crashPointWith({ dir, kill: () => kills.push(1), say: line => said.push(line) });
  return { point, kills, said };
}

describe('crash points', () => {
  it('are off without a directory: nothing fires, nothing is touched', async () => {
    const { point, kills } = harness(undefined);
    for (const name of CRASH_POINTS) assert.equal(await point(name), false);
    assert.equal(kills.length, 0);
  });

  it('an empty directory setting is off too: a file of that name in the working directory is not armed', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'cluster:claimed'), '');
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const { point, kills } = harness('');
      assert.equal(await point('cluster:claimed'), false);
      assert.equal(kills.length, 0);
    } finally {
      process.chdir(cwd);
    }
    assert.ok(existsSync(join(dir, 'cluster:claimed')));
  });

  it('a point not armed does not fire', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'cluster:claimed'), '');
    const { point, kills } = harness(dir);
    assert.equal(await point('cluster:member-created'), false);
    assert.equal(kills.length, 0);
    assert.ok(existsSync(join(dir, 'cluster:claimed')), 'another armed point is left alone');
  });

  it('an armed point kills once, deletes its file and says which point it was', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'finalize:removed-from-etcd'), '');
    const { point, kills, said } = harness(dir);
    assert.equal(await point('finalize:removed-from-etcd'), true);
    assert.equal(kills.length, 1);
    assert.equal(existsSync(join(dir, 'finalize:removed-from-etcd')), false);
    assert.deepEqual(
      said.map(line => JSON.parse(line) as unknown),
      [{ level: 50, msg: 'crash point: killing the process', point: 'finalize:removed-from-etcd' }],
    );
    // Once only, also for the next process (a new harness stands for a restarted function).
    assert.equal(await point('finalize:removed-from-etcd'), false);
    assert.equal(await harness(dir).point('finalize:removed-from-etcd'), false);
    assert.equal(kills.length, 1);
  });

  it('of two invocations racing through an armed point, one fires', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'member:pod-created'), '');
    const { point, kills } = harness(dir);
    const fired = await Promise.all([point('member:pod-created'), point('member:pod-created')]);
    assert.deepEqual(fired.sort(), [false, true]);
    assert.equal(kills.length, 1);
  });

  it('every listed point is placed in the functions, and every point placed is listed', () => {
    const sources = readdirSync(join(repoRoot, 'shared', 'reconcile'))
      .filter(f => f.endsWith('.ts'))
      .map(f => readFileSync(join(repoRoot, 'shared', 'reconcile', f), 'utf8'))
      .join('\n');
    const used = [...sources.matchAll(/'((?:cluster|member|finalize):[a-z-]+)'/g)].map(m => m[1] ?? '');
    const listed: readonly string[] = [
      ...CRASH_POINTS,
      ...RESTORE_CRASH_POINTS,
      ...SPACE_CRASH_POINTS,
      ...FORCE_CRASH_POINTS,
      ...DEFRAG_CRASH_POINTS,
    ];
    for (const name of listed) assert.ok(used.includes(name), `${name} is never reached`);
    for (const name of used) assert.ok(listed.includes(name), `${name} unlisted`);
    assert.equal(new Set(CRASH_POINTS).size, CRASH_POINTS.length);
  });

  it('crashPoint is a no-op in this process (no ETCDFN_CRASH_DIR)', async () => {
    assert.equal(process.env.ETCDFN_CRASH_DIR, undefined);
    await crashPoint('cluster:claimed');
  });

  it('by default the last words go to stderr, written at once, and the process is sent SIGKILL', async () => {
    // In this process, with process.kill and fs.writeSync standing in (the child below really dies).
    const dir = tempDir();
    const signals: [number, string | number | undefined][] = [];
    const written: [number, string][] = [];
    const realKill = Object.getOwnPropertyDescriptor(process, 'kill');
    const realWrite = Object.getOwnPropertyDescriptor(fs, 'writeSync');
    process.kill = (pid: number, signal?: string | number) => {
      signals.push([pid, signal]);
      return true;
    };
    fs.writeSync = ((fd: number, text: string) => {
      written.push([fd, text]);
      return text.length;
    }) as typeof fs.writeSync;
    syncBuiltinESMExports();
    const before = process.env.ETCDFN_CRASH_DIR;
    try {
      writeFileSync(join(dir, 'cluster:promoted'), '');
      assert.equal(await crashPointWith({ dir })('cluster:promoted'), true);
      assert.deepEqual(signals, [[process.pid, 'SIGKILL']]);
      assert.equal(written.length, 1);
      assert.equal(written[0][0], 2);
      assert.match(written[0][1], /^\{.*"point":"cluster:promoted"\}\n$/);
      // crashPoint, armed through $ETCDFN_CRASH_DIR: it never returns (the kill takes effect at once).
      process.env.ETCDFN_CRASH_DIR = dir;
      writeFileSync(join(dir, 'cluster:leader-moved'), '');
      let returned = false;
      void crashPoint('cluster:leader-moved').then(() => (returned = true));
      await new Promise(resolve => setTimeout(resolve, 50));
      assert.equal(returned, false);
      assert.equal(signals.length, 2);
      assert.equal(existsSync(join(dir, 'cluster:leader-moved')), false);
      // Not armed: it returns, killing nothing.
      await crashPoint('cluster:leader-moved');
      assert.equal(signals.length, 2);
    } finally {
      if (realKill) Object.defineProperty(process, 'kill', realKill);
      if (realWrite) Object.defineProperty(fs, 'writeSync', realWrite);
      syncBuiltinESMExports();
      if (before === undefined) delete process.env.ETCDFN_CRASH_DIR;
      else process.env.ETCDFN_CRASH_DIR = before;
    }
  });

  it('crashPoint really SIGKILLs its process when armed, and only once', () => {
    const dir = tempDir();
    const name: CrashPoint = 'cluster:learner-added';
    const script = [
      `import { crashPoint } from ${JSON.stringify(join(repoRoot, 'shared', 'runtime', 'crash.ts'))};`,
      `await crashPoint(${JSON.stringify(name)});`,
      `console.log('survived');`,
    ].join('\n');
    const run = () =>
      spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: repoRoot,
        env: { ...process.env, ETCDFN_CRASH_DIR: dir },
        encoding: 'utf8',
        timeout: 60_000,
      });
    writeFileSync(join(dir, name), '');
    const crashed = run();
    assert.equal(crashed.signal, 'SIGKILL', crashed.stderr);
    assert.doesNotMatch(crashed.stdout, /survived/);
    assert.match(crashed.stderr, /cluster:learner-added/);
    assert.equal(existsSync(join(dir, name)), false);
    const again = run();
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stdout, /survived/);
  });
});
