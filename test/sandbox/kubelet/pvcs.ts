// PersistentVolumeClaims: a claim is bound at once (status.phase Bound, capacity = requested
// storage) when it names no storageClassName, or '' (as if the cluster had a default class and
// static volumes), or a StorageClass that exists; a claim naming a class that does not exist stays
// Pending with a ProvisioningFailed Event, as with no provisioner, and binds when the class appears.
// A claim of a class with volumeBindingMode WaitForFirstConsumer (a local volume) stays Pending,
// with the controller's WaitForFirstConsumer Event, until the scheduler pins it to the node of its
// first Pod (annotation volume.kubernetes.io/selected-node, scheduler.ts), then binds to a new
// PersistentVolume pvc-<uid> with node affinity to that node (kubernetes.io/hostname), as
// local-path-provisioner makes them; the volume is deleted with its claim (reclaimPolicy Delete).
// A bound claim is backed by a directory <dataDir>/pvcs/<ns>/<name>-<uid> that outlives Pods. When
// the claim is deleted (the API server's pvc-protection keeps it while a Pod uses it) the directory
// is removed.
import { mkdirSync, rmSync } from 'node:fs';
import type { Api } from './api.ts';
import { errorText, isConflict, isNotFound, mergePatch } from './api.ts';
import type { Informer } from './informer.ts';
import type { KObj, Logger, Pod, Pvc } from './types.ts';
import { pvcDir } from './volumes.ts';
import { SELECTED_NODE_ANNOTATION, WAIT_FOR_FIRST_CONSUMER } from './placement.ts';

export class PvcController {
  private readonly pendingRemoval = new Map<string, Pvc>();

  private readonly api: Api;
  private readonly pods: Informer<Pod>;
  private readonly dataDir: string;
  private readonly log: Logger;
  private readonly pvcs: Informer<Pvc>;
  private readonly classes: Informer<KObj>;
  private readonly reported = new Set<string>();
  constructor(
    api: Api,
    informers: { pvcs: Informer<Pvc>; pods: Informer<Pod>; classes: Informer<KObj> },
    dataDir: string,
    log: Logger,
  ) {
    const { pvcs, pods, classes } = informers;
    this.api = api;
    this.pods = pods;
    this.pvcs = pvcs;
    this.classes = classes;
    this.dataDir = dataDir;
    this.log = log;
    pvcs.on({ upsert: pvc => void this.bind(pvc), deleted: pvc => this.remove(pvc) });
    pods.on({ deleted: () => this.retryRemovals(), upsert: () => this.retryRemovals() });
    classes.on({ upsert: () => this.pvcs.list().forEach(pvc => void this.bind(pvc)) });
  }

  /** The class a claim waits for, when it names one that does not exist. */
  private missingClass(pvc: Pvc): string | undefined {
    const name = pvc.spec?.storageClassName;
    if (!name) return undefined;
    return this.classes.get(undefined, name) ? undefined : name;
  }

  stop(): void {
    this.pendingRemoval.clear();
  }

  private async bind(pvc: Pvc): Promise<void> {
    if (pvc.metadata.deletionTimestamp || pvc.status?.phase === 'Bound') return;
    const missing = this.missingClass(pvc);
    if (missing) {
      await this.reportPending(
        pvc,
        'ProvisioningFailed',
        `storageclass.storage.k8s.io "${missing}" not found`,
      );
      return;
    }
    if (this.waitsForConsumer(pvc)) {
      await this.reportPending(
        pvc,
        'WaitForFirstConsumer',
        'waiting for first consumer to be created before binding',
        'Normal',
      );
      return;
    }
    mkdirSync(pvcDir(this.dataDir, pvc), { recursive: true });
    const storage = pvc.spec?.resources?.requests?.storage;
    const node = pvc.metadata.annotations?.[SELECTED_NODE_ANNOTATION];
    if (node && !(await this.provisionLocal(pvc, node))) return;
    const status = {
      phase: 'Bound',
      accessModes: pvc.spec?.accessModes ?? ['ReadWriteOnce'],
      capacity: storage !== undefined ? { storage: String(storage) } : {},
    };
    try {
      await this.api.core.patchNamespacedPersistentVolumeClaimStatus(
        { name: pvc.metadata.name, namespace: pvc.metadata.namespace!, body: { status } },
        mergePatch,
      );
    } catch (err) {
      if (!isNotFound(err))
        this.log(`pvc ${pvc.metadata.namespace}/${pvc.metadata.name}: bind failed: ${errorText(err)}`);
    }
  }

