// The image in standalone mode, as the chart runs it: the four functions and the event bridge, each
// a process started from the image (`buildah run --isolation chroot`, the host's loopback network),
// drive a sandbox cluster (the real control plane + our process kubelet from this checkout, real
// etcd) to 3/3 Ready.
// Nothing of the operator runs from the checkout. The image's processes run inside the sandbox's
// mount namespace (nsenter), where /etc/resolv.conf names the kubelet's name server, so the
// functions reach members by their Service DNS names as in a cluster. Also: the image's
// `etcdfn-agent` command (member Pods' restore init containers) fetches and verifies a real etcd
// snapshot from S3 (s3rver), which loads the S3 SDK the functions load only when used.
//   ETCDFN_IMAGE=localhost/etcdfn:0.1.0 ETCDFN_BUILDAH_STORE=.cache/buildah \
//     node --import tsx --test test/image/standalone.test.ts
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { FUNCTION_NAMES } from '../../functions/registry.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects } from '../../shared/k8s/objects.ts';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import { restorePaths } from '../../shared/restore/layout.ts';
import { startSandbox, type Sandbox } from '../sandbox/kubelet/harness.ts';
import { etcdBinaries } from '../support/etcd-binaries.ts';
import { EtcdTestCluster } from '../support/etcd-process.ts';
import { S3RVER_CREDENTIALS, sha256, startS3rver } from '../support/s3rver.ts';
import { beforeCreation, converged } from '../support/converge.ts';

/** The image's numeric non-root user (its Dockerfile's USER). */
const IMAGE_USER = 65532;
const repoRoot = resolve(import.meta.dirname, '..', '..');
const image = process.env.ETCDFN_IMAGE ?? 'localhost/etcdfn:0.1.0';
const store = resolve(process.env.ETCDFN_BUILDAH_STORE ?? join(repoRoot, '.cache', 'buildah'));
const BUILDAH = [
  '--root',
  join(store, 'storage'),
  '--runroot',
  join(store, 'run'),
  '--storage-driver',
  'vfs',
];
const execFileAsync = promisify(execFile);
const buildah = (...args: string[]) =>
  execFileSync('buildah', [...BUILDAH, ...args], { encoding: 'utf8' }).trim();
const NS = 'default';
const NAME = 'from-image';
const BUCKET = 'snaps';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>(ok => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise(ok => server.close(ok));
  return port;
}

interface Running {
  name: string;
  child: ChildProcess;
  output(): string;
}

async function stop(r: Running): Promise<void> {
  const { child } = r;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise(ok => child.once('exit', ok));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(killer);
}

