// The body limit of the function endpoints, through the real program (functions/serve.ts) over real
// HTTP: a body over the limit (64 KiB by default, ETCDFN_MAX_EVENT_BYTES to change it) is answered 413
// whether its length is declared or it comes chunked, a compressed body 415, and the server's
// resident memory stays flat while 50 MB bodies are thrown at it; afterwards it still answers.
// Every server a case starts is stopped in an `after` hook, even one a failed case left running (a
// server that should have refused to start but did), so a regression fails instead of hanging.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';

const repoRoot = resolve(import.meta.dirname, '..', '..');
const MiB = 1024 * 1024;

interface Served {
  child: ChildProcess;
  url: string;
}

/** Every server process started by this file and not yet exited. */
const children = new Set<ChildProcess>();
const STOP_GRACE_MS = 5_000;

function serve(env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, 'functions', 'serve.ts'), 'reconcile-cluster', '--port', '0'],
    {
      cwd: repoRoot,
      // No API server: nothing here gets as far as reading one.
      env: { ...process.env, LOG_LEVEL: 'silent', KUBECONFIG: '/nonexistent', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.add(child);
  child.once('exit', () => children.delete(child));
  return new Promise((done, fail) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find(l => l.startsWith('{"serving"'));
      if (line) done({ child, url: (JSON.parse(line) as { url: string }).url });
    });
    child.once('exit', code => fail(new Error(`serve.ts exited with ${code}: ${out}`)));
  });
}

/** SIGTERM, then SIGKILL if the process is still there after a grace period; resolves once it exited. */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise(done => {
    const kill = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    child.once('exit', () => {
      clearTimeout(kill);
      done();
    });
    child.kill('SIGTERM');
  });
}

const stop = (served: Served | undefined): Promise<void> =>
  served ? stopChild(served.child) : Promise.resolve();

// Whatever a case left running (top level: runs after every describe block of the file).
after(() => Promise.all([...children].map(stopChild)));
// And if this process dies before its hooks run, no server outlives it.
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find(l => l.startsWith('VmRSS:'));
  assert.ok(line, 'VmRSS in /proc');
  return Number(line.split(/\s+/)[1]) * 1024;
}

interface Reply {
  status: number;
  body: string;
}

/**
 * POSTs `total` bytes in 1 MiB chunks (declaring the length, or chunked), stopping as soon as the
 * server answers (a 413 comes before the body is sent whole); resolves with the answer.
 */
function post(
  url: string,
  total: number,
  { declare, headers = {} }: { declare: boolean; headers?: Record<string, string> },
): Promise<Reply> {
  return new Promise((done, fail) => {
    let answered = false;
    const req = request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/cloudevents+json',
        ...(declare ? { 'content-length': String(total) } : {}),
        ...headers,
      },
    });
    req.on('response', res => {
      answered = true;
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        req.destroy(); // the rest of the body will never be sent
        done({ status: res.statusCode ?? 0, body });
      });
      res.on('error', fail);
    });
    req.on('error', err => {
      if (!answered) fail(err);
    });
    const chunk = Buffer.alloc(MiB, 'a');
    let sent = 0;
    const pump = () => {
      while (!answered && sent < total) {
        const piece = chunk.subarray(0, Math.min(MiB, total - sent));
        sent += piece.length;
        if (!req.write(piece)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    pump();
  });
}

async function send(url: string, body: string | Buffer, headers: Record<string, string>): Promise<Reply> {
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, body: await res.text() };
}

/** A structured CloudEvent of an unsupported type, padded to about `bytes`: read, parsed, refused 400. */
function paddedEvent(bytes: number): string {
  const event = { specversion: '1.0', id: 'pad-1', source: 'test', type: 'com.example.unknown', pad: '' };
  event.pad = 'x'.repeat(bytes - JSON.stringify(event).length);
  return JSON.stringify(event);
}

describe('function endpoints refuse large bodies', { timeout: 180_000 }, () => {
  let served: Served | undefined;
  before(async () => {
    served = await serve();
  });
  after(() => stop(served));

  it('answers a body just under 64 KiB: it is read and the event decoded', async () => {
    const body = paddedEvent(64 * 1024 - 16);
    const res = await send(served!.url, body, { 'content-type': 'application/cloudevents+json' });
    assert.equal(res.status, 400, res.body);
    assert.match(JSON.parse(res.body).error, /unsupported event type "com\.example\.unknown"/);
  });

  it('answers 413 to a body over 64 KiB with a declared length', async () => {
    const res = await send(served!.url, paddedEvent(64 * 1024 + 16), {
      'content-type': 'application/cloudevents+json',
    });
    assert.equal(res.status, 413, res.body);
    assert.match(JSON.parse(res.body).error, /request body larger than 65536 bytes/);
  });

  it('answers 413 to a chunked body once it passes 64 KiB', async () => {
    const res = await post(served!.url, 4 * MiB, { declare: false });
    assert.equal(res.status, 413, res.body);
  });

  it('answers 415 to a compressed body (a small gzip can inflate to gigabytes)', async () => {
    const res = await send(served!.url, gzipSync(paddedEvent(1024)), {
      'content-type': 'application/cloudevents+json',
      'content-encoding': 'gzip',
    });
    assert.equal(res.status, 415, res.body);
  });

  it('keeps its resident memory flat under 50 MB bodies, and still answers afterwards', async t => {
    const pid = served!.child.pid!;
    // Warm up the paths under test before the baseline.
    await post(served!.url, 2 * MiB, { declare: true });
    await post(served!.url, 2 * MiB, { declare: false });
    const before = rssBytes(pid);
    const statuses: number[] = [];
    let peak = before;
    for (let i = 0; i < 3; i++) {
      for (const declare of [true, false]) {
        statuses.push((await post(served!.url, 50 * MiB, { declare })).status);
        peak = Math.max(peak, rssBytes(pid));
      }
    }
    assert.deepEqual(statuses, [413, 413, 413, 413, 413, 413]);
    const growthMiB = (peak - before) / MiB;
    t.diagnostic(`RSS ${(before / MiB).toFixed(0)} MiB before, peak +${growthMiB.toFixed(1)} MiB`);
    // Buffering one of those bodies would add 50 MiB or more (the issue saw +268 MiB for one 50 MB
    // body); dropped chunks still wait for the GC, so allow some growth.
    assert.ok(
      growthMiB < 32,
      `RSS grew by ${growthMiB.toFixed(1)} MiB (from ${(before / MiB).toFixed(0)} MiB)`,
    );
    const probe = await fetch(served!.url);
    assert.equal(probe.status, 200);
    assert.equal(((await probe.json()) as { ready: boolean }).ready, true);
    const small = await send(served!.url, paddedEvent(512), {
      'content-type': 'application/cloudevents+json',
    });
    assert.equal(small.status, 400);
  });
});

describe('ETCDFN_MAX_EVENT_BYTES sets the limit', { timeout: 60_000 }, () => {
  let served: Served | undefined;
  before(async () => {
    served = await serve({ ETCDFN_MAX_EVENT_BYTES: '2048' });
  });
  after(() => stop(served));

  it('refuses 4 KiB and reads 1 KiB', async () => {
    const headers = { 'content-type': 'application/cloudevents+json' };
    assert.equal((await send(served!.url, paddedEvent(4096), headers)).status, 413);
    assert.equal((await send(served!.url, paddedEvent(1024), headers)).status, 400);
  });

  it('refuses to start with a limit that is not a number', async () => {
    await assert.rejects(serve({ ETCDFN_MAX_EVENT_BYTES: 'lots' }), /exited with 1/);
  });
});
