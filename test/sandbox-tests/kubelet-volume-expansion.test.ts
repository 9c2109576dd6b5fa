// Volume expansion on a real control plane with our node (../sandbox/kubelet/pvc-resize.ts, the CSI
// resizer and the kubelet's file-system resize): a claim with no class gets the default class
// `standard` (allowVolumeExpansion: true); growing a bound claim of that class goes through
// Resizing, FileSystemResizePending, then capacity = the new size once a running Pod uses it
// (online, no restart); a class without allowVolumeExpansion, or '' (bound to a volume made by
// hand), is refused with the admission plugin's 403; shrinking is refused with validation's 422.
// The persistent-volume controller's own condition (Unused) is left out of what is compared.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ApiException,
  CoreV1Api,
  PatchStrategy,
  StorageV1Api,
  Watch,
  setHeaderOptions,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';
import { startNode } from '../support/node.ts';
import type { Kubelet } from '../sandbox/kubelet/index.ts';
import { FS_RESIZE_PENDING_MESSAGE } from '../sandbox/kubelet/pvc-resize.ts';
import { waitFor } from '../sandbox/kubelet/wait.ts';

const NS = 'default';
const WAIT_MS = 30_000;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

describe('sandbox: volume expansion', () => {
  let dir: string;
  let api: TestApiServer;
  let kubelet: Kubelet;
  let core: CoreV1Api;
  let storage: StorageV1Api;
  let watch: Watch;
  const stops: (() => void)[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubelet-expand-'));
    api = await startApiServer();
    const kc = api.kc;
    kubelet = await startNode(api, { dataDir: join(dir, 'kubelet') });
    core = kc.makeApiClient(CoreV1Api);
    storage = kc.makeApiClient(StorageV1Api);
    watch = new Watch(kc);
    await storage.createStorageClass({ body: { metadata: { name: 'fixed' }, provisioner: 'sandbox' } });
  });
  after(async () => {
    for (const stop of stops) stop();
    await kubelet?.stop();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const claim = async (name: string, storageClassName?: string) => {
    if (storageClassName === '') {
      // No dynamic provisioning for '': a volume made by hand, which the controller binds.
      await core.createPersistentVolume({
        body: {
          metadata: { name: `${name}-by-hand` },
          spec: {
            capacity: { storage: '1Gi' },
            accessModes: ['ReadWriteOnce'],
            storageClassName: '',
            persistentVolumeReclaimPolicy: 'Retain',
            hostPath: { path: join(dir, name) },
          },
        },
      });
    }
    await core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: {
        metadata: { name },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
          ...(storageClassName !== undefined && { storageClassName }),
        },
      },
    });
    return waitFor('bound', async () => (await read(name)).status?.phase === 'Bound', WAIT_MS);
  };
  const read = (name: string) => core.readNamespacedPersistentVolumeClaim({ name, namespace: NS });
  const grow = (name: string, size: string) =>
    core.patchNamespacedPersistentVolumeClaim(
      { name, namespace: NS, body: { spec: { resources: { requests: { storage: size } } } } },
      merge,
    );
  const refusal = async (name: string, size: string) => {
    try {
      await grow(name, size);
    } catch (err) {
      assert.ok(err instanceof ApiException);
      const body = JSON.parse(String(err.body)) as { code: number; reason: string; message: string };
      return body;
    }
    assert.fail(`growing ${name} to ${size} was accepted`);
  };
  /** The claim's resize conditions (not the persistent-volume controller's Unused). */
  const resizeConditions = (pvc: V1PersistentVolumeClaim): string[] =>
    (pvc.status?.conditions ?? []).map(c => c.type).filter(t => t !== 'Unused');
  /** Every resize condition type the claim goes through, in order (from a watch). */
  const record = async (name: string) => {
    const seen: string[] = [];
    const req = await watch.watch(
      `/api/v1/namespaces/${NS}/persistentvolumeclaims`,
      { fieldSelector: `metadata.name=${name}` },
      (_type, obj: V1PersistentVolumeClaim) => {
        const types = resizeConditions(obj).join('+') || 'none';
        if (seen.at(-1) !== types) seen.push(types);
      },
      () => undefined,
    );
    stops.push(() => req.abort());
    return seen;
  };
  const runPod = async (name: string, claimName: string) => {
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'sleep 60'] }],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
        },
      },
    });
    await waitFor(
      `${name} running`,
      async () => (await core.readNamespacedPod({ name, namespace: NS })).status?.phase === 'Running',
      WAIT_MS,
    );
  };

  it('a claim with no class gets the default class standard, which allows expansion', async () => {
    const sc = await storage.readStorageClass({ name: 'standard' });
    assert.equal(sc.allowVolumeExpansion, true);
    assert.equal(sc.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'], 'true');
    await claim('plain');
    assert.equal((await read('plain')).spec?.storageClassName, 'standard');
    await claim('static', '');
    assert.equal((await read('static')).spec?.storageClassName, '');
  });

  it('growing a claim a running Pod uses: Resizing, FileSystemResizePending, then capacity is the new size', async () => {
    await claim('used');
    await runPod('user', 'used');
    const seen = await record('used');
    await grow('used', '2Gi');
    const done = await waitFor(
      'capacity 2Gi',
      async () => {
        const pvc = await read('used');
        return pvc.status?.capacity?.storage === '2Gi' ? pvc : undefined;
      },
      WAIT_MS,
    );
    assert.equal(done.spec?.resources?.requests?.storage, '2Gi');
    assert.deepEqual(resizeConditions(done), []);
    await waitFor('the watch saw the end', async () => seen.at(-1) === 'none', WAIT_MS);
    assert.deepEqual(
      seen.filter(s => s !== 'none'),
      ['Resizing', 'FileSystemResizePending'],
    );
    const pod = await core.readNamespacedPod({ name: 'user', namespace: NS });
    assert.equal(pod.status?.containerStatuses?.[0]?.restartCount, 0, 'no restart');
  });

  it('a claim no Pod uses stays FileSystemResizePending at its old capacity until a Pod mounts it', async () => {
    await claim('idle');
    await grow('idle', '3Gi');
    const pending = await waitFor(
      'FileSystemResizePending',
      async () => {
        const pvc = await read('idle');
        return pvc.status?.conditions?.find(c => c.type === 'FileSystemResizePending');
      },
      WAIT_MS,
    );
    assert.equal(pending.message, FS_RESIZE_PENDING_MESSAGE);
    await new Promise(resolve => setTimeout(resolve, 600));
    assert.equal((await read('idle')).status?.capacity?.storage, '1Gi');
    await runPod('late', 'idle');
    await waitFor(
      'capacity 3Gi',
      async () => (await read('idle')).status?.capacity?.storage === '3Gi',
      WAIT_MS,
    );
  });

  it('a class without allowVolumeExpansion, or no class (""), refuses growth with the admission plugin\'s words', async () => {
    await claim('fixed-claim', 'fixed');
    const refused = await refusal('fixed-claim', '2Gi');
    assert.equal(refused.code, 403, refused.message);
    assert.equal(refused.reason, 'Forbidden');
    assert.equal(
      refused.message,
      'persistentvolumeclaims "fixed-claim" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
    );
    assert.equal((await read('fixed-claim')).spec?.resources?.requests?.storage, '1Gi');
    const none = await refusal('static', '2Gi');
    assert.equal(none.code, 403, none.message);
  });

  it('shrinking is refused by validation', async () => {
    const refused = await refusal('plain', '512Mi');
    assert.equal(refused.code, 422);
    assert.equal(
      refused.message,
      'PersistentVolumeClaim "plain" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity',
    );
    // The same size written again is no change at all.
    await grow('plain', '1Gi');
  });
});
