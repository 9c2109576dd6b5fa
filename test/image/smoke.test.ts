// Smoke test of the built image (scripts/build-image.sh runs it): each function, started from the
// image with `buildah run --isolation chroot` on a loopback port, answers the PingSource tick fixture
// 2xx against a real API server (an empty cluster: the tick finds nothing to do, honestly) and a
// malformed CloudEvent 400 with a message. One function also runs with the image's root filesystem
// mounted read-only, as the numeric non-root user, and answers. The CLI answers from the image too.
//   ETCDFN_IMAGE=localhost/etcdfn:0.1.0 ETCDFN_BUILDAH_STORE=.cache/buildah \
//     node --import tsx --test test/image/smoke.test.ts
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FUNCTION_NAMES } from '../../functions/registry.ts';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';
import { loadEventFixture, wireBody, type EventFixture } from '../support/fixtures.ts';

const repoRoot = resolve(import.meta.dirname, '..', '..');
const image = process.env.ETCDFN_IMAGE ?? 'localhost/etcdfn:0.1.0';
const store = resolve(process.env.ETCDFN_BUILDAH_STORE ?? join(repoRoot, '.cache', 'buildah'));
const BUILDAH = [
  '--root',
  join(store, 'storage'),
  '--runroot',
  join(store, 'run'),
  '--storage-driver',
  'vfs',
];
const buildah = (...args: string[]) =>
  execFileSync('buildah', [...BUILDAH, ...args], { encoding: 'utf8' }).trim();

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>(ok => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise(ok => server.close(ok));
  return port;
}

/** Waits for the function's one "serving" line on stdout; rejects if it exits first. */
function serving(child: ChildProcess): Promise<string> {
  return new Promise((ok, fail) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const url = /"url":"([^"]+)"/.exec(out)?.[1];
      if (url) ok(url);
    });
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', code => fail(new Error(`exited ${code} before serving: ${err.slice(-2000)}`)));
    // Generous: a loaded machine starts it in seconds; this only keeps a hung start from hanging CI.
    setTimeout(() => fail(new Error(`not serving after 120 s: ${err.slice(-2000)}`)), 120_000).unref();
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise(ok => child.once('exit', ok));
  child.kill('SIGTERM');
  await exited;
}

async function post(
  url: string,
  fixture: EventFixture,
): Promise<{ status: number; text: string; body: Record<string, unknown> }> {
  const res = await fetch(url, { method: 'POST', headers: fixture.headers, body: wireBody(fixture) });
  const text = await res.text();
  return { status: res.status, text, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

describe(`image ${image}`, () => {
  let api: TestApiServer;
  let dir: string;
  let container: string;
  const tick = loadEventFixture('tick.json');
  const malformed = loadEventFixture('malformed-missing-id.json');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'etcdfn-image-'));
    api = await startApiServer();
    mkdirSync(join(dir, 'config'));
    api.writeKubeconfig(join(dir, 'config', 'kubeconfig'));
    // The control plane writes it 0600 for root; the image's processes run as 65532, as in a Pod.
    chownSync(join(dir, 'config', 'kubeconfig'), 65532, 65532);
    container = buildah('from', '--quiet', image);
  });
  after(async () => {
    if (container) buildah('rm', container);
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts one function from the image with buildah run, on a loopback port of the host. */
  async function runFunction(name: string): Promise<{ child: ChildProcess; url: string }> {
    const port = await freePort();
    const child = spawn(
      'buildah',
      [
        ...BUILDAH,
        'run',
        '--isolation',
        'chroot',
        '--network',
        'host',
        '--volume',
        `${join(dir, 'config')}:/config:ro`,
        '--env',
        `FUNCTION_TARGET=${name}`,
        '--env',
        `PORT=${port}`,
        '--env',
        'HOST=127.0.0.1',
        '--env',
        'KUBECONFIG=/config/kubeconfig',
        '--env',
        'LOG_LEVEL=warn',
        container,
        '--',
        '/usr/local/bin/node',
        '/app/dist/functions/serve.js',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      return { child, url: await serving(child) };
    } catch (err) {
      await stop(child);
      throw err;
    }
  }

  for (const name of FUNCTION_NAMES) {
    it(`${name} answers the tick 2xx and a malformed event 400`, async () => {
      const { child, url } = await runFunction(name);
      try {
        const ok = await post(url, tick);
        assert.ok(
          ok.status >= 200 && ok.status < 300,
          `${name} answered ${ok.status}: ${JSON.stringify(ok.body)}`,
        );
        assert.equal(ok.text, '', `${name}: a handled event is answered with no body`);
        const bad = await post(url, malformed);
        assert.equal(bad.status, 400, JSON.stringify(bad.body));
        assert.match(String(bad.body.error), /id/);
      } finally {
        await stop(child);
      }
    });
  }

  it('runs as user 65532 from a read-only root filesystem', async () => {
    const rootfs = buildah('mount', container);
    const port = await freePort();
    // A private mount namespace: the image's root bound read-only, then chroot into it as 65532.
    const script = [
      'set -e',
      `mnt=$(mktemp -d)`,
      `mount --bind "${rootfs}" "$mnt"`,
      'mount -o remount,bind,ro "$mnt"',
      `exec chroot --userspec=65532:65532 "$mnt" /usr/local/bin/node -e "$0"`,
    ].join('\n');
    // /tmp is world-writable in the image: only a read-only filesystem refuses the write (EROFS).
    const probe = [
      "const fs = require('node:fs');",
      "let tmp = 'written'; try { fs.writeFileSync('/tmp/probe', 'x'); } catch (e) { tmp = e.code; }",
      'console.log(JSON.stringify({ uid: process.getuid(), tmp }));',
      `process.env.FUNCTION_TARGET = 'reconcile-cluster'; process.env.PORT = '${port}';`,
      "process.env.HOST = '127.0.0.1';",
      "import('/app/dist/functions/serve.js');",
    ].join(' ');
    const child = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script, probe], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LOG_LEVEL: 'warn' },
    });
    let first = '';
    child.stdout.once('data', (d: Buffer) => (first = d.toString()));
    try {
      const url = await serving(child);
      assert.deepEqual(JSON.parse(first.split('\n')[0] ?? ''), { uid: 65532, tmp: 'EROFS' });
      const bad = await post(url, malformed);
      assert.equal(bad.status, 400, JSON.stringify(bad.body));
    } finally {
      await stop(child);
      buildah('umount', container);
    }
  });

  it('runs the CLI', () => {
    const out = buildah(
      'run',
      '--isolation',
      'chroot',
      container,
      '--',
      '/usr/local/bin/node',
      '/app/dist/cli/main.js',
      '--help',
    );
    assert.match(out, /Usage: kubectl etcdfn/);
  });

  it('runs the standalone bridge', () => {
    const out = buildah(
      'run',
      '--isolation',
      'chroot',
      container,
      '--',
      '/usr/local/bin/node',
      '/app/dist/standalone/main.js',
      '--help',
    );
    assert.match(out, /Usage: etcdfn-standalone/);
  });
});
