// The sandbox's claims on their own (test/sandbox/kubelet/pvcs.ts, volumes.ts): a claim naming a
// StorageClass that does not exist stays Pending with a ProvisioningFailed Event, as a cluster with
// no provisioner for it does; a Pod using it is not scheduled (PodScheduled False, Unschedulable,
// the scheduler's message, no container statuses); once the class is created the claim binds and
// the Pod runs. Claims with no class, or '', bind at once as before. Disk faults on a claim: a
// small disk (ENOSPC past its size, what it held kept), a read-only file system (EROFS), released.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { startApiServer } from '../sandbox/apiserver/index.ts';
import type { ApiServer } from '../sandbox/apiserver/index.ts';
import { kubeConfigFor } from '../sandbox/kubeconfig.ts';
import { startKubelet } from '../sandbox/kubelet/index.ts';
import type { Kubelet } from '../sandbox/kubelet/index.ts';
import { DiskFaults } from '../sandbox/kubelet/disk-faults.ts';
import { waitFor } from '../sandbox/kubelet/wait.ts';

const NS = 'default';
const WAIT_MS = 60_000;

describe('sandbox: claims and StorageClasses', () => {
  let dir: string;
  let api: ApiServer;
  let kubelet: Kubelet;
  let core: CoreV1Api;
  let storage: StorageV1Api;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubelet-storage-'));
    api = await startApiServer({ port: 0, podGracefulDeletion: true });
    const kc = kubeConfigFor(api.url);
    kubelet = await startKubelet({ kc, dataDir: join(dir, 'kubelet') });
    core = kc.makeApiClient(CoreV1Api);
    storage = kc.makeApiClient(StorageV1Api);
  });
  after(async () => {
    await kubelet?.stop();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const claim = (name: string, storageClassName?: string) =>
    core.createNamespacedPersistentVolumeClaim({
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
  const phase = async (name: string) =>
    (await core.readNamespacedPersistentVolumeClaim({ name, namespace: NS })).status?.phase;

  it('claims with no class or "" bind at once', async () => {
    await claim('plain');
    await claim('static', '');
    await waitFor(
      'both bound',
      async () => (await phase('plain')) === 'Bound' && (await phase('static')) === 'Bound',
      WAIT_MS,
    );
  });

  it('a claim naming a missing class stays Pending, its Pod unscheduled; the class appearing binds it and the Pod runs', async () => {
    await claim('waiting', 'fast');
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'user' },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'sleep 30'] }],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'waiting' } }],
        },
      },
    });
    const event = await waitFor(
      'a ProvisioningFailed Event on the claim',
      async () =>
        (await core.listNamespacedEvent({ namespace: NS })).items.find(
          e => e.involvedObject.name === 'waiting' && e.reason === 'ProvisioningFailed',
        ),
      WAIT_MS,
    );
    assert.equal(event.message, 'storageclass.storage.k8s.io "fast" not found');
    assert.equal(event.type, 'Warning');
    const pod = await waitFor(
      'the Pod reported unscheduled',
      async () => {
        const p = await core.readNamespacedPod({ name: 'user', namespace: NS });
        return p.status?.conditions?.some(c => c.type === 'PodScheduled' && c.status === 'False')
          ? p
          : undefined;
      },
      WAIT_MS,
    );
    const scheduled = pod.status?.conditions?.find(c => c.type === 'PodScheduled');
    assert.equal(scheduled?.reason, 'Unschedulable');
    assert.equal(
      scheduled?.message,
      '0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims.',
    );
    assert.equal(pod.status?.phase, 'Pending');
    assert.equal(pod.status?.containerStatuses, undefined);
    assert.equal(await phase('waiting'), 'Pending');

    await storage.createStorageClass({ body: { metadata: { name: 'fast' }, provisioner: 'sandbox' } });
    await waitFor('the claim bound', async () => (await phase('waiting')) === 'Bound', WAIT_MS);
    await waitFor(
      'the Pod running',
      async () => {
        const p = await core.readNamespacedPod({ name: 'user', namespace: NS });
        const ok = p.status?.conditions?.find(c => c.type === 'PodScheduled')?.status === 'True';
        return ok && p.status?.phase === 'Running';
      },
      WAIT_MS,
    );
  });

  it('disk faults: a small disk refuses writes past its size and keeps what it held; a read-only one refuses all; release undoes both', async t => {
    if (!DiskFaults.supported()) {
      t.skip('this machine does not let the sandbox mount');
      return;
    }
    const { path } = await kubelet.faults.fillPvc({ claim: 'plain', bytes: 64 * 1024 });
    try {
      assert.ok(existsSync(path));
      writeFileSync(join(path, 'kept'), 'before');
      assert.throws(() => writeFileSync(join(path, 'big'), Buffer.alloc(256 * 1024)), /ENOSPC/);
      await kubelet.faults.releasePvc({ claim: 'plain' });
      assert.equal(readFileSync(join(path, 'kept'), 'utf8'), 'before', 'what the small disk held is kept');
      writeFileSync(join(path, 'big'), Buffer.alloc(256 * 1024));

      await kubelet.faults.readOnlyPvc({ claim: 'plain' });
      assert.throws(() => writeFileSync(join(path, 'more'), 'x'), /EROFS/);
      assert.equal(readFileSync(join(path, 'kept'), 'utf8'), 'before');
      await kubelet.faults.releasePvc({ claim: 'plain' });
      writeFileSync(join(path, 'more'), 'x');
    } finally {
      await kubelet.faults.releasePvc({ claim: 'plain' });
    }
  });
});
