// PersistentVolumeClaims: every claim is bound at once (status.phase Bound, capacity = requested
// storage, whatever its storageClassName) and backed by a directory <dataDir>/pvcs/<ns>/<name>-<uid>
// that outlives Pods. When the claim is deleted (the API server's pvc-protection keeps it while a
// Pod uses it) the directory is removed.
import { mkdirSync, rmSync } from 'node:fs';
import type { Api } from './api.ts';
import { errorText, isNotFound, mergePatch } from './api.ts';
import type { Informer } from './informer.ts';
import type { Logger, Pod, Pvc } from './types.ts';
import { pvcDir } from './volumes.ts';

export class PvcController {
  private readonly pendingRemoval = new Map<string, Pvc>();

  private readonly api: Api;
  private readonly pods: Informer<Pod>;
  private readonly dataDir: string;
  private readonly log: Logger;
  constructor(api: Api, pvcs: Informer<Pvc>, pods: Informer<Pod>, dataDir: string, log: Logger) {
    this.api = api;
    this.pods = pods;
    this.dataDir = dataDir;
    this.log = log;
    pvcs.on({ upsert: pvc => void this.bind(pvc), deleted: pvc => this.remove(pvc) });
    pods.on({ deleted: () => this.retryRemovals(), upsert: () => this.retryRemovals() });
  }

  stop(): void {
    this.pendingRemoval.clear();
  }

  private async bind(pvc: Pvc): Promise<void> {
    if (pvc.metadata.deletionTimestamp || pvc.status?.phase === 'Bound') return;
    mkdirSync(pvcDir(this.dataDir, pvc), { recursive: true });
    const storage = pvc.spec?.resources?.requests?.storage;
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
