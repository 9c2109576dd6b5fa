// The process kubelet re-projects a running Pod's Secret volumes when the Secret changes, as the
// real kubelet does: atomically (a reader in another process never sees a torn or half-written
// file), while a subPath mount keeps the content its container started with, and a Secret that
// disappears leaves the last content in place.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';
import { startNode } from '../support/node.ts';
import { VOLUMES_ANNOTATION } from '../sandbox/kubelet/index.ts';
import type { Kubelet } from '../sandbox/kubelet/index.ts';
import { isReady, readPod, sleep, waitFor, waitForPod } from '../sandbox/kubelet/wait.ts';

const NS = 'default';
const SIZE = 256 * 1024;
const REFRESH_MS = 200;

/** A file of SIZE bytes all equal to the version's digit: a torn read shows two digits or a short length. */
function big(version: number): string {
  return Buffer.alloc(SIZE, String(version)).toString('base64');
}

// Runs in the Pod as a separate process: reads the big file as fast as it can and reports what it saw.
const READER = `
const { readFileSync, writeFileSync, renameSync } = require('node:fs');
const seen = new Set(); let reads = 0; let torn = 0; const pinned = new Set(); const small = new Set();
setInterval(() => {
  writeFileSync('/out/report.tmp', JSON.stringify({ reads, torn, seen: [...seen], pinned: [...pinned], small: [...small] }));
  renameSync('/out/report.tmp', '/out/report.json');
}, 50);
(function loop() {
  for (let i = 0; i < 50; i++) {
    const b = readFileSync('/creds/big');
    reads++;
    const v = String.fromCharCode(b[0]);
    if (!b.equals(Buffer.alloc(${SIZE}, v))) torn++;
    else seen.add(v);
  }
  pinned.add(readFileSync('/pinned-small', 'utf8'));
  small.add(readFileSync('/creds/small', 'utf8'));
  setImmediate(loop);
})();
`;

interface Report {
  reads: number;
  torn: number;
  seen: string[];
  pinned: string[];
  small: string[];
}

describe('kubelet: Secret volumes are refreshed while the Pod runs', () => {
  let dir: string;
  let api: TestApiServer;
  let kubelet: Kubelet;
  let core: CoreV1Api;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubelet-refresh-'));
    mkdirSync(join(dir, 'out'));
    api = await startApiServer();
    const kc = api.kc;
    kubelet = await startNode(api, { dataDir: join(dir, 'kubelet'), volumeRefreshMs: REFRESH_MS });
    core = kc.makeApiClient(CoreV1Api);
  });

  after(async () => {
    await kubelet?.stop();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const report = (): Report | undefined => {
    const file = join(dir, 'out', 'report.json');
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Report) : undefined;
  };

  const putSecret = async (version: number): Promise<void> => {
    const body = {
      metadata: { name: 'creds' },
      data: { big: big(version), small: Buffer.from(`v${version}`).toString('base64') },
    };
    if (version === 1) await core.createNamespacedSecret({ namespace: NS, body });
    else await core.replaceNamespacedSecret({ name: 'creds', namespace: NS, body });
  };

  it('swaps new content in atomically, leaves subPath mounts alone and keeps content of a deleted Secret', async () => {
    await putSecret(1);
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'reader' },
        spec: {
          terminationGracePeriodSeconds: 1,
          volumes: [
            { name: 'creds', secret: { secretName: 'creds', defaultMode: 0o440 } },
            { name: 'out', hostPath: { path: join(dir, 'out') } },
          ],
          containers: [
            {
              name: 'main',
              image: 'busybox:1.36',
              command: [process.execPath, '-e', READER],
              volumeMounts: [
                { name: 'creds', mountPath: '/creds' },
                { name: 'creds', mountPath: '/pinned-small', subPath: 'small' },
                { name: 'out', mountPath: '/out' },
              ],
            },
          ],
        },
      },
    });
    const pod = await waitForPod(core, `${NS}/reader`, 'to run', p => isReady(p));
    const volumeDir = (
      JSON.parse(pod.metadata!.annotations![VOLUMES_ANNOTATION]) as Record<string, { hostPath: string }>
    ).creds.hostPath;
    await waitFor('the reader to see version 1', () => report()?.seen.includes('1'), 60_000);

    for (let version = 2; version <= 5; version++) {
      await putSecret(version);
      await waitFor(
        `the reader to see version ${version}`,
        () => report()?.seen.includes(String(version)),
        60_000,
      );
    }
    const seen = await waitFor('a report after version 5', () => {
      const r = report();
      return r?.small.includes('v5') ? r : undefined;
    });
    assert.equal(seen.torn, 0, `torn reads: ${JSON.stringify(seen)}`);
    assert.ok(seen.reads > 100, `the reader kept reading (${seen.reads} reads)`);
    assert.deepEqual(seen.pinned, ['v1'], 'a subPath mount keeps the content its container started with');
    assert.equal(statSync(join(volumeDir, 'big')).mode & 0o777, 0o440, 'defaultMode survives a refresh');

    // Deleting the Secret leaves the files as they were (the real kubelet logs and keeps them).
    await core.deleteNamespacedSecret({ name: 'creds', namespace: NS });
    await sleep(REFRESH_MS * 5);
    assert.equal(readFileSync(join(volumeDir, 'small'), 'utf8'), 'v5');
    assert.ok(isReady(await readPod(core, NS, 'reader')));
  });
});
