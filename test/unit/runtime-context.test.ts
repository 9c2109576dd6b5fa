// The operator's settings from the environment and the context a function builds once per process
// (shared/runtime/context.ts): each setting's default, its variable, and the bounds on chainSteps.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_OPERATOR_IMAGE } from '../../shared/builders/restore-pod.ts';
import {
  createContext,
  defaultContext,
  parseWatchNamespaces,
  settingsFromEnv,
} from '../../shared/runtime/context.ts';
import { parseAllowList } from '../../shared/s3/endpoint-policy.ts';
import { scheduleTimingsFromEnv, snapshotTimingsFromEnv } from '../../shared/runtime/timings.ts';

const SA_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';
const DIGEST = `sha256:${'a'.repeat(64)}`;

describe('the operator settings', () => {
  it('with nothing set: the defaults', () => {
    const inPod = existsSync(SA_NAMESPACE)
      ? readFileSync(SA_NAMESPACE, 'utf8').trim() || undefined
      : undefined;
    assert.deepEqual(settingsFromEnv({ ETCDFN_POD_IP_FAMILY: 'IPv4' }), {
      etcdImageRepository: 'quay.io/coreos/etcd',
      etcdImageDigests: {},
      operatorImage: DEFAULT_OPERATOR_IMAGE,
      podIPFamily: 'IPv4',
      promoteAttempts: 100,
      promoteIntervalMs: 50,
      unhealthyWaitMs: 8000,
      chainSteps: 6,
      snapshot: snapshotTimingsFromEnv({}),
      schedule: scheduleTimingsFromEnv({}),
      operatorNamespace: inPod,
      s3AllowList: [],
    });
  });

  it('each from its variable', () => {
    const env = {
      ETCD_IMAGE_REPOSITORY: 'registry.example/etcd',
      ETCD_IMAGE_DIGESTS: `3.5.16=${DIGEST}`,
      ETCDFN_IMAGE: 'registry.example/etcdfn:1',
      ETCDFN_POD_IP_FAMILY: 'IPv6',
      ETCDFN_PROMOTE_ATTEMPTS: '7',
      ETCDFN_PROMOTE_INTERVAL_MS: '20',
      ETCDFN_UNHEALTHY_WAIT_MS: '100',
      ETCDFN_CHAIN_STEPS: '3',
      ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS: '5',
      ETCDFN_SCHEDULE_STARTING_DEADLINE_SECONDS: '10',
      ETCDFN_RESYNC_BUDGET_MS: '1500',
      ETCDFN_OPERATOR_NAMESPACE: 'etcdfn-system',
      ETCDFN_WATCH_NAMESPACES: 'team-a team-b',
      ETCDFN_S3_ALLOWED_ENDPOINTS: 'http://minio.backup.svc:9000',
      ETCDFN_S3_DENIED_RANGES: '10.96.0.0/12',
      ETCDFN_SCHEDULE_SINK: 'http://sink.example/',
      ETCDFN_SCHEDULE_SINK_AUDIENCE: 'etcdfn/run-snapshot',
    };
    assert.deepEqual(settingsFromEnv(env), {
      etcdImageRepository: 'registry.example/etcd',
      etcdImageDigests: { '3.5.16': DIGEST },
      operatorImage: 'registry.example/etcdfn:1',
      podIPFamily: 'IPv6',
      promoteAttempts: 7,
      promoteIntervalMs: 20,
      unhealthyWaitMs: 100,
      chainSteps: 3,
      snapshot: snapshotTimingsFromEnv(env),
      schedule: scheduleTimingsFromEnv(env),
      resyncBudgetMs: 1500,
      operatorNamespace: 'etcdfn-system',
      watchNamespaces: ['team-a', 'team-b'],
      s3AllowList: parseAllowList('http://minio.backup.svc:9000').entries,
      s3AllowedEndpoints: 'http://minio.backup.svc:9000',
      s3DeniedRanges: '10.96.0.0/12',
      scheduleSink: { uri: 'http://sink.example/', audience: 'etcdfn/run-snapshot' },
    });
    assert.notDeepEqual(snapshotTimingsFromEnv(env), snapshotTimingsFromEnv({}));
    assert.notDeepEqual(scheduleTimingsFromEnv(env), scheduleTimingsFromEnv({}));
  });

  it('empty values are unset; a sink without an audience has none', () => {
    const settings = settingsFromEnv({
      ETCDFN_POD_IP_FAMILY: 'IPv4',
      ETCD_IMAGE_REPOSITORY: '',
      ETCDFN_IMAGE: '',
      ETCDFN_RESYNC_BUDGET_MS: '',
      ETCDFN_OPERATOR_NAMESPACE: 'ns',
      ETCDFN_WATCH_NAMESPACES: '',
      ETCDFN_S3_ALLOWED_ENDPOINTS: '',
      ETCDFN_S3_DENIED_RANGES: '',
      ETCDFN_SCHEDULE_SINK: 'http://sink.example/',
      ETCDFN_SCHEDULE_SINK_AUDIENCE: '',
    });
    assert.equal(settings.etcdImageRepository, 'quay.io/coreos/etcd');
    assert.equal(settings.operatorImage, DEFAULT_OPERATOR_IMAGE);
    for (const key of ['resyncBudgetMs', 'watchNamespaces', 's3AllowedEndpoints', 's3DeniedRanges'])
      assert.ok(!(key in settings), key);
    assert.deepEqual(settings.scheduleSink, { uri: 'http://sink.example/' });
  });

  it('chainSteps is at least 1, and 1 for anything that is no number', () => {
    const steps = (v: string) =>
      settingsFromEnv({ ETCDFN_POD_IP_FAMILY: 'IPv4', ETCDFN_CHAIN_STEPS: v }).chainSteps;
    assert.equal(steps('1'), 1);
    assert.equal(steps('0'), 1);
    assert.equal(steps('-4'), 1);
    assert.equal(steps('many'), 1);
    assert.equal(steps('12'), 12);
  });

  it('watched namespaces: commas or spaces, each once', () => {
    assert.deepEqual(parseWatchNamespaces(' a,b  c,,a\tb '), ['a', 'b', 'c']);
    assert.deepEqual(parseWatchNamespaces(undefined), []);
  });
});

