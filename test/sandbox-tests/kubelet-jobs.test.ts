// The sandbox's Job controller on its own (test/sandbox/kubelet/jobs.ts), with an in-process API
// server and kubelet: a Pod per attempt, failures counted against backoffLimit, the terminal
// conditions a real Job controller writes, ttlSecondsAfterFinished, and Pods going with their Job.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { V1Job } from '@kubernetes/client-node';
import { startApiServer } from '../sandbox/apiserver/index.ts';
import type { ApiServer } from '../sandbox/apiserver/index.ts';
import { kubeConfigFor } from '../sandbox/kubeconfig.ts';
import { startKubelet } from '../sandbox/kubelet/index.ts';
import type { Kubelet } from '../sandbox/kubelet/index.ts';
import { statusCode } from '../sandbox/kubelet/api.ts';
import { waitFor } from '../sandbox/kubelet/wait.ts';

const NS = 'default';
const WAIT_MS = 120_000;

function job(name: string, script: string, spec: Partial<V1Job['spec']> = {}): V1Job {
  return {
    metadata: { name, labels: { app: name } },
    spec: {
      template: {
        metadata: { labels: { app: name } },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', script] }],
        },
      },
      ...spec,
    },
  };
}

describe('sandbox: Job controller', () => {
  let dir: string;
  let api: ApiServer;
  let kubelet: Kubelet;
  let core: CoreV1Api;
  let batch: BatchV1Api;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubelet-jobs-'));
    api = await startApiServer({ port: 0, podGracefulDeletion: true });
    const kc = kubeConfigFor(api.url);
    kubelet = await startKubelet({
      kc,
      dataDir: join(dir, 'kubelet'),
      backoff: { initialMs: 200, maxMs: 400 },
    });
    core = kc.makeApiClient(CoreV1Api);
    batch = kc.makeApiClient(BatchV1Api);
  });

  after(async () => {
    await kubelet?.stop();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const podsOf = async (name: string) =>
    (await core.listNamespacedPod({ namespace: NS, labelSelector: `batch.kubernetes.io/job-name=${name}` }))
      .items;
  const finished = (name: string, type: 'Complete' | 'Failed') =>
    waitFor(
      `Job ${name} ${type}`,
      async () => {
        const j = await batch.readNamespacedJob({ name, namespace: NS });
        return j.status?.conditions?.some(c => c.type === type && c.status === 'True') ? j : undefined;
      },
      WAIT_MS,
    );

  it('fails a Job after backoffLimit + 1 failed Pods, one Pod per attempt, with BackoffLimitExceeded', async () => {
    await batch.createNamespacedJob({ namespace: NS, body: job('fails', 'exit 3', { backoffLimit: 1 }) });
    const failed = await finished('fails', 'Failed');
    assert.equal(failed.status?.failed, 2);
    assert.equal(failed.status?.succeeded ?? 0, 0);
    assert.equal(failed.status?.active ?? 0, 0);
    const cond = failed.status?.conditions?.find(c => c.type === 'Failed');
    assert.equal(cond?.reason, 'BackoffLimitExceeded');
    assert.ok(failed.status?.conditions?.some(c => c.type === 'FailureTarget' && c.status === 'True'));
    assert.ok(!failed.status?.conditions?.some(c => c.type === 'Complete'));
    const pods = await podsOf('fails');
    assert.equal(pods.length, 2, 'one Pod per attempt, none after the limit');
    for (const p of pods) {
      assert.equal(p.status?.phase, 'Failed');
      assert.equal(p.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 3);
      const owner = p.metadata?.ownerReferences?.[0];
      assert.equal(owner?.kind, 'Job');
      assert.equal(owner?.uid, failed.metadata?.uid);
      assert.equal(owner?.controller, true);
      assert.equal(p.metadata?.labels?.app, 'fails', 'the template labels are kept');
    }
  });

  it('retries a failed Pod with a new Pod and completes when one succeeds (failed and succeeded counted)', async () => {
    const marker = join(dir, 'second-try');
    // The first attempt leaves a marker and fails; the second finds it and succeeds.
    await batch.createNamespacedJob({
      namespace: NS,
      body: job('retries', `if [ -e ${marker} ]; then exit 0; else touch ${marker}; exit 1; fi`, {
        backoffLimit: 3,
      }),
    });
    const done = await finished('retries', 'Complete');
    assert.equal(done.status?.failed, 1);
    assert.equal(done.status?.succeeded, 1);
    assert.ok(done.status?.completionTime);
    assert.ok(done.status?.conditions?.some(c => c.type === 'SuccessCriteriaMet' && c.status === 'True'));
    assert.ok(!done.status?.conditions?.some(c => c.type === 'Failed'));
    const phases = (await podsOf('retries')).map(p => p.status?.phase).sort();
    assert.deepEqual(phases, ['Failed', 'Succeeded']);
    assert.ok(existsSync(marker));
  });

  it('backoffLimit 0: the first failed Pod fails the Job and no second Pod is made', async () => {
    await batch.createNamespacedJob({ namespace: NS, body: job('once-only', 'exit 1', { backoffLimit: 0 }) });
    const failed = await finished('once-only', 'Failed');
    assert.equal(failed.status?.failed, 1);
    assert.equal((await podsOf('once-only')).length, 1);
  });

  it('deletes a finished Job and its Pods after ttlSecondsAfterFinished', async () => {
    await batch.createNamespacedJob({
      namespace: NS,
      body: job('short-lived', 'exit 0', { ttlSecondsAfterFinished: 1 }),
    });
    await finished('short-lived', 'Complete');
    await waitFor(
      'the Job to be deleted by its TTL',
      async () => {
        try {
          await batch.readNamespacedJob({ name: 'short-lived', namespace: NS });
          return false;
        } catch (err) {
          return statusCode(err) === 404;
        }
      },
      WAIT_MS,
    );
    await waitFor(
      'its Pods to be collected',
      async () => (await podsOf('short-lived')).length === 0,
      WAIT_MS,
    );
  });

  it('a Job without ttlSecondsAfterFinished is kept after it finishes', async () => {
    // Evidence after the fact: the TTL Job above is gone by now; this one, finished earlier, is not.
    const kept = await batch.readNamespacedJob({ name: 'fails', namespace: NS });
    assert.ok(kept.status?.conditions?.some(c => c.type === 'Failed'));
  });
});
