// Volume expansion after the API server let a bound claim grow (its PersistentVolumeClaimResize
// admission: only a class with allowVolumeExpansion), as the external-resizer and the kubelet report
// it for a CSI driver that expands online:
//   1. condition Resizing (the controller expands the volume; the PersistentVolume's capacity grows);
//   2. condition FileSystemResizePending ("Waiting for user to (re-)start a pod ..."): the volume
//      is larger, the file system not yet; it stays so while no Pod uses the claim;
//   3. once a running Pod uses the claim, the kubelet grows the file system online: the conditions
//      go and status.capacity.storage becomes the requested size. No Pod restarts.
// The claim's directory has no size limit here, so only the status moves. Each step waits
// `stepMs` so the conditions can be seen.
import { setTimeout as sleep } from 'node:timers/promises';
import { compareQuantities, parseQuantity } from '../../../shared/quantity.ts';
import type { Api } from './api.ts';
import { errorText, isNotFound, mergePatch } from './api.ts';
import type { Informer } from './informer.ts';
import type { Logger, Pod, Pvc } from './types.ts';

export const FS_RESIZE_PENDING_MESSAGE =
  'Waiting for user to (re-)start a pod to finish file system resize of volume on node.';

/** The claim wants more than it has: bound, not being deleted, requests.storage > capacity.storage. */
export function needsResize(pvc: Pvc): boolean {
  if (pvc.metadata.deletionTimestamp || pvc.status?.phase !== 'Bound') return false;
  const want = pvc.spec?.resources?.requests?.storage;
  const have = pvc.status?.capacity?.storage;
  if (want === undefined || have === undefined) return false;
  try {
    return compareQuantities(parseQuantity(String(want)), parseQuantity(String(have))) > 0;
  } catch {
    return false;
  }
}

export class PvcResizeController {
  private readonly busy = new Set<string>();
  private stopped = false;
  /** Status writes so far: a pass that wrote something looks again at what arrived meanwhile. */
  private writes = 0;
  private readonly api: Api;
  private readonly pvcs: Informer<Pvc>;
  private readonly pods: Informer<Pod>;
  private readonly log: Logger;
  private readonly stepMs: number;

  constructor(api: Api, informers: { pvcs: Informer<Pvc>; pods: Informer<Pod> }, log: Logger, stepMs = 200) {
    this.api = api;
    this.pvcs = informers.pvcs;
    this.pods = informers.pods;
    this.log = log;
    this.stepMs = stepMs;
    this.pvcs.on({ upsert: pvc => void this.resize(pvc) });
    this.pods.on({
      upsert: pod => {
        for (const v of pod.spec.volumes ?? []) {
          const claim = v.persistentVolumeClaim?.claimName;
          const pvc = claim ? this.pvcs.get(pod.metadata.namespace, claim) : undefined;
          if (pvc) void this.resize(pvc);
        }
      },
    });
  }

  stop(): void {
    this.stopped = true;
  }

  /** A running Pod has the claim mounted (the kubelet can grow the file system online). */
  private mounted(pvc: Pvc): boolean {
    return this.pods
      .list()
      .some(
        pod =>
          pod.metadata.namespace === pvc.metadata.namespace &&
          !pod.metadata.deletionTimestamp &&
          pod.status?.phase === 'Running' &&
          (pod.spec.volumes ?? []).some(v => v.persistentVolumeClaim?.claimName === pvc.metadata.name),
      );
  }

  private async resize(seen: Pvc): Promise<void> {
    const key = seen.metadata.uid;
    if (this.stopped || !needsResize(seen) || this.busy.has(key)) return;
    this.busy.add(key);
    const before = this.writes;
    try {
      const types = new Set((seen.status?.conditions ?? []).map(c => c.type));
      if (!types.has('FileSystemResizePending')) {
        if (!types.has('Resizing')) {
          await this.patch(seen, { conditions: [condition('Resizing')] });
          await sleep(this.stepMs);
        }
        // The controller half done: the volume itself is larger (the PersistentVolume says so).
        await this.growVolume(seen);
        await this.patch(seen, {
          allocatedResources: { storage: String(seen.spec?.resources?.requests?.storage) },
          conditions: [condition('FileSystemResizePending', FS_RESIZE_PENDING_MESSAGE)],
        });
        await sleep(this.stepMs);
      }
      const current = this.pvcs.get(seen.metadata.namespace, seen.metadata.name) ?? seen;
      if (this.stopped || !needsResize(current) || !this.mounted(current)) return;
      const storage = String(current.spec?.resources?.requests?.storage);
      await this.patch(current, { capacity: { storage }, conditions: null });
    } finally {
      this.busy.delete(key);
    }
    // Whatever arrived while this one ran (a Pod starting, a larger request) gets its turn.
    const latest = this.pvcs.get(seen.metadata.namespace, seen.metadata.name);
    if (this.writes !== before && latest) void this.resize(latest);
  }

  private async growVolume(pvc: Pvc): Promise<void> {
    const name = pvc.spec?.volumeName;
    if (!name) return;
    try {
      await this.api.core.patchPersistentVolume(
        { name, body: { spec: { capacity: { storage: String(pvc.spec?.resources?.requests?.storage) } } } },
        mergePatch,
      );
    } catch (err) {
      if (!isNotFound(err)) this.log(`pv ${name}: resize: ${errorText(err)}`);
    }
  }

  private async patch(pvc: Pvc, status: Record<string, unknown>): Promise<void> {
    this.writes++;
    try {
      await this.api.core.patchNamespacedPersistentVolumeClaimStatus(
        { name: pvc.metadata.name, namespace: pvc.metadata.namespace!, body: { status } },
        mergePatch,
      );
    } catch (err) {
      if (!isNotFound(err))
        this.log(`pvc ${pvc.metadata.namespace}/${pvc.metadata.name}: resize: ${errorText(err)}`);
    }
  }
}

function condition(type: string, message?: string): Record<string, unknown> {
  return {
    type,
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    ...(message && { message }),
  };
}
