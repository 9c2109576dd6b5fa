// The real functions, over HTTP through the functions framework, answering every CloudEvent
// fixture against the sandbox API server: valid events are handled (2xx, here mostly "the object
// is gone" since the API server is empty), malformed ones are refused with 400 and a message.
// Also `npm run invoke`, the same path from the command line.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import request from 'supertest';
import type { Server } from 'node:http';
import { FUNCTION_NAMES, loadFunction, type FunctionName } from '../../functions/registry.ts';
import { functionServer } from '../../shared/runtime/function-server.ts';
import { startApiServer, type ApiServer } from '../sandbox/apiserver/index.ts';
import { writeKubeconfig } from '../sandbox/kubeconfig.ts';
import { loadEventFixtures, wireBody } from '../support/fixtures.ts';

const repoRoot = resolve(import.meta.dirname, '..', '..');
const run = promisify(execFile);

describe('functions answer every fixture', () => {
  let api: ApiServer;
  let dir: string;
  let kubeconfig: string;
  const servers = new Map<FunctionName, Server>();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'etcdfn-fixtures-'));
    api = await startApiServer({ port: 0, crdDir: join(repoRoot, 'crds') });
    kubeconfig = join(dir, 'kubeconfig');
    writeKubeconfig(kubeconfig, api.url);
    // The functions build their context on first use, from $KUBECONFIG.
    process.env.KUBECONFIG = kubeconfig;
    process.env.LOG_LEVEL = 'silent';
    for (const name of FUNCTION_NAMES) {
      if (await loadFunction(name)) servers.set(name, functionServer(name));
    }
  });
  after(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const fixture of loadEventFixtures()) {
    it(`${fixture.file} → ${fixture.expect.status >= 400 ? fixture.expect.status : '2xx'} from every function`, async () => {
      assert.ok(servers.size >= 3, 'the lifecycle functions are built');
      for (const [name, server] of servers) {
        const res = await request(server).post('/').set(fixture.headers).send(wireBody(fixture));
        if (fixture.expect.status >= 400) {
          assert.equal(res.status, fixture.expect.status, `${name}: ${res.text}`);
          assert.ok(typeof res.body.error === 'string' && res.body.error.length > 0, `${name} says why`);
        } else {
          assert.ok(res.status >= 200 && res.status < 300, `${name} answered ${res.status}: ${res.text}`);
          assert.equal(res.body.result, 'done');
        }
      }
    });
  }

  it('npm run invoke runs one function once on a fixture and prints its answer', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        join(repoRoot, 'functions', 'invoke.ts'),
        'reconcile-cluster',
        'cluster-ref-update',
        '--kubeconfig',
        kubeconfig,
      ],
      { cwd: repoRoot, env: { ...process.env, LOG_LEVEL: 'silent' } },
    );
    assert.match(stdout, /reconcile-cluster answered 200/);
    assert.match(stdout, /EtcdCluster default\/demo is gone/);
  });
});
