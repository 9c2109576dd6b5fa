// Two standalone processes with --leader-elect against a real API server: exactly one holds the
// Lease and delivers; when it dies (SIGKILL, no release) the other takes the Lease over once it
// expires and delivers from then on; the one that never led delivered nothing before it took over.
// Waits are on the Lease's holderIdentity and on deliveries, never on the clock.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Lease as LeaseType } from '../../standalone/leader.ts';

process.env.LOG_LEVEL ??= 'silent';
const { startApiServer } = await import('../support/api-server.ts');
const { KubeObjects } = await import('../../shared/k8s/objects.ts');
type Lease = LeaseType;

const ROOT = join(import.meta.dirname, '..', '..');
const WAIT_MS = 120_000;

async function until<T>(what: string, check: () => Promise<T | false> | T | false): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await check();
    if (value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 50));
  }
}

describe('standalone leader election (two processes)', () => {
  let api: Awaited<ReturnType<typeof startApiServer>>;
  const dir = mkdtempSync(join(tmpdir(), 'etcdfn-leader-'));
  const received: Record<string, string[]> = { a: [], b: [] };
  const sinks: Record<string, Server> = {};
  const children: Record<string, ChildProcess> = {};
  const output: Record<string, string> = { a: '', b: '' };

  before(async () => {
    api = await startApiServer();
    api.writeKubeconfig(join(dir, 'kubeconfig'));
    for (const id of ['a', 'b']) {
      sinks[id] = createServer((req, res) => {
        received[id].push(req.headers['ce-name'] as string);
        req.resume();
        req.on('end', () => res.writeHead(204).end());
      });
      await new Promise<void>(resolve => sinks[id].listen(0, '127.0.0.1', resolve));
    }
  });
  after(async () => {
    for (const child of Object.values(children)) if (child.exitCode === null) child.kill('SIGKILL');
    for (const sink of Object.values(sinks)) await new Promise(resolve => sink.close(resolve));
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (id: string) => {
    const address = sinks[id].address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(ROOT, 'standalone/main.ts'),
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--subscriber',
        `reconcile-member=http://127.0.0.1:${port}`,
        '--no-tick',
        '--leader-elect',
        '--lease-namespace',
        'default',
        '--lease-duration-seconds',
        '3',
        '--identity',
        id,
      ],
      { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.on('data', (chunk: Buffer) => (output[id] += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output[id] += chunk.toString()));
    children[id] = child;
  };

  it('one leader delivers; after it dies the other takes the Lease and delivers', async () => {
    const kube = new KubeObjects(api.kc);
    const holder = async () => {
      const read = await kube.get<Lease>({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        namespace: 'default',
        name: 'etcdfn-standalone',
      });
      return read.kind === 'found' ? (read.object.spec?.holderIdentity ?? '') : '';
    };
    const pod = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', labels: { 'etcdfn.io/cluster': 'demo' } },
      spec: { containers: [{ name: 'etcd', image: 'quay.io/coreos/etcd:v3.5.16' }] },
    });

    start('a');
    start('b');
    const leader = await until('a holder', async () => {
      const h = await holder();
      return h !== '' && h;
    });
    const standby = leader === 'a' ? 'b' : 'a';
    await until(`${leader}'s bridge`, () => output[leader].includes('event bridge started'));

    assert.equal((await kube.create(pod('before-failover'))).kind, 'created');
    await until(`before-failover at ${leader}`, () => received[leader].includes('before-failover'));

    children[leader].kill('SIGKILL');
    await until(`${standby} to take the Lease over`, async () => (await holder()) === standby);
    await until(`${standby}'s bridge`, () => output[standby].includes('event bridge started'));

    assert.equal((await kube.create(pod('after-failover'))).kind, 'created');
    await until(`after-failover at ${standby}`, () => received[standby].includes('after-failover'));

    // Evidence from after the events: the standby never delivered what happened while it stood by,
    // and the dead leader delivered nothing after it died.
    assert.ok(!received[standby].includes('before-failover'), received[standby].join());
    assert.ok(!received[leader].includes('after-failover'), received[leader].join());
    assert.doesNotMatch(output[standby].split('leading')[0] ?? '', /event bridge started/);
  });

  it('a leader that stops on SIGTERM releases the Lease, exits 0, and a new replica takes it', async () => {
    const kube = new KubeObjects(api.kc);
    const current = Object.entries(children).find(([, c]) => c.exitCode === null && c.signalCode === null);
    assert.ok(current, 'one process is still running');
    const [survivor] = current;
    const other = survivor === 'a' ? 'b' : 'a';
    output[other] = '';
    start(other);
    children[survivor].kill('SIGTERM');
    await until(`${survivor} to exit`, () => children[survivor].exitCode !== null && children[survivor]);
    assert.equal(children[survivor].exitCode, 0, output[survivor]);
    assert.match(output[survivor], /released the Lease/);
    const read = async () =>
      kube.get<Lease>({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        namespace: 'default',
        name: 'etcdfn-standalone',
      });
    await until(`${other} to hold the Lease`, async () => {
      const r = await read();
      return r.kind === 'found' && r.object.spec?.holderIdentity === other;
    });
  });
});