  /**
   * The node-local PersistentVolume of a claim pinned to `node`, and the claim's spec.volumeName;
   * false when the claim cannot be bound now (logged).
   */
  private async provisionLocal(pvc: Pvc, node: string): Promise<boolean> {
    const ns = pvc.metadata.namespace!;
    const name = `pvc-${pvc.metadata.uid}`;
    const body = {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': 'sandbox.etcdfn.io/local' } },
      spec: {
        capacity: { storage: String(pvc.spec?.resources?.requests?.storage ?? '1Gi') },
        accessModes: pvc.spec?.accessModes ?? ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: pvc.spec?.storageClassName ?? '',
        volumeMode: 'Filesystem',
        claimRef: {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          namespace: ns,
          name: pvc.metadata.name,
          uid: pvc.metadata.uid,
        },
        hostPath: { path: pvcDir(this.dataDir, pvc), type: 'DirectoryOrCreate' },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
            ],
          },
        },
      },
    };
    try {
      await this.api.core.createPersistentVolume({ body }).catch((err: unknown) => {
        if (!isConflict(err)) throw err;
      });
      await this.api.core.patchPersistentVolumeStatus(
        { name, body: { status: { phase: 'Bound' } } },
        mergePatch,
      );
      if (pvc.spec?.volumeName !== name)
        await this.api.core.patchNamespacedPersistentVolumeClaim(
          { name: pvc.metadata.name, namespace: ns, body: { spec: { volumeName: name } } },
          mergePatch,
        );
      return true;
    } catch (err) {
      if (!isNotFound(err))
        this.log(`pvc ${ns}/${pvc.metadata.name}: provisioning failed: ${errorText(err)}`);
      return false;
    }
  }

  /** A claim of a WaitForFirstConsumer class that no scheduler has pinned to a node yet. */
  private waitsForConsumer(pvc: Pvc): boolean {
    const cls = this.classes.get(undefined, pvc.spec?.storageClassName ?? '') as
      { volumeBindingMode?: string } | undefined;
    return (
      cls?.volumeBindingMode === WAIT_FOR_FIRST_CONSUMER &&
      !pvc.metadata.annotations?.[SELECTED_NODE_ANNOTATION]
    );
  }

  private async reportPending(
    pvc: Pvc,
    reason: string,
    message: string,
    type: 'Warning' | 'Normal' = 'Warning',
  ): Promise<void> {
    const key = `${pvc.metadata.uid}/${reason}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    const ns = pvc.metadata.namespace!;
    try {
      await this.api.core.patchNamespacedPersistentVolumeClaimStatus(
        { name: pvc.metadata.name, namespace: ns, body: { status: { phase: 'Pending' } } },
        mergePatch,
      );
      await this.api.core.createNamespacedEvent({
        namespace: ns,
        body: {
          metadata: { generateName: `${pvc.metadata.name}.`, namespace: ns },
          involvedObject: {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            name: pvc.metadata.name,
            namespace: ns,
            uid: pvc.metadata.uid,
          },
          reason,
          message,
          type,
          source: { component: 'persistentvolume-controller' },
          count: 1,
          firstTimestamp: new Date(),
          lastTimestamp: new Date(),
        },
      });
    } catch (err) {
      if (!isNotFound(err)) this.log(`pvc ${ns}/${pvc.metadata.name}: ${errorText(err)}`);
    }
  }

  private inUse(pvc: Pvc): boolean {
    return this.pods
      .list()
      .some(
        pod =>
          pod.metadata.namespace === pvc.metadata.namespace &&
          !['Succeeded', 'Failed'].includes(pod.status?.phase ?? '') &&
          (pod.spec.volumes ?? []).some(v => v.persistentVolumeClaim?.claimName === pvc.metadata.name),
      );
  }

  private remove(pvc: Pvc): void {
    if (pvc.spec?.volumeName === `pvc-${pvc.metadata.uid}`)
      this.api.core.deletePersistentVolume({ name: pvc.spec.volumeName }).catch(() => undefined);
    if (this.inUse(pvc)) {
      // Without pvc-protection a claim can vanish under a running Pod: keep the data until it stops.
      this.pendingRemoval.set(pvc.metadata.uid, pvc);
      return;
    }
    rmSync(pvcDir(this.dataDir, pvc), { recursive: true, force: true });
  }

  private retryRemovals(): void {
    for (const [uid, pvc] of this.pendingRemoval) {
      if (this.inUse(pvc)) continue;
      this.pendingRemoval.delete(uid);
      rmSync(pvcDir(this.dataDir, pvc), { recursive: true, force: true });
    }
  }
}
