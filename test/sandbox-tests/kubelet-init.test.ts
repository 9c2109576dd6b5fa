// Init containers on the process kubelet, seen as a user sees them on a real cluster: through the
// real API server with the real kubectl (`get pods` STATUS column, `logs -c`). In order, each to
// completion; restarts by the Pod's restartPolicy; a failing one keeps the main container from
// starting (Init:Error, Init:CrashLoopBackOff).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { kubectl } from '../support/kubectl.ts';
import { startCore } from '../sandbox/core.ts';
import type { SandboxCore } from '../sandbox/core.ts';
import { VOLUMES_ANNOTATION } from '../sandbox/kubelet/index.ts';
import { waitFor, waitForPod, waitForPodGone } from '../sandbox/kubelet/wait.ts';

const NS = 'default';

function sh(name: string, script: string): V1Container {
  return {
    name,
    image: 'busybox:1.36',
    command: ['sh', '-c', script],
    volumeMounts: [{ name: 'work', mountPath: '/work' }],
  };
}

function pod(name: string, inits: V1Container[], restartPolicy: 'Always' | 'Never' = 'Always'): V1Pod {
  return {
    metadata: { name },
    spec: {
      restartPolicy,
      terminationGracePeriodSeconds: 1,
      initContainers: inits,
      containers: [sh('main', 'echo main started; touch /work/main-ran; while true; do sleep 0.2; done')],
      volumes: [{ name: 'work', emptyDir: {} }],
    },
  };
}

function workDir(p: V1Pod): string {
  const volumes = JSON.parse(p.metadata?.annotations?.[VOLUMES_ANNOTATION] ?? '{}') as Record<
    string,
    { hostPath: string }
  >;
  return volumes.work.hostPath;
}

