// The sandbox's claims on a real control plane: our provisioner (test/sandbox/kubelet/pvcs.ts,
// provisioner.ts) makes the volumes kube-controller-manager's persistent-volume controller hands to
// it, and the controller binds them. A claim with no class gets the default class and binds; one
// with '' waits for a volume made by hand (no dynamic provisioning) and binds to it. A claim naming
// a StorageClass that does not exist stays Pending with the controller's ProvisioningFailed Event;
// a Pod using it is not scheduled (PodScheduled False, Unschedulable, the scheduler's message, no
// container statuses); once the class is created the claim binds and the Pod runs. Disk faults on a
// claim: a small disk (ENOSPC past its size, what it held kept), a read-only file system (EROFS),
// released.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';
import { startNode } from '../support/node.ts';
import type { Kubelet } from '../sandbox/kubelet/index.ts';
import { DiskFaults } from '../sandbox/kubelet/disk-faults.ts';
import { waitFor } from '../sandbox/kubelet/wait.ts';

const NS = 'default';
const WAIT_MS = 60_000;

describe('sandbox: claims and StorageClasses', () => {
  let dir: string;
  let api: TestApiServer;
  let kubelet: Kubelet;
  let core: CoreV1Api;
  let storage: StorageV1Api;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubelet-storage-'));
    api = await startApiServer();
    const kc = api.kc;
    kubelet = await startNode(api, { dataDir: join(dir, 'kubelet') });
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

  it('a claim with no class gets the default class and is provisioned; one with "" waits for a volume made by hand', async () => {
    await claim('plain');
    await claim('static', '');
    await waitFor('the default-class claim bound', async () => (await phase('plain')) === 'Bound', WAIT_MS);
    const plain = await core.readNamespacedPersistentVolumeClaim({ name: 'plain', namespace: NS });
    assert.equal(plain.spec?.storageClassName, 'standard', 'the DefaultStorageClass admission names it');
    // "" asks for no dynamic provisioning: the persistent-volume controller says so and waits.
    const event = await waitFor(
      'a FailedBinding Event on the "" claim',
      async () =>
        (await core.listNamespacedEvent({ namespace: NS })).items.find(
          e => e.involvedObject.name === 'static' && e.reason === 'FailedBinding',
        ),
      WAIT_MS,
    );
    assert.equal(event.message, 'no persistent volumes available for this claim and no storage class is set');
    assert.equal(await phase('static'), 'Pending');
    await core.createPersistentVolume({
      body: {
        metadata: { name: 'by-hand' },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          storageClassName: '',
          persistentVolumeReclaimPolicy: 'Retain',
          hostPath: { path: join(dir, 'by-hand') },
        },
      },
    });
    await waitFor('the "" claim bound to it', async () => (await phase('static')) === 'Bound', WAIT_MS);
    const bound = await core.readNamespacedPersistentVolumeClaim({ name: 'static', namespace: NS });
    assert.equal(bound.spec?.volumeName, 'by-hand');
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