describe('the context', () => {
  const kubeConfig = () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kc;
  };
  it('counts the adapters, tells the time, and reads the settings from the env given', async () => {
    const ctx = createContext(kubeConfig(), { ETCDFN_POD_IP_FAMILY: 'IPv6', ETCDFN_CHAIN_STEPS: '2' });
    assert.equal(ctx.settings.podIPFamily, 'IPv6');
    assert.equal(ctx.settings.chainSteps, 2);
    assert.equal(typeof ctx.kube.get, 'function');
    const before = Date.now();
    const now = ctx.now();
    assert.ok(now instanceof Date && Math.abs(now.getTime() - before) < 1000);
    assert.equal(typeof ctx.connectEtcd, 'function');
    const dialled = ctx.connectEtcd?.({ endpoints: ['http://127.0.0.1:1'] } as never);
    assert.deepEqual(Object.keys(dialled ?? {}), Object.keys(ctx.etcd));
    assert.ok(Object.keys(ctx.etcd).length > 5);
  });

  it("etcd calls give up after $ETCDFN_ETCD_TIMEOUT_MS, the cluster's own adapters too", async () => {
    // A member that accepts the connection and never answers.
    const sockets: Socket[] = [];
    const silent = createServer(socket => sockets.push(socket));
    await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    assert.ok(address && typeof address === 'object');
    const endpoint = `http://127.0.0.1:${address.port}`;
    try {
      const ctx = createContext(kubeConfig(), {
        ETCDFN_POD_IP_FAMILY: 'IPv4',
        ETCDFN_ETCD_TIMEOUT_MS: '300',
      });
      for (const etcd of [ctx.etcd, ctx.connectEtcd?.({})]) {
        const start = Date.now();
        await etcd?.memberStatus(endpoint).catch(() => undefined);
        const took = Date.now() - start;
        assert.ok(took < 3000, `gave up after ${took} ms (the default is 5 s)`);
      }
    } finally {
      sockets.forEach(s => s.destroy());
      await new Promise(resolve => silent.close(resolve));
    }
  });

  it("the process's own context is built once, from $KUBECONFIG and the process env", () => {
    const dir = mkdtempSync(join(tmpdir(), 'etcdfn-context-'));
    const saved = { KUBECONFIG: process.env.KUBECONFIG, family: process.env.ETCDFN_POD_IP_FAMILY };
    try {
      writeFileSync(
        join(dir, 'kubeconfig'),
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
          'users: [{name: u, user: {}}]',
          'contexts: [{name: x, context: {cluster: c, user: u}}]',
          'current-context: x',
        ].join('\n'),
      );
      process.env.KUBECONFIG = join(dir, 'kubeconfig');
      process.env.ETCDFN_POD_IP_FAMILY = 'IPv6';
      const ctx = defaultContext();
      assert.equal(ctx.settings.podIPFamily, 'IPv6');
      assert.equal(defaultContext(), ctx);
    } finally {
      for (const [key, value] of [
        ['KUBECONFIG', saved.KUBECONFIG],
        ['ETCDFN_POD_IP_FAMILY', saved.family],
      ] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