describe('kubelet: init containers as kubectl shows them', () => {
  let dir: string;
  let sandbox: SandboxCore;
  let core: CoreV1Api;

  /** The STATUS and RESTARTS columns of `kubectl get pod NAME`. */
  async function columns(name: string): Promise<{ status: string; restarts: number; ready: string }> {
    const line = (await kubectl(sandbox.kubeconfig, 'get', 'pod', name, '--no-headers')).trim();
    const [, ready, status, restarts] = line.split(/\s+/);
    return { status: status, restarts: Number(restarts), ready: ready };
  }

  async function waitForStatus(name: string, status: string, extra = (_r: number) => true): Promise<number> {
    return waitFor(
      `pod ${name} to show ${status} in kubectl get pods`,
      async () => {
        const c = await columns(name);
        return c.status === status && extra(c.restarts) ? c.restarts : undefined;
      },
      60_000,
      200,
    );
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubelet-init-'));
    sandbox = await startCore({ dir, backoffMaxMs: 1000 });

    core = sandbox.kc.makeApiClient(CoreV1Api);
  });

  after(async () => {
    await sandbox?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs init containers one at a time, each to completion, with their own logs', async () => {
    const wait = (flag: string, n: number): string =>
      `echo init-${n} running; while [ ! -f /work/${flag} ]; do sleep 0.1; done; echo init-${n} done`;
    await core.createNamespacedPod({
      namespace: NS,
      body: pod('ordered', [sh('init-1', wait('go-1', 1)), sh('init-2', wait('go-2', 2))]),
    });
    await waitForStatus('ordered', 'Init:0/2');
    const first = await waitForPod(core, `${NS}/ordered`, 'to run init-1', p =>
      Boolean(p.status?.initContainerStatuses?.[0]?.state?.running && p.metadata?.annotations),
    );
    assert.equal(first.status?.initContainerStatuses?.[1]?.state?.waiting?.reason, 'PodInitializing');
    assert.equal(first.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'PodInitializing');
    assert.equal(first.status?.phase, 'Pending');
    const work = workDir(first);
    writeFileSync(join(work, 'go-1'), '');
    await waitForStatus('ordered', 'Init:1/2');
    assert.equal(existsSync(join(work, 'main-ran')), false, 'main waits for every init container');
    assert.equal(
      await kubectl(sandbox.kubeconfig, 'logs', 'ordered', '-c', 'init-1'),
      'init-1 running\ninit-1 done\n',
    );
    writeFileSync(join(work, 'go-2'), '');
    await waitForStatus('ordered', 'Running');
    await waitFor(
      'main to log',
      async () =>
        (await kubectl(sandbox.kubeconfig, 'logs', 'ordered', '-c', 'main')) === 'main started\n' ||
        undefined,
    );
    assert.equal(
      await kubectl(sandbox.kubeconfig, 'logs', 'ordered', '-c', 'init-2'),
      'init-2 running\ninit-2 done\n',
    );
    const running = await waitForPod(core, `${NS}/ordered`, 'to be Initialized', p =>
      Boolean(p.status?.conditions?.some(c => c.type === 'Initialized' && c.status === 'True')),
    );
    assert.deepEqual(
      running.status?.initContainerStatuses?.map(s => [s.name, s.state?.terminated?.reason, s.ready]),
      [
        ['init-1', 'Completed', true],
        ['init-2', 'Completed', true],
      ],
    );
    await core.deleteNamespacedPod({ name: 'ordered', namespace: NS });
    await waitForPodGone(core, NS, 'ordered');
  });

  it('restartPolicy Never: a failed init container fails the Pod (Init:Error) and main never starts', async () => {
    await core.createNamespacedPod({
      namespace: NS,
      body: pod('never', [sh('fetch', 'echo cannot fetch >&2; exit 4')], 'Never'),
    });
    const failed = await waitForPod(core, `${NS}/never`, 'to fail', p => p.status?.phase === 'Failed');
    assert.equal((await columns('never')).status, 'Init:Error');
    const init = failed.status!.initContainerStatuses![0];
    assert.equal(init.state?.terminated?.exitCode, 4);
    assert.equal(init.restartCount, 0);
    assert.equal(failed.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'PodInitializing');
    assert.equal(existsSync(join(workDir(failed), 'main-ran')), false);
    assert.equal(await kubectl(sandbox.kubeconfig, 'logs', 'never', '-c', 'fetch'), 'cannot fetch\n');
    const initialized = failed.status?.conditions?.find(c => c.type === 'Initialized');
    assert.equal(initialized?.status, 'False');
    assert.match(initialized?.message ?? '', /\[fetch\]/);
    await core.deleteNamespacedPod({ name: 'never', namespace: NS });
    await waitForPodGone(core, NS, 'never');
  });

  it('restartPolicy Always: a failing init container crash-loops (Init:CrashLoopBackOff), main starts once it succeeds', async () => {
    const script = 'echo attempt; if [ -f /work/fixed ]; then exit 0; fi; echo not yet >&2; exit 2';
    await core.createNamespacedPod({
      namespace: NS,
      body: pod('looping', [sh('restore', script), sh('after', 'echo after')]),
    });
    const restarts = await waitForStatus('looping', 'Init:CrashLoopBackOff', r => r >= 2);
    assert.ok(restarts >= 2);
    const looping = await waitForPod(core, `${NS}/looping`, 'to report the crash loop', p =>
      Boolean(p.metadata?.annotations && p.status?.initContainerStatuses?.[0]?.lastState?.terminated),
    );
    assert.equal(looping.status?.phase, 'Pending');
    assert.equal(looping.status?.initContainerStatuses?.[0]?.lastState?.terminated?.exitCode, 2);
    assert.equal(looping.status?.initContainerStatuses?.[1]?.state?.waiting?.reason, 'PodInitializing');
    const work = workDir(looping);
    assert.equal(existsSync(join(work, 'main-ran')), false, 'main does not start while init fails');
    assert.equal(
      await kubectl(sandbox.kubeconfig, 'logs', 'looping', '-c', 'restore', '--previous'),
      'attempt\nnot yet\n',
    );
    writeFileSync(join(work, 'fixed'), '');
    await waitForStatus('looping', 'Running');
    const done = await waitForPod(core, `${NS}/looping`, 'to start main', p =>
      Boolean(p.status?.containerStatuses?.[0]?.state?.running),
    );
    const [restore, afterInit] = done.status!.initContainerStatuses!;
    assert.equal(restore.state?.terminated?.exitCode, 0);
    assert.ok(restore.restartCount >= 2);
    assert.equal(afterInit.state?.terminated?.exitCode, 0);
    assert.equal(
      (await columns('looping')).restarts,
      0,
      'RESTARTS counts the main containers once initialized',
    );
    await waitFor('main to run', () => existsSync(join(work, 'main-ran')) || undefined);
    await core.deleteNamespacedPod({ name: 'looping', namespace: NS });
    await waitForPodGone(core, NS, 'looping');
  });
});