describe(`image ${image} in standalone mode`, { timeout: 900_000 }, () => {
  let sandbox: Sandbox;
  let dir: string;
  let container: string;
  const running: Running[] = [];

  /** One program from the image, inside the sandbox's mount namespace, on the host's network. */
  function fromImage(name: string, env: Record<string, string>, argv: string[]): Running {
    const envArgs = Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
    const child = spawn(
      'nsenter',
      [
        `--mount=/proc/${sandbox.pid}/ns/mnt`,
        '--',
        'buildah',
        ...BUILDAH,
        'run',
        '--isolation',
        'chroot',
        '--network',
        'host',
        '--volume',
        `${join(dir, 'config')}:/config:ro`,
        '--env',
        'KUBECONFIG=/config/kubeconfig',
        '--env',
        'LOG_LEVEL=warn',
        ...envArgs,
        container,
        '--',
        ...argv,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    const collect = (d: Buffer): void => {
      out = (out + d.toString()).slice(-20_000);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const r = { name, child, output: () => out };
    running.push(r);
    return r;
  }

  const describeRun = (): string =>
    running
      .map(r => `--- ${r.name} (exit ${r.child.exitCode ?? 'running'})\n${r.output().slice(-1500)}`)
      .join('\n');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'etcdfn-image-standalone-'));
    sandbox = await startSandbox({ crdDir: join(repoRoot, 'crds'), startTimeoutMs: 180_000 });
    mkdirSync(join(dir, 'config'));
    copyFileSync(sandbox.kubeconfig, join(dir, 'config', 'kubeconfig'));
    // The control plane writes it 0600 for root; the image's processes run as 65532, as in a Pod.
    chownSync(join(dir, 'config', 'kubeconfig'), IMAGE_USER, IMAGE_USER);
    container = buildah('from', '--quiet', image);
  });
  after(async () => {
    for (const r of running) await stop(r);
    if (container) buildah('rm', container);
    await sandbox?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the functions and the bridge from the image bring a 3-member cluster to 3/3 Ready', async () => {
    const subscribers: string[] = [];
    for (const name of FUNCTION_NAMES) {
      const port = await freePort();
      fromImage(name, { FUNCTION_TARGET: name, PORT: String(port), HOST: '127.0.0.1' }, [
        '/usr/local/bin/node',
        '/app/dist/functions/serve.js',
      ]);
      subscribers.push('--subscriber', `${name}=http://127.0.0.1:${port}`);
    }
    // As the chart runs the bridge (leader election on; the sandbox serves Leases), ticking faster
    // than the default 10 minutes as the other e2e tests do.
    fromImage('bridge', { POD_NAMESPACE: NS, POD_NAME: 'etcdfn-standalone-0' }, [
      '/usr/local/bin/node',
      '/app/dist/standalone/main.js',
      '--kubeconfig',
      '/config/kubeconfig',
      '--leader-elect',
      '--tick-seconds',
      '10',
      ...subscribers,
    ]);
    const kube = new KubeObjects(sandbox.kc);
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: NAME, namespace: NS },
      spec: { replicas: 3, version: '3.5.16' },
    });
    assert.equal(created.kind, 'created', JSON.stringify(created));
    const cluster = await converged(
      { kube, namespace: NS, name: NAME },
      {
        replicas: 3,
        since: beforeCreation(),
        timeoutMs: 600_000,
        describe: () => `${describeRun()}\n--- sandbox\n${sandbox.stderr().slice(-3000)}`,
      },
    );
    assert.equal(cluster.status?.ready, '3/3');
    assert.equal(cluster.status?.readyMembers, 3);
    for (const r of running) assert.equal(r.child.exitCode, null, `${r.name} exited:\n${r.output()}`);
  });

  it('etcdfn-agent fetches and verifies a real etcd snapshot from S3 (s3rver), as a restore init container', async () => {
    const s3 = await startS3rver([BUCKET]);
    const work = mkdtempSync(join(tmpdir(), 'etcdfn-image-agent-'));
    try {
      const etcd = await EtcdTestCluster.start({ minor: '3.5', size: 1 });
      const file = join(work, 'snap.db');
      try {
        const client = new Etcd3({ hosts: etcd.endpoints });
        for (let i = 0; i < 20; i++) await client.put(`k/${i}`).value(`v${i}`);
        client.close();
        execFileSync(
          etcdBinaries('3.5').etcdctl,
          [`--endpoints=${etcd.endpoints[0]}`, 'snapshot', 'save', file],
          {
            env: { ...process.env, ETCDCTL_API: '3' },
            stdio: 'ignore',
          },
        );
      } finally {
        await etcd.cleanup();
      }
      const bytes = readFileSync(file);
      await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'snap.db', Body: bytes }));
      // The member's data volume, writable by the image's user (65532).
      const data = join(work, 'data');
      mkdirSync(data);
      chownSync(data, IMAGE_USER, IMAGE_USER);
      // Asynchronously: s3rver answers from this process, so its event loop must keep running.
      const { stdout: out } = await execFileAsync(
        'buildah',
        [
          ...BUILDAH,
          'run',
          '--isolation',
          'chroot',
          '--network',
          'host',
          '--volume',
          `${data}:/var/lib/etcd`,
          '--env',
          `AWS_ACCESS_KEY_ID=${S3RVER_CREDENTIALS.accessKeyId}`,
          '--env',
          `AWS_SECRET_ACCESS_KEY=${S3RVER_CREDENTIALS.secretAccessKey}`,
          '--env',
          `ETCDFN_S3_ALLOWED_ENDPOINTS=${s3.endpoint}`,
          container,
          '--',
          'etcdfn-agent',
          'restore-fetch',
          '--data-dir=/var/lib/etcd',
          '--etcd-version=3.5.16',
          `--s3-endpoint=${s3.endpoint}`,
          `--s3-bucket=${BUCKET}`,
          '--s3-key=snap.db',
          '--s3-path-style=true',
          '--s3-secret=creds',
          `--sha256=${sha256(bytes)}`,
          '--termination-log=/var/lib/etcd/termination-log',
        ],
        { timeout: 180_000 },
      );
      assert.match(out, new RegExp(`fetched ${bytes.length} bytes, sha256 ${sha256(bytes)}`));
      const fetched = readFileSync(restorePaths(data).snapshotFile);
      assert.equal(sha256(fetched), sha256(bytes));
      assert.equal(existsSync(join(data, 'termination-log')), false, 'no failure written');
    } finally {
      await s3.stop();
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('has the etcdfn-agent command on PATH', () => {
    const out = buildah('run', '--isolation', 'chroot', container, '--', 'etcdfn-agent', '--help');
    assert.match(out, /Usage: etcdfn-agent/);
    assert.match(out, /restore-fetch/);
  });
});
