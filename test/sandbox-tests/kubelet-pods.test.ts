// The process kubelet's Pod life cycle, on a real API server and kube-controller-manager (no DNS needed):
// image pull errors, init containers, env and path mapping, probes and back-off, Jobs, graceful
// deletion and the fault API of the kubelet handle.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';
import { startNode } from '../support/node.ts';
import { VOLUMES_ANNOTATION } from '../sandbox/kubelet/index.ts';
import type { Kubelet } from '../sandbox/kubelet/index.ts';
import { isReady, readPod, waitFor, waitForPod, waitForPodGone } from '../sandbox/kubelet/wait.ts';

const NS = 'default';

function shPod(
  name: string,
  script: string,
  extra: Partial<V1Pod['spec']> = {},
  container: Partial<V1Container> = {},
): V1Pod {
  return {
    metadata: { name },
    spec: {
      containers: [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', script], ...container }],
      ...extra,
    },
  };
}

function emptyDirOf(pod: V1Pod, volume: string): string {
  const volumes = JSON.parse(pod.metadata?.annotations?.[VOLUMES_ANNOTATION] ?? '{}') as Record<
    string,
    { hostPath: string }
  >;
  return volumes[volume].hostPath;
}

describe('kubelet: Pod life cycle', () => {
  let dir: string;
  let api: TestApiServer;
  let kubelet: Kubelet;
  let core: CoreV1Api;
  let batch: BatchV1Api;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubelet-pods-'));
    api = await startApiServer();
    const kc = api.kc;
    // A stand-in for the operator's agent: reports its argv and environment as its termination message.
    const agent = join(dir, 'agent.mjs');
    writeFileSync(
      agent,
      `import { writeFileSync } from 'node:fs';
const paths = JSON.parse(process.env.ETCDFN_SANDBOX_PATHS);
const report = { args: process.argv.slice(2), kubeconfig: !!process.env.KUBECONFIG, ip: process.env.ETCDFN_SANDBOX_POD_IP };
writeFileSync(paths['/dev/termination-log'], JSON.stringify(report));
`,
    );
    kubelet = await startNode(api, {
      dataDir: join(dir, 'kubelet'),
      backoff: { initialMs: 300, maxMs: 1000 },
      agentCommand: [process.execPath, agent],
    });
    core = kc.makeApiClient(CoreV1Api);
    batch = kc.makeApiClient(BatchV1Api);
  });

  after(async () => {
    await kubelet?.stop();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports ErrImagePull for an etcd image with no local binary of exactly its version', async () => {
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'etcd-36' },
        spec: { containers: [{ name: 'etcd', image: 'gcr.io/etcd-development/etcd:v3.6.0' }] },
      },
    });
    const pod = await waitForPod(core, `${NS}/etcd-36`, 'to fail pulling its image', p =>
      ['ErrImagePull', 'ImagePullBackOff'].includes(
        p.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? '',
      ),
    );
    const waiting = pod.status!.containerStatuses![0].state!.waiting!;
    assert.match(waiting.message ?? '', /no local etcd 3\.6\.0 for this image/);
    assert.equal(pod.status?.phase, 'Pending');
    await waitForPod(
      core,
      `${NS}/etcd-36`,
      'to show ErrImagePull',
      p => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ErrImagePull',
    );
  });

  it("runs the operator's image through agentCommand, with the container's args", async () => {
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'agent' },
        spec: {
          restartPolicy: 'Never',
          volumes: [{ name: 'data', emptyDir: {} }],
          containers: [
            {
              name: 'agent',
              image: 'ghcr.io/etcdfn/etcdfn:0.1.0',
              args: ['snapshot', '--data-dir=/var/lib/etcd', '--url=http://0.0.0.0:8080'],
              volumeMounts: [{ name: 'data', mountPath: '/var/lib/etcd' }],
            },
          ],
        },
      },
    });
    const pod = await waitForPod(core, `${NS}/agent`, 'to succeed', p => p.status?.phase === 'Succeeded');
    const ip = pod.status!.podIP!;
    const report = JSON.parse(pod.status!.containerStatuses![0].state!.terminated!.message!) as Record<
      string,
      unknown
    >;
    assert.deepEqual(report, {
      args: ['snapshot', `--data-dir=${emptyDirOf(pod, 'data')}`, `--url=http://${ip}:8080`],
      kubeconfig: true,
      ip,
    });
  });

  it('runs init containers in order (retrying a failed one), with env expansion and mount paths', async () => {
    const step = (n: number, script = `echo ${n} >> /work/order`): V1Container => ({
      name: `init-${n}`,
      image: 'busybox',
      command: ['sh', '-c', script],
      volumeMounts: [{ name: 'work', mountPath: '/work' }],
    });
    const flaky = 'if [ ! -f /work/tried ]; then touch /work/tried; exit 3; fi; echo 2 >> /work/order';
    const pod = shPod(
      'init-order',
      'echo "$(cat /work/order | tr "\\n" " ")| $GREETING | $(pwd)" > /dev/termination-log',
      {
        restartPolicy: 'OnFailure',
        initContainers: [step(1), step(2, flaky), step(3)],
        volumes: [{ name: 'work', emptyDir: { medium: 'Memory', sizeLimit: '16Mi' } }],
      },
      {
        env: [
          { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'GREETING', value: 'hello from $(POD_IP) in /work, $$(POD_IP) kept' },
        ],
        volumeMounts: [{ name: 'work', mountPath: '/work' }],
        workingDir: '/work/cwd',
      },
    );
    await core.createNamespacedPod({ namespace: NS, body: pod });
    const done = await waitForPod(
      core,
      `${NS}/init-order`,
      'to succeed',
      p => p.status?.phase === 'Succeeded',
    );
    const inits = done.status!.initContainerStatuses!;
    assert.deepEqual(
      inits.map(s => [s.name, s.state?.terminated?.exitCode, s.restartCount]),
      [
        ['init-1', 0, 0],
        ['init-2', 0, 1],
        ['init-3', 0, 0],
      ],
    );
    assert.equal(inits[1].lastState?.terminated?.exitCode, 3);
    const workDir = emptyDirOf(done, 'work');
    const ip = done.status!.podIP!;
    const message = done.status!.containerStatuses![0].state!.terminated!.message!;
    assert.equal(message.trim(), `1 2 3 | hello from ${ip} in ${workDir}, $(POD_IP) kept | ${workDir}/cwd`);
    const volumes = JSON.parse(done.metadata!.annotations![VOLUMES_ANNOTATION]) as Record<string, unknown>;
    assert.deepEqual(volumes.work, {
      type: 'emptyDir',
      hostPath: workDir,
      medium: 'Memory',
      sizeLimit: '16Mi',
    });
    await core.deleteNamespacedPod({ name: 'init-order', namespace: NS });
    await waitForPodGone(core, NS, 'init-order');
    assert.equal(existsSync(workDir), false, 'emptyDir removed with the Pod');
  });

  it('drives Ready from the readiness probe and restarts on liveness failure with back-off', async () => {
    const pod = shPod(
      'probed',
      'while true; do sleep 0.2; done',
      { volumes: [{ name: 'flags', emptyDir: {} }], terminationGracePeriodSeconds: 1 },
      {
        volumeMounts: [{ name: 'flags', mountPath: '/flags' }],
        readinessProbe: { exec: { command: ['test', '-f', '/flags/ready'] }, periodSeconds: 1 },
        livenessProbe: {
          exec: { command: ['sh', '-c', '! test -f /flags/die'] },
          periodSeconds: 1,
          failureThreshold: 1,
        },
      },
    );
    await core.createNamespacedPod({ namespace: NS, body: pod });
    const running = await waitForPod(
      core,
      `${NS}/probed`,
      'to run',
      p => p.status?.phase === 'Running' && !!p.metadata?.annotations,
    );
    assert.equal(isReady(running), false);
    const flags = emptyDirOf(running, 'flags');
    writeFileSync(join(flags, 'ready'), '');
    await waitForPod(core, `${NS}/probed`, 'to become Ready', isReady);
    writeFileSync(join(flags, 'die'), '');
    const looping = await waitForPod(core, `${NS}/probed`, 'to crash-loop', p => {
      const s = p.status?.containerStatuses?.[0];
      return (s?.restartCount ?? 0) >= 2 && s?.state?.waiting?.reason === 'CrashLoopBackOff';
    });
    assert.equal(isReady(looping), false);
    rmSync(join(flags, 'die'));
    const healed = await waitForPod(
      core,
      `${NS}/probed`,
      'to recover',
      p => isReady(p) && !!p.status?.containerStatuses?.[0]?.state?.running,
    );
    assert.ok(healed.status!.containerStatuses![0].restartCount >= 2);
    await core.deleteNamespacedPod({ name: 'probed', namespace: NS });
    await waitForPodGone(core, NS, 'probed');
  });

  it('completes a Job and reports it in the Job status', async () => {
    await batch.createNamespacedJob({
      namespace: NS,
      body: {
        metadata: { name: 'once' },
        spec: {
          backoffLimit: 2,
          template: {
            spec: {
              restartPolicy: 'Never',
              containers: [{ name: 'job', image: 'busybox', command: ['sh', '-c', 'exit 0'] }],
            },
          },
        },
      },
    });
    const job = await waitFor('the Job to complete', async () => {
      const j = await batch.readNamespacedJob({ name: 'once', namespace: NS });
      return j.status?.conditions?.some(c => c.type === 'Complete' && c.status === 'True') ? j : undefined;
    });
    assert.equal(job.status?.succeeded, 1);
    assert.equal(job.status?.active ?? 0, 0);
    assert.ok(job.status?.completionTime);
    const pods = await core.listNamespacedPod({
      namespace: NS,
      labelSelector: 'batch.kubernetes.io/job-name=once',
    });
    assert.equal(pods.items.length, 1);
    assert.equal(pods.items[0].status?.phase, 'Succeeded');
  });

  it('deletes a Pod gracefully: preStop, SIGTERM, SIGKILL after the grace period, then the object is removed', async () => {
    const out = join(dir, 'term-out');
    mkdirSync(out, { recursive: true });
    const hostVolume = { volumes: [{ name: 'out', hostPath: { path: out } }] };
    const mount = { volumeMounts: [{ name: 'out', mountPath: '/out' }] };
    await core.createNamespacedPod({
      namespace: NS,
      body: shPod(
        'polite',
        'trap "echo got-term >> /out/polite; exit 0" TERM; while true; do sleep 0.1; done',
        hostVolume,
        {
          ...mount,
          lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo pre-stop >> /out/polite'] } } },
        },
      ),
    });
    await core.createNamespacedPod({
      namespace: NS,
      body: shPod(
        'stubborn',
        // After SIGTERM it says so and then, one loop later, that it is still alive: only SIGKILL,
        // after the grace period, ends it.
        'trap "echo ignored >> /out/stubborn; t=1" TERM; while true; do sleep 0.1; if [ -n "$t" ]; then echo alive-after-term >> /out/stubborn; t=; fi; done',
        { ...hostVolume, terminationGracePeriodSeconds: 3 },
        mount,
      ),
    });
    for (const name of ['polite', 'stubborn'])
      await waitForPod(core, `${NS}/${name}`, 'to be Ready', isReady);
    await core.deleteNamespacedPod({ name: 'polite', namespace: NS });
    await core.deleteNamespacedPod({ name: 'stubborn', namespace: NS });
    const terminating = await readPod(core, NS, 'stubborn');
    assert.ok(terminating?.metadata?.deletionTimestamp, 'the Pod stays while its processes stop');
    await waitForPodGone(core, NS, 'polite');
    await waitForPodGone(core, NS, 'stubborn');
    assert.equal(
      readFileSync(join(out, 'polite'), 'utf8'),
      'pre-stop\ngot-term\n',
      'preStop hook, then SIGTERM',
    );
    // Order, not time: SIGTERM came first and the process outlived it (the grace period), then it
    // was killed (the Pod is gone although the process never exits by itself).
    assert.equal(readFileSync(join(out, 'stubborn'), 'utf8'), 'ignored\nalive-after-term\n');
    const state = await kubelet.faults.state();
    assert.equal(
      state.pods.filter(p => ['polite', 'stubborn'].includes(p.name)).length,
      0,
      'no process left',
    );
  });

  it('fault API: kill, delayed start, wiped PVC, frozen node keeps a deleted Pod Terminating', async () => {
    // The Pod exists before the delay is armed (the frozen node holds it back), so the kubelet's own
    // record of the start (startedAt) is at least the delay after the Pod's creationTimestamp.
    await kubelet.faults.freeze();
    await core.createNamespacedPod({
      namespace: NS,
      body: shPod('faulty', 'while true; do sleep 0.2; done', { restartPolicy: 'Never' }),
    });
    await kubelet.faults.delayStart({ namespace: NS, pod: 'faulty', seconds: 2 });
    await kubelet.faults.unfreeze();
    const running = await waitForPod(
      core,
      `${NS}/faulty`,
      'to run',
      p => !!p.status?.containerStatuses?.[0]?.state?.running,
    );
    const startedAt = new Date(running.status!.containerStatuses![0].state!.running!.startedAt!).getTime();
    const createdAt = new Date(running.metadata!.creationTimestamp!).getTime();
    assert.ok(
      startedAt - createdAt >= 2000,
      `started ${startedAt - createdAt} ms after creation by the kubelet's record`,
    );
    const { killed } = await kubelet.faults.kill({ namespace: NS, pod: 'faulty' });
    assert.equal(killed.length, 1);
    const failed = await waitForPod(
      core,
      `${NS}/faulty`,
      'to fail (restartPolicy Never)',
      p => p.status?.phase === 'Failed',
    );
    assert.equal(failed.status!.containerStatuses![0].state!.terminated!.exitCode, 137);

    await core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: {
        metadata: { name: 'scratch' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } },
      },
    });
    await core.createNamespacedPod({
      namespace: NS,
      body: shPod(
        'writer',
        'echo data > /data/file; while true; do sleep 0.2; done',
        { volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'scratch' } }] },
        { volumeMounts: [{ name: 'd', mountPath: '/data' }] },
      ),
    });
    await waitForPod(core, `${NS}/writer`, 'to be Ready', isReady);
    const { path } = await kubelet.faults.wipePvc({ namespace: NS, claim: 'scratch' });
    assert.equal(existsSync(path), true);
    assert.equal(existsSync(join(path, 'file')), false, 'the claim lost its data');

    await core.createNamespacedPod({
      namespace: NS,
      body: shPod('frozen', 'while true; do sleep 0.2; done'),
    });
    await waitForPod(core, `${NS}/frozen`, 'to be Ready', isReady);
    await kubelet.faults.freeze();
    await core.deleteNamespacedPod({ name: 'frozen', namespace: NS });
    // Bounded by the event that would remove it: once the kubelet has seen the deletion, a frozen
    // node still leaves the Pod (and its process) where they are.
    const seen = await waitFor('the kubelet to see the deletion', async () => {
      const pod = (await kubelet.faults.state()).pods.find(p => p.name === 'frozen');
      return pod?.deleting ? pod : undefined;
    });
    assert.ok(
      seen.containers.some(c => c.pid !== undefined),
      'its process is still there',
    );
    const stuck = await readPod(core, NS, 'frozen');
    assert.ok(stuck?.metadata?.deletionTimestamp, 'still Terminating while the node is frozen');
    await kubelet.faults.unfreeze();
    await waitForPodGone(core, NS, 'frozen');
  });
});
