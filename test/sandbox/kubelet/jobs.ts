// A minimal Job controller: one Pod at a time per Job (completions and parallelism are treated as
// 1), created from the template with the Job's labels and a controller ownerReference. A Pod that
// Succeeded completes the Job (conditions SuccessCriteriaMet + Complete, completionTime); a Pod
// that Failed counts in status.failed and is replaced after a back-off until failed > backoffLimit
// (default 6), when the Job fails (FailureTarget + Failed, reason BackoffLimitExceeded). Also
// activeDeadlineSeconds (DeadlineExceeded) and ttlSecondsAfterFinished. Deleting a Job deletes its
// Pods through the API server's garbage collector (ownerReferences).
import type { V1Pod } from '@kubernetes/client-node';
import type { Api } from './api.ts';
import { errorText, isNotFound, mergePatch } from './api.ts';
import type { BackoffConfig } from './container.ts';
import type { Informer } from './informer.ts';
import { podReady } from './endpoints.ts';
import type { Job, JobConditionJson, Logger, Pod } from './types.ts';
import { nowIso } from './types.ts';
import { sameJson } from './util.ts';

export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';

function finished(job: Job): 'Complete' | 'Failed' | undefined {
  for (const c of job.status?.conditions ?? []) {
    if ((c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') return c.type;
  }
  return undefined;
}

export class JobController {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly creating = new Set<string>();
  private stopped = false;

  private readonly api: Api;
  private readonly jobs: Informer<Job>;
  private readonly pods: Informer<Pod>;
  private readonly backoff: BackoffConfig;
  private readonly log: Logger;
  constructor(api: Api, jobs: Informer<Job>, pods: Informer<Pod>, backoff: BackoffConfig, log: Logger) {
    this.api = api;
    this.jobs = jobs;
    this.pods = pods;
    this.backoff = backoff;
    this.log = log;
    jobs.on({ upsert: job => this.enqueue(job, 0) });
    const byPod = (pod: Pod): void => {
      const owner = pod.metadata.ownerReferences?.find(o => o.kind === 'Job' && o.controller);
      const job = owner ? this.jobs.get(pod.metadata.namespace, owner.name) : undefined;
      if (job && job.metadata.uid === owner?.uid) this.enqueue(job, 0);
    };
    pods.on({ upsert: byPod, deleted: byPod });
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private enqueue(job: Job, delayMs: number): void {
    if (this.stopped) return;
    const key = `${job.metadata.namespace}/${job.metadata.name}`;
    const existing = this.timers.get(key);
    if (existing && delayMs > 0) return;
    if (existing) clearTimeout(existing);
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        const current = this.jobs.get(job.metadata.namespace, job.metadata.name);
        if (current) void this.sync(current).catch(err => this.log(`job ${key}: ${errorText(err)}`));
      }, delayMs || 10),
    );
  }

  private podsOf(job: Job): Pod[] {
    return this.pods
      .list()
      .filter(
        p =>
          p.metadata.namespace === job.metadata.namespace &&
          p.metadata.ownerReferences?.some(o => o.uid === job.metadata.uid && o.controller),
      );
  }

  private async sync(job: Job): Promise<void> {
    if (job.metadata.deletionTimestamp) return;
    const done = finished(job);
    if (done) return this.scheduleTtl(job);
    const pods = this.podsOf(job);
    const succeeded = pods.filter(p => p.status?.phase === 'Succeeded').length;
    const failed = pods.filter(p => p.status?.phase === 'Failed').length;
    const active = pods.filter(
      p => !['Succeeded', 'Failed'].includes(p.status?.phase ?? '') && !p.metadata.deletionTimestamp,
    );
    const status = { ...(job.status ?? {}) };
    status.startTime ??= nowIso();
    status.active = active.length;
    status.ready = active.filter(podReady).length;
    status.succeeded = succeeded;
    status.failed = failed;
    const conditions = [...(status.conditions ?? [])];
    const backoffLimit = job.spec.backoffLimit ?? 6;
    const deadline = job.spec.activeDeadlineSeconds;
    const now = nowIso();
    const cond = (type: string, reason?: string, message?: string): JobConditionJson => ({
      type,
      status: 'True',
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
      lastProbeTime: now,
      lastTransitionTime: now,
    });
    if (succeeded > 0) {
      conditions.push(
        cond('SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods'),
      );
      conditions.push(cond('Complete', 'CompletionsReached', 'Reached expected number of succeeded pods'));
      status.completionTime = now;
    } else if (failed > backoffLimit) {
      conditions.push(
        cond('FailureTarget', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
      );
      conditions.push(cond('Failed', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'));
    } else if (deadline !== undefined && Date.parse(status.startTime) + deadline * 1000 <= Date.now()) {
      conditions.push(
        cond('FailureTarget', 'DeadlineExceeded', 'Job was active longer than specified deadline'),
      );
      conditions.push(cond('Failed', 'DeadlineExceeded', 'Job was active longer than specified deadline'));
    }
    status.conditions = conditions;
    const terminal = conditions.length > (job.status?.conditions ?? []).length;
    if (terminal) {
      await Promise.all(active.map(p => this.deletePod(p)));
      status.active = 0;
      status.ready = 0;
    } else if (active.length === 0 && !job.spec.suspend) {
      await this.maybeCreatePod(job, failed);
    }
    if (deadline !== undefined && !terminal) {
      this.enqueue(job, Math.max(10, Date.parse(status.startTime) + deadline * 1000 - Date.now()));
    }
    if (!sameJson(status, job.status ?? {})) await this.writeStatus(job, status);
  }

  private async maybeCreatePod(job: Job, failed: number): Promise<void> {
    const key = job.metadata.uid;
    // A Pod was just created and the informer may not show it yet: look again once the guard is
    // down (a Pod that failed within that window would otherwise never be replaced).
    if (this.creating.has(key)) return this.enqueue(job, 400);
    const lastFailure = this.podsOf(job)
      .map(
        p =>
          p.status?.containerStatuses?.[0]?.state.terminated?.finishedAt ??
          p.metadata.creationTimestamp ??
          '',
      )
      .sort()
      .pop();
    const delay = failed === 0 ? 0 : Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** (failed - 1));
    const wait = lastFailure ? Date.parse(lastFailure) + delay - Date.now() : 0;
    if (wait > 0) return this.enqueue(job, wait);
    this.creating.add(key);
    try {
      await this.api.core.createNamespacedPod({ namespace: job.metadata.namespace!, body: this.podFor(job) });
    } catch (err) {
      this.log(`job ${job.metadata.namespace}/${job.metadata.name}: cannot create pod: ${errorText(err)}`);
      this.enqueue(job, 1000);
    } finally {
      // Keep the guard until the informer has seen the new Pod (or a retry is due).
      setTimeout(() => this.creating.delete(key), 300);
    }
  }

  private podFor(job: Job): V1Pod {
    const template = job.spec.template;
    const labels = {
      ...(template.metadata?.labels ?? {}),
      [JOB_NAME_LABEL]: job.metadata.name,
      'job-name': job.metadata.name,
      [CONTROLLER_UID_LABEL]: job.metadata.uid,
      'controller-uid': job.metadata.uid,
    };
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: `${job.metadata.name}-`,
        namespace: job.metadata.namespace,
        labels,
        annotations: template.metadata?.annotations,
        ownerReferences: [
          {
            apiVersion: 'batch/v1',
            kind: 'Job',
            name: job.metadata.name,
            uid: job.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: template.spec,
    };
  }

  private async deletePod(pod: Pod): Promise<void> {
    try {
      await this.api.core.deleteNamespacedPod({
        name: pod.metadata.name,
        namespace: pod.metadata.namespace!,
      });
    } catch (err) {
      if (!isNotFound(err)) this.log(`job pod ${pod.metadata.name}: delete failed: ${errorText(err)}`);
    }
  }

  private async writeStatus(job: Job, status: NonNullable<Job['status']>): Promise<void> {
    try {
      await this.api.batch.patchNamespacedJobStatus(
        { name: job.metadata.name, namespace: job.metadata.namespace!, body: { status } },
        mergePatch,
      );
    } catch (err) {
      if (!isNotFound(err)) {
        this.log(
          `job ${job.metadata.namespace}/${job.metadata.name}: status write failed: ${errorText(err)}`,
        );
        this.enqueue(job, 500);
      }
    }
  }

  private scheduleTtl(job: Job): void {
    const ttl = job.spec.ttlSecondsAfterFinished;
    if (ttl === undefined) return;
    const finishedAt = Date.parse(
      job.status?.completionTime ?? job.status?.conditions?.at(-1)?.lastTransitionTime ?? '',
    );
    const wait = (Number.isNaN(finishedAt) ? Date.now() : finishedAt) + ttl * 1000 - Date.now();
    if (wait > 0) return this.enqueue(job, wait);
    void this.api.batch
      .deleteNamespacedJob({
        name: job.metadata.name,
        namespace: job.metadata.namespace!,
        propagationPolicy: 'Background',
      })
      .catch(err => {
        if (!isNotFound(err)) this.log(`job ${job.metadata.name}: ttl delete failed: ${errorText(err)}`);
      });
  }
}
