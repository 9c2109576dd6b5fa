// Jobs on our node: kube-controller-manager's Job controller makes the Pods, our kubelet runs them
// and reports how each ended, and the Job's status follows — a Pod per attempt, failures counted
// against backoffLimit (the real controller waits 10 s, 20 s... between attempts), the terminal
// conditions, ttlSecondsAfterFinished (the TTL controller) and the Pods going with their Job (the
// garbage collector; our kubelet stops them).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BatchV1Api, CoreV1Api, Watch } from '@kubernetes/client-node';
import type { V1Job } from '@kubernetes/client-node';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';
import { startNode } from '../support/node.ts';
import type { Kubelet } from '../sandbox/kubelet/index.ts';
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

describe('Jobs run by our kubelet, kept by kube-controller-manager', () => {
  let dir: string;
  let api: TestApiServer;
  let kubelet: Kubelet;
  let core: CoreV1Api;
  let batch: BatchV1Api;
  let watch: Watch;
  const stops: (() => void)[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubelet-jobs-'));
    api = await startApiServer();
    const kc = api.kc;
    kubelet = await startNode(api, {
      dataDir: join(dir, 'kubelet'),
      backoff: { initialMs: 200, maxMs: 400 },
    });
    core = kc.makeApiClient(CoreV1Api);
    batch = kc.makeApiClient(BatchV1Api);
    watch = new Watch(kc);
  });

  after(async () => {
    for (const stop of stops) stop();
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
    // Watched rather than polled: the Job may be Complete for well under a second before its TTL
    // (counted from completionTime, whole seconds) runs out, and a poll can miss that window.
    const seen: { type: string; at: number; job: V1Job }[] = [];
    const req = await watch.watch(
      `/apis/batch/v1/namespaces/${NS}/jobs`,
      { fieldSelector: 'metadata.name=short-lived' },
      (type, job: V1Job) => seen.push({ type, at: Date.now(), job }),
      () => undefined,
    );
    stops.push(() => req.abort());
    await batch.createNamespacedJob({
      namespace: NS,
      body: job('short-lived', 'exit 0', { ttlSecondsAfterFinished: 1 }),
    });
    const deleted = await waitFor(
      'the Job to be deleted by its TTL',
      () => seen.find(e => e.type === 'DELETED'),
      WAIT_MS,
    );
    const complete = seen.find(e =>
      e.job.status?.conditions?.some(c => c.type === 'Complete' && c.status === 'True'),
    );
    assert.ok(complete, `the Job was never seen Complete (saw ${seen.map(e => e.type).join(', ')})`);
    assert.ok(complete.at <= deleted.at);
    // A watch hands over the JSON as sent: completionTime is a string here, whatever V1Job says.
    const completionTime = String(complete.job.status?.completionTime ?? '');
    const finishedAt = Date.parse(completionTime);
    assert.ok(
      deleted.at >= finishedAt + 1000,
      `deleted before its TTL ran out: completionTime ${completionTime}, deletion seen at ${new Date(deleted.at).toISOString()}`,
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
