// The disruption controller: keeps every PodDisruptionBudget's status true, as
// kube-controller-manager's does — expectedPods, currentHealthy, desiredHealthy,
// disruptionsAllowed, observedGeneration and the DisruptionAllowed condition (True/SufficientPods,
// False/InsufficientPods), computed by ../disruption.ts from the Pods the selector matches.
// A change of a Pod or a PDB re-syncs the PDBs of its namespace (bursts coalesced); the status is
// written through the status subresource (a merge patch carrying the resourceVersion read, so a
// stale view fails with a conflict and is retried) and only when it differs from the stored one.
// Eviction (../apiserver/eviction.ts) does not read this status: it computes the same figures
// at request time.
import type { Api } from './api.ts';
import { errorText, isConflict, isNotFound, mergePatch } from './api.ts';
import type { Informer } from './informer.ts';
import type { KObj, Logger, Pod } from './types.ts';
import { pdbStatus, pdbStatusChanged, type PdbLike } from '../disruption.ts';
import type { KObject } from '../apiserver/types.ts';

export type Pdb = KObj & PdbLike;

export class DisruptionController {
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private stopped = false;
  /** status writes done (for tests and logs) */
  writes = 0;

  private readonly api: Api;
  private readonly pdbs: Informer<Pdb>;
  private readonly pods: Informer<Pod>;
  private readonly log: Logger;
  private readonly now: () => string;
  constructor(
    api: Api,
    pdbs: Informer<Pdb>,
    pods: Informer<Pod>,
    log: Logger,
    now: () => string = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  ) {
    this.api = api;
    this.pdbs = pdbs;
    this.pods = pods;
    this.log = log;
    this.now = now;
    pdbs.on({ upsert: pdb => this.enqueue(namespaceOf(pdb)) });
    pods.on({
      upsert: (pod, old) => {
        // Only what the budget reads: labels, phase, readiness, deletion.
        if (!old || relevant(pod) !== relevant(old)) this.enqueue(namespaceOf(pod));
      },
      deleted: pod => this.enqueue(namespaceOf(pod)),
    });
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Re-syncs the PDBs of a namespace soon (coalesced; one sync at a time). */
  enqueue(namespace: string): void {
    this.pending.add(namespace);
    this.schedule(10);
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.running || this.stopped || this.pending.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // Wait for both caches: a status computed from a partial Pod list would be wrong.
      if (!this.pdbs.hasSynced || !this.pods.hasSynced) return this.schedule(100);
      const namespaces = [...this.pending];
      this.pending.clear();
      this.running = true;
      void Promise.all(namespaces.map(ns => this.syncNamespace(ns))).finally(() => {
        this.running = false;
        this.schedule(10);
      });
    }, delayMs);
  }

  private async syncNamespace(namespace: string): Promise<void> {
    const pods = this.pods.list().filter(p => p.metadata.namespace === namespace);
    const pdbs = this.pdbs.list().filter(p => p.metadata.namespace === namespace);
    await Promise.all(pdbs.map(pdb => this.syncPdb(pdb, pods)));
  }

  private async syncPdb(pdb: Pdb, pods: Pod[]): Promise<void> {
    if (pdb.metadata.deletionTimestamp) return;
    const namespace = namespaceOf(pdb);
    const name = pdb.metadata.name;
    let status;
    try {
      status = pdbStatus(pdb, pods as unknown as KObject[], this.now());
    } catch (err) {
      this.log(`pdb ${namespace}/${name}: ${(err as Error).message}`);
      return;
    }
    if (!pdbStatusChanged(pdb, status)) return;
    try {
      await this.api.policy.patchNamespacedPodDisruptionBudgetStatus(
        { name, namespace, body: { metadata: { resourceVersion: pdb.metadata.resourceVersion }, status } },
        mergePatch,
      );
      this.writes++;
    } catch (err) {
      if (isNotFound(err)) return;
      // A conflict: the watch brings the newer PDB, which re-syncs; retry anyway in case it came first.
      if (!isConflict(err)) this.log(`pdb ${namespace}/${name}: status write failed: ${errorText(err)}`);
      setTimeout(() => this.enqueue(namespace), 500);
    }
  }
}

function namespaceOf(obj: KObj): string {
  return obj.metadata.namespace ?? 'default';
}

function relevant(pod: Pod): string {
  const ready = pod.status?.conditions?.find(c => c.type === 'Ready')?.status;
  return JSON.stringify([
    pod.metadata.labels ?? {},
    pod.metadata.deletionTimestamp ?? '',
    pod.status?.phase ?? '',
    ready ?? '',
  ]);
}
