// Standalone mode as a process: the CLI watches a real API server through a kubeconfig file,
// delivers a Pod event to the --subscriber URL, and stops cleanly on SIGTERM.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

process.env.LOG_LEVEL ??= 'silent';
const { startApiServer } = await import('../support/api-server.ts');
const { KubeObjects } = await import('../../shared/k8s/objects.ts');

const ROOT = join(import.meta.dirname, '..', '..');

describe('standalone CLI', () => {
  let api: Awaited<ReturnType<typeof startApiServer>>;
  const dir = mkdtempSync(join(tmpdir(), 'etcdfn-standalone-'));
  const received: { type?: string; name?: string }[] = [];
  const sink = createServer((req, res) => {
    received.push({ type: req.headers['ce-type'] as string, name: req.headers['ce-name'] as string });
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });

  before(async () => {
    api = await startApiServer();
    api.writeKubeconfig(join(dir, 'kubeconfig'));
    await new Promise<void>(resolve => sink.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await new Promise(resolve => sink.close(resolve));
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers to --subscriber and exits 0 on SIGTERM', async () => {
    const address = sink.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(ROOT, 'standalone/main.ts'),
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--subscriber',
        `reconcile-member=${url}`,
        '--no-tick',
      ],
      { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(child, 'exit');
    try {
      // A generous bound on the waits below (on a loaded machine the bridge may take a while to start).
      const deadline = Date.now() + 120_000;
      while (!output.includes('event bridge started')) {
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`bridge did not start:\n${output}`);
        await new Promise(resolve => setTimeout(resolve, 50));
      }
      const kube = new KubeObjects(api.kc);
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'standalone-0', namespace: 'default', labels: { 'etcdfn.io/cluster': 'demo' } },
        spec: { containers: [{ name: 'etcd', image: 'quay.io/coreos/etcd:v3.5.16' }] },
      };
      assert.equal((await kube.create(pod)).kind, 'created');
      while (!received.some(r => r.name === 'standalone-0')) {
        if (Date.now() > deadline) throw new Error(`no event delivered:\n${output}`);
        await new Promise(resolve => setTimeout(resolve, 20));
      }
      assert.deepEqual(received[0], { type: 'dev.knative.apiserver.ref.add', name: 'standalone-0' });
      child.kill('SIGTERM');
      const [code] = await exited;
      assert.equal(code, 0, output);
      assert.match(output, /stopping the event bridge/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
