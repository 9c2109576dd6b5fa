// PersistentVolumeClaims, the node's side: the provisioner (provisioner.ts) makes a volume for a
// claim kube-controller-manager hands to it, and a bound claim is backed by a directory
// <dataDir>/pvcs/<ns>/<name>-<uid> that outlives Pods. When the claim is deleted (pvc-protection
// keeps it while a Pod uses it) its PersistentVolume and the directory are removed.
import { mkdirSync, rmSync } from 'node:fs';
import type { Api } from './api.ts';
import { errorText, isConflict } from './api.ts';
import type { Informer } from './informer.ts';
import type { KObj, Logger, Pod, Pvc } from './types.ts';
import { pvcDir } from './volumes.ts';
import { SELECTED_NODE_ANNOTATION, WAIT_FOR_FIRST_CONSUMER } from './placement.ts';
import { persistentVolumeFor, volumeNameFor } from './provisioner.ts';

export class PvcController {
  private readonly pendingRemoval = new Map<string, Pvc>();

  private readonly api: Api;
  private readonly pods: Informer<Pod>;
  private readonly dataDir: string;
  private readonly log: Logger;
  private readonly pvcs: Informer<Pvc>;
  private readonly classes: Informer<KObj>;
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

  stop(): void {
    this.pendingRemoval.clear();
  }

  /**
   * Provisions the claim's volume once kube-controller-manager's persistent-volume controller has
   * handed it to a provisioner; the controller binds the claim to it (or reports why it cannot).
   */
  private async bind(pvc: Pvc): Promise<void> {
    if (pvc.metadata.deletionTimestamp || pvc.status?.phase === 'Bound' || pvc.spec?.volumeName) return;
    if (this.waitsForConsumer(pvc)) return;
    const node = pvc.metadata.annotations?.[SELECTED_NODE_ANNOTATION];
    const volume = persistentVolumeFor(pvc, node);
    if (!volume) return;
    mkdirSync(pvcDir(this.dataDir, pvc), { recursive: true });
    try {
      await this.api.core.createPersistentVolume({ body: volume });
    } catch (err) {
      if (!isConflict(err))
        this.log(
          `pvc ${pvc.metadata.namespace}/${pvc.metadata.name}: provisioning failed: ${errorText(err)}`,
        );
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
    // The external provisioner's part of reclaimPolicy Delete: the volume goes with its claim.
    if (pvc.spec?.volumeName === volumeNameFor(pvc))
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
