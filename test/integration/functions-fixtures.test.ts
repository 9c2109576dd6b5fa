// The real functions, over HTTP through the functions framework, answering every CloudEvent
// fixture against the sandbox API server: valid events are handled (2xx, here mostly "the object
// is gone" since the API server is empty), malformed ones are refused with 400 and a message.
// run-snapshot also says what it made of each fixture, and plans a real EtcdSnapshot it reads.
// Also `npm run invoke`, the same path from the command line.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import request from 'supertest';
import type { Server } from 'node:http';
import { FUNCTION_NAMES, loadFunction, type FunctionName } from '../../functions/registry.ts';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import type { EtcdSnapshotSchedule } from '../../shared/api/etcd-snapshot-schedule.ts';
import { decodeEvent } from '../../shared/events/decode.ts';
import { loadKubeConfig } from '../../shared/k8s/client.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { functionServer } from '../../shared/runtime/function-server.ts';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';
import { loadEventFixtures, wireBody } from '../support/fixtures.ts';

const repoRoot = resolve(import.meta.dirname, '..', '..');
const run = promisify(execFile);

describe('functions answer every fixture', () => {
  let api: TestApiServer;
  let dir: string;
  let kubeconfig: string;
  const servers = new Map<FunctionName, Server>();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'etcdfn-fixtures-'));
    api = await startApiServer();
    kubeconfig = join(dir, 'kubeconfig');
    api.writeKubeconfig(kubeconfig);
    // The functions build their context on first use, from $KUBECONFIG.
    process.env.KUBECONFIG = kubeconfig;
    process.env.LOG_LEVEL = 'silent';
    for (const name of FUNCTION_NAMES) {
      // A function that fails to load fails the suite: its literal import() throws.
      await loadFunction(name);
      servers.set(name, functionServer(name));
    }
  });
  after(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const fixture of loadEventFixtures()) {
    it(`${fixture.file} → ${fixture.expect.status >= 400 ? fixture.expect.status : '2xx'} from every function`, async () => {
      assert.deepEqual([...servers.keys()].sort(), [...FUNCTION_NAMES].sort(), 'all four functions serve');
      for (const [name, server] of servers) {
        const res = await request(server).post('/').set(fixture.headers).send(wireBody(fixture));
        if (fixture.expect.status >= 400) {
          assert.equal(res.status, fixture.expect.status, `${name}: ${res.text}`);
          assert.ok(typeof res.body.error === 'string' && res.body.error.length > 0, `${name} says why`);
        } else {
          assert.ok(res.status >= 200 && res.status < 300, `${name} answered ${res.status}: ${res.text}`);
          assert.equal(res.text, '', `${name}: a handled event's answer has no body`);
        }
      }
    });
  }

  describe('run-snapshot', () => {
    const post = async (file: string) => {
      const server = servers.get('run-snapshot');
      assert.ok(server, 'run-snapshot is built');
      const fixture = loadEventFixtures().find(f => f.file === file);
      assert.ok(fixture, file);
      return request(server).post('/').set(fixture.headers).send(wireBody(fixture));
    };
    // A reply is empty (a Knative Broker takes any other non-CloudEvent reply for a failed delivery);
    // what the function did is in its log and in the outcome of its handler, read directly here.
    const handle = async (file: string): Promise<string> => {
      const fixture = loadEventFixtures().find(f => f.file === file);
      assert.ok(fixture, file);
      const { handler } = await import('../../functions/run-snapshot/index.ts');
      const outcome = await handler(decodeEvent({ headers: fixture.headers, body: fixture.body }));
      assert.equal(outcome.result, 'done', JSON.stringify(outcome));
      return outcome.result === 'done' ? outcome.summary : '';
    };
    const kube = () => new KubeObjects(loadKubeConfig(kubeconfig));
    const snapshotRef = {
      apiVersion: 'etcdfn.io/v1alpha1',
      kind: 'EtcdSnapshot',
      namespace: 'default',
      name: 'demo-nightly',
    };
    const answers: [string, RegExp][] = [
      ['snapshot-ref-add.json', /EtcdSnapshot default\/demo-nightly not found/],
      ['snapshot-ref-update.json', /EtcdSnapshot default\/demo-nightly not found/],
      ['snapshot-ref-delete.json', /EtcdSnapshot default\/demo-nightly not found/],
      ['snapshot-resource-add.json', /EtcdSnapshot default\/demo-nightly not found/],
      ['schedule-ref-add.json', /EtcdSnapshotSchedule default\/demo-daily not found/],
      ['schedule-ref-update.json', /EtcdSnapshotSchedule default\/demo-daily not found/],
      ['schedule-ref-delete.json', /EtcdSnapshotSchedule default\/demo-daily not found/],
      // A Job event: the Job is read for its owning EtcdSnapshot (snapshots to a PVC); none here.
      ['job-ref-update.json', /Job default\/demo-restore: no EtcdSnapshot owns it/],
      ['tick.json', /resync of 0 schedule\(s\) and 0 unfinished snapshot\(s\) of 0/],
    ];
    for (const [file, summary] of answers) {
      it(`${file}: says what it did`, async () => {
        const res = await post(file);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.text, '');
        assert.match(await handle(file), summary);
      });
    }

    it('an EtcdSnapshot named by the event is read and planned: a missing Secret ends Failed', async () => {
      const created = await kube().create({
        apiVersion: snapshotRef.apiVersion,
        kind: snapshotRef.kind,
        metadata: { name: snapshotRef.name, namespace: snapshotRef.namespace },
        spec: {
          clusterRef: { name: 'demo' },
          destination: {
            s3: { endpoint: 'https://s3.example', bucket: 'b', credentialsSecretRef: { name: 'absent' } },
          },
        },
      });
      assert.equal(created.kind, 'created', JSON.stringify(created));
      try {
        assert.match(await handle('snapshot-ref-update.json'), /Secret absent .*not found/);
        const read = await kube().get<EtcdSnapshot & KubeObject>(snapshotRef);
        assert.ok(read.kind === 'found');
        assert.equal(read.object.status?.phase, 'Failed');
        // Finished: the tick skips it, a repeated event changes nothing.
        assert.match(await handle('snapshot-resource-add.json'), /is Failed/);
        assert.match(
          await handle('tick.json'),
          /resync of 0 schedule\(s\) and 0 unfinished snapshot\(s\) of 1/,
        );
      } finally {
        await kube().delete(snapshotRef);
      }
    });

    it('an EtcdSnapshotSchedule named by the event is read and planned: a missing cluster is in its status', async () => {
      const scheduleRef = { ...snapshotRef, kind: 'EtcdSnapshotSchedule', name: 'demo-daily' };
      const created = await kube().create({
        apiVersion: scheduleRef.apiVersion,
        kind: scheduleRef.kind,
        metadata: { name: scheduleRef.name, namespace: scheduleRef.namespace },
        spec: {
          clusterRef: { name: 'demo' },
          schedule: '0 3 * * *',
          destination: {
            s3: {
              endpoint: 'http://127.0.0.1:9',
              bucket: 'etcd-backups',
              credentialsSecretRef: { name: 's3' },
            },
          },
        },
      });
      assert.equal(created.kind, 'created');
      try {
        assert.match(
          await handle('schedule-ref-update.json'),
          /ClusterNotFound: EtcdCluster demo not found in namespace default/,
        );
        const read = await kube().get<EtcdSnapshotSchedule & KubeObject>(scheduleRef);
        assert.ok(read.kind === 'found');
        const ready = read.object.status?.conditions?.find(c => c.type === 'Ready');
        assert.equal(ready?.status, 'False');
        assert.match(ready?.message ?? '', /no snapshots are taken until it exists/);
        assert.match(read.object.status?.nextScheduleTime ?? '', /T03:00:00Z$/);
        // Nothing changed: a repeated event writes nothing, and the tick sees the schedule.
        const again = await post('schedule-ref-add.json');
        assert.equal(again.status, 200, again.text);
        const reread = await kube().get<EtcdSnapshotSchedule & KubeObject>(scheduleRef);
        assert.ok(reread.kind === 'found');
        assert.equal(reread.object.metadata.resourceVersion, read.object.metadata.resourceVersion);
        assert.match(await handle('tick.json'), /resync of 1 schedule\(s\)/);
      } finally {
        await kube().delete(scheduleRef);
      }
    });
  });

  it("a tick's reply names no cluster and no namespace, though the tick went through them all", async () => {
    const kube = new KubeObjects(loadKubeConfig(kubeconfig));
    for (const namespace of ['team-alpha', 'team-bravo']) {
      await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
      const created = await kube.create({
        apiVersion: 'etcdfn.io/v1alpha1',
        kind: 'EtcdCluster',
        metadata: { name: `${namespace}-etcd`, namespace },
        spec: { version: '3.5.16', replicas: 1 },
      });
      assert.equal(created.kind, 'created');
    }
    const server = servers.get('reconcile-cluster');
    assert.ok(server);
    const tick = loadEventFixtures().find(f => f.file === 'tick.json');
    assert.ok(tick);
    const res = await request(server).post('/').set(tick.headers).send(wireBody(tick));
    assert.equal(res.status, 200, res.text);
    // Empty: a Knative Broker takes any other non-CloudEvent reply for a failed delivery.
    assert.equal(res.text, '');
    // The tick did reach both clusters: each has taken its first step (bootstrap recorded in status).
    for (const namespace of ['team-alpha', 'team-bravo']) {
      const ref = {
        apiVersion: 'etcdfn.io/v1alpha1',
        kind: 'EtcdCluster',
        namespace,
        name: `${namespace}-etcd`,
      };
      const read = await kube.get<EtcdCluster & KubeObject>(ref);
      assert.ok(read.kind === 'found');
      assert.equal(read.object.status?.phase, 'Bootstrapping', namespace);
    }
  });

  it('npm run invoke runs one function once on a fixture and prints its answer and its log', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        join(repoRoot, 'functions', 'invoke.ts'),
        'reconcile-cluster',
        'cluster-ref-update',
        '--kubeconfig',
        kubeconfig,
      ],
      { cwd: repoRoot, env: { ...process.env, LOG_LEVEL: 'info' }, timeout: 120_000 },
    );
    assert.match(stdout, /reconcile-cluster answered 200/);
    assert.match(stdout, /EtcdCluster default\/demo is gone/);
  });
});
