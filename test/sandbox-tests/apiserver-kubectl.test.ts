// The sandbox API server as the real kubectl (v1.32, default flags) sees it: apply, get with printer
// columns, get -w, scale, patch, replace conflicts, delete with finalizers, describe, server-side
// apply, validation errors. kubectl runs with its own HOME so its discovery cache stays per test.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import { waitFor } from '../support/wait.ts';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../sandbox/apiserver/index.ts';
import {
  kubectl,
  kubectlEnv,
  OutputCollector,
  spawnKubectl,
  type KubectlEnv,
} from '../sandbox/apiserver/testing.ts';

const CRDS = new URL('../../crds/', import.meta.url).pathname;
const NS = 'default';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;

interface Env {
  server: ApiServer;
  k: KubectlEnv;
  run: (args: string[], input?: string) => Promise<{ code: number | null; stdout: string; stderr: string }>;
  file: (name: string, content: Any | string) => string;
}

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function env(opts: ApiServerOptions = {}): Promise<Env> {
  const server = await startApiServer({ crdDir: CRDS, ...opts });
  const k = kubectlEnv(server.url, NS);
  cleanups.push(
    () => server.close(),
    () => k.cleanup(),
  );
  return {
    server,
    k,
    run: (args, input) => kubectl(k, args, { input }),
    file: (name, content) => {
      const path = join(k.dir, name);
      writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
      return path;
    },
  };
}

function cluster(name: string, spec: Any = {}, metadata: Any = {}): Any {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name, labels: { app: 'demo' }, ...metadata },
    spec: { replicas: 3, version: '3.5.16', ...spec },
  };
}

function crd(file: string): Any {
  return parse(readFileSync(join(CRDS, file), 'utf8')) as Any;
}

function ok(r: { code: number | null; stdout: string; stderr: string }): string {
  assert.equal(r.code, 0, `kubectl failed: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** Split `kubectl get` output into rows of columns. */
function rows(out: string): string[][] {
  return out
    .trim()
    .split('\n')
    .map(l => l.trim().split(/\s{2,}/));
}

describe('sandbox API server through kubectl', () => {
  it('applies an EtcdCluster and shows the CRD printer columns', async () => {
    const { run, file, server } = await env();
    const path = file('c.yaml', cluster('x'));
    assert.equal(ok(await run(['apply', '-f', path])).trim(), 'etcdcluster.etcdfn.io/x created');
    assert.equal(ok(await run(['apply', '-f', path])).trim(), 'etcdcluster.etcdfn.io/x unchanged');
    server.store.patch(
      { apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdCluster', name: 'x', namespace: NS },
      { status: { ready: '2/3' } },
      'merge',
      {
        subresource: 'status',
      },
    );
    const table = rows(ok(await run(['get', 'etcdclusters'])));
    const columns = (crd('etcdfn.io_etcdclusters.yaml').spec.versions[0].additionalPrinterColumns as Any[])
      .filter(c => !c.priority)
      .map(c => String(c.name).toUpperCase());
    assert.deepEqual(table[0], ['NAME', ...columns]);
    assert.equal(table[1][0], 'x');
    assert.ok(table[1].includes('2/3'), `ready column shown: ${table[1].join('|')}`);
    assert.ok(table[1].includes('3.5.16'));
    assert.match(table[1][table[1].length - 1], /^\d+s$/, 'age formatted by the server');

    const changed = file('c.yaml', cluster('x', { replicas: 5 }));
    assert.equal(ok(await run(['apply', '-f', changed])).trim(), 'etcdcluster.etcdfn.io/x configured');
    assert.equal(ok(await run(['get', 'etcd', 'x', '-o', 'jsonpath={.spec.replicas}'])), '5');
    const all = rows(ok(await run(['get', 'etcdclusters', '-A', '--show-labels'])));
    assert.equal(all[0][0], 'NAMESPACE');
    assert.equal(all[1][0], 'default');
    assert.equal(all[1][all[1].length - 1], 'app=demo');
  });

  it('prints a change with kubectl get -w', async () => {
    const { run, file, k } = await env();
    ok(await run(['apply', '-f', file('c.yaml', cluster('w'))]));
    for (const args of [
      ['get', 'etcdcluster', '-w'],
      ['get', 'etcdcluster', 'w', '-w'],
    ]) {
      const child = spawnKubectl(k, args);
      try {
        const out = new OutputCollector(child);
        await out.waitFor(text => /^w\s/m.test(text));
        const version = args.length === 4 ? '3.5.17' : '3.5.18';
        ok(
          await run([
            'patch',
            'etcdcluster',
            'w',
            '--type=merge',
            '-p',
            JSON.stringify({ spec: { version } }),
          ]),
        );
        const text = await out.waitFor(t => t.includes(version));
        const lines = text.trim().split('\n');
        assert.match(lines[0], /^NAME\s+READY\s+VERSION/);
        assert.equal(lines.length, 3, `header, initial row, changed row:\n${text}`);
      } finally {
        child.kill();
      }
    }
  });

  it('scales an EtcdCluster with kubectl scale', async () => {
    const { run, file, server } = await env();
    ok(await run(['apply', '-f', file('c.yaml', cluster('s'))]));
    assert.equal(
      ok(await run(['scale', 'etcdcluster', 's', '--replicas=5'])).trim(),
      'etcdcluster.etcdfn.io/s scaled',
    );
    const obj = server.store.get<Any>('etcdfn.io/v1alpha1', 'EtcdCluster', 's', NS)!;
    assert.equal(obj.spec.replicas, 5);
    assert.equal(obj.metadata.generation, 2);
    // --current-replicas makes kubectl GET /scale and PUT a whole Scale without a Content-Type.
    assert.equal(
      ok(await run(['scale', 'etcdcluster', 's', '--current-replicas=5', '--replicas=3'])).trim(),
      'etcdcluster.etcdfn.io/s scaled',
    );
    assert.equal(server.store.get<Any>('etcdfn.io/v1alpha1', 'EtcdCluster', 's', NS)!.spec.replicas, 3);
    const wrong = await run(['scale', 'etcdcluster', 's', '--current-replicas=9', '--replicas=1']);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /Expected replicas to be 9, was 3/);
  });

  it('patches with merge, JSON and strategic patches, and reports no-op patches', async () => {
    const { run, file, server } = await env();
    ok(await run(['apply', '-f', file('c.yaml', cluster('p'))]));
    assert.equal(
      ok(
        await run(['patch', 'etcdcluster', 'p', '--type=merge', '-p', '{"spec":{"version":"3.5.17"}}']),
      ).trim(),
      'etcdcluster.etcdfn.io/p patched',
    );
    assert.equal(
      ok(
        await run(['patch', 'etcdcluster', 'p', '--type=merge', '-p', '{"spec":{"version":"3.5.17"}}']),
      ).trim(),
      'etcdcluster.etcdfn.io/p patched (no change)',
    );
    ok(
      await run([
        'patch',
        'etcdcluster',
        'p',
        '--type=json',
        '-p',
        '[{"op":"replace","path":"/spec/replicas","value":1}]',
      ]),
    );
    const obj = server.store.get<Any>('etcdfn.io/v1alpha1', 'EtcdCluster', 'p', NS)!;
    assert.equal(obj.spec.version, '3.5.17');
    assert.equal(obj.spec.replicas, 1);
    const smp = await run(['patch', 'etcdcluster', 'p', '-p', '{"spec":{"replicas":3}}']);
    assert.equal(smp.code, 1);
    assert.match(
      smp.stderr,
      /application\/strategic-merge-patch\+json is not supported by etcdfn\.io\/v1alpha1, Kind=EtcdCluster/,
    );

    ok(
      await run([
        'patch',
        'etcdcluster',
        'p',
        '--subresource=status',
        '--type=merge',
        '-p',
        '{"status":{"phase":"Running"}}',
      ]),
    );
    assert.equal(
      server.store.get<Any>('etcdfn.io/v1alpha1', 'EtcdCluster', 'p', NS)!.status.phase,
      'Running',
    );

    // Core types take strategic merge patches (kubectl's default type).
    ok(
      await run([
        'create',
        '-f',
        file('cm.yaml', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: '1' } }),
      ]),
    );
    ok(await run(['patch', 'configmap', 'cm', '-p', '{"data":{"b":"2"}}']));
    ok(await run(['label', 'configmap', 'cm', 'team=db']));
    const cm = server.store.get<Any>('v1', 'ConfigMap', 'cm', NS)!;
    assert.deepEqual(cm.data, { a: '1', b: '2' });
    assert.equal(cm.metadata.labels.team, 'db');
  });

  it('rejects an invalid EtcdCluster with the schema messages', async () => {
    const { run, file } = await env();
    const neg = await run(['create', '-f', file('neg.yaml', cluster('neg', { replicas: -1 }))]);
    assert.equal(neg.code, 1);
    assert.equal(
      neg.stderr.trim(),
      'The EtcdCluster "neg" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0',
    );
    const unknown = await run(['apply', '-f', file('u.yaml', cluster('u', { foo: 1 }))]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /strict decoding error: unknown field "spec\.foo"/);

    ok(await run(['apply', '-f', file('ok.yaml', cluster('ok'))]));
    const scale = await run(['scale', 'etcdcluster', 'ok', '--replicas=-1']);
    assert.equal(scale.code, 1);
  });

  it('accepts every TLS source and auth, each working end to end (test/e2e/tls-*.test.ts, auth.test.ts)', async () => {
    const { run, file } = await env();
    const accepted: [string, Any][] = [
      [
        'tls-cm',
        {
          tls: {
            client: {
              certManager: { serverIssuerRef: { name: 'ca' }, operatorClientIssuerRef: { name: 'ca' } },
            },
            peer: { certManager: { issuerRef: { name: 'ca', kind: 'ClusterIssuer' } } },
          },
        },
      ],
      ['tls-auto', { tls: { client: { auto: {} }, peer: { auto: {} } } }],
      [
        'tls-byo',
        { tls: { client: { serverSecretRef: { name: 'srv' } }, peer: { secretRef: { name: 'peer' } } } },
      ],
      ['auth', { auth: { enabled: true, rootCredentialsSecretRef: { name: 'root' } } }],
    ];
    for (const [name, spec] of accepted)
      ok(await run(['apply', '-f', file(`${name}.yaml`, cluster(name, spec))]));
    const listed = ok(await run(['get', 'etcdclusters', '-o', 'name']))
      .trim()
      .split('\n')
      .sort();
    assert.deepEqual(listed, accepted.map(([n]) => `etcdcluster.etcdfn.io/${n}`).sort());
  });

  it('reports a stale kubectl replace as a Conflict', async () => {
    const { run, file } = await env();
    ok(await run(['create', '-f', file('c.yaml', cluster('r'))]));
    const live = JSON.parse(ok(await run(['get', 'etcdcluster', 'r', '-o', 'json']))) as Any;
    ok(await run(['patch', 'etcdcluster', 'r', '--type=merge', '-p', '{"spec":{"replicas":5}}']));
    live.spec.replicas = 1;
    const path = file('r.json', live);
    const stale = await run(['replace', '-f', path]);
    assert.equal(stale.code, 1);
    assert.equal(
      stale.stderr.trim(),
      `Error from server (Conflict): error when replacing "${path}": Operation cannot be fulfilled on etcdclusters.etcdfn.io "r": the object has been modified; please apply your changes to the latest version and try again`,
    );
  });

  it('deletes through finalizers, waiting for the last one to go', async () => {
    const { run, file, server, k } = await env();
    ok(
      await run([
        'apply',
        '-f',
        file('c.yaml', cluster('f', {}, { finalizers: ['etcdfn.io/member-cleanup'] })),
      ]),
    );
    const deleting = kubectl(k, ['delete', 'etcdcluster', 'f']);
    // The delete is seen as its effect (the object marked), not assumed after a pause.
    const marked = await waitFor('the object marked for deletion', async () => {
      const object = server.store.get<Any>('etcdfn.io/v1alpha1', 'EtcdCluster', 'f', NS);
      return object?.metadata.deletionTimestamp ? object : undefined;
    });
    assert.ok(marked.metadata.finalizers?.length, 'still held by its finalizer');
    server.store.patch(
      { apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdCluster', name: 'f', namespace: NS },
      { metadata: { finalizers: null } },
    );
    const done = await deleting;
    assert.equal(done.code, 0, done.stderr);
    assert.equal(done.stdout.trim(), 'etcdcluster.etcdfn.io "f" deleted');
    const missing = await run(['get', 'etcdcluster', 'f']);
    assert.equal(missing.stderr.trim(), 'Error from server (NotFound): etcdclusters.etcdfn.io "f" not found');
  });

  it('applies server-side, describes with events and waits for a condition', async () => {
    const { run, file, server, k } = await env();
    const path = file('s.yaml', cluster('ss'));
    assert.equal(
      ok(await run(['apply', '--server-side', '-f', path])).trim(),
      'etcdcluster.etcdfn.io/ss serverside-applied',
    );
    assert.equal(
      ok(await run(['apply', '--server-side', '-f', file('s.yaml', cluster('ss', { replicas: 5 }))])).trim(),
      'etcdcluster.etcdfn.io/ss serverside-applied',
    );
    const obj = server.store.get<Any>('etcdfn.io/v1alpha1', 'EtcdCluster', 'ss', NS)!;
    assert.equal(obj.spec.replicas, 5);
    server.store.create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'ss.1', namespace: NS },
      involvedObject: {
        apiVersion: 'etcdfn.io/v1alpha1',
        kind: 'EtcdCluster',
        name: 'ss',
        namespace: NS,
        uid: obj.metadata.uid,
      },
      reason: 'Scaled',
      message: 'scaled to 5 members',
      type: 'Normal',
      count: 1,
      source: { component: 'etcdfn' },
      firstTimestamp: new Date().toISOString(),
      lastTimestamp: new Date().toISOString(),
    });
    const described = ok(await run(['describe', 'etcdcluster', 'ss']));
    assert.match(described, /Replicas:\s+5/);
    assert.match(described, /Normal\s+Scaled\s+.*etcdfn\s+scaled to 5 members/);
    // Both API groups show the same Event: the object it is about and its message.
    for (const resource of ['events', 'events.events.k8s.io']) {
      const listed = ok(await run(['get', resource, '-o', 'wide']));
      assert.match(listed, /Normal\s+Scaled\s+etcdcluster\/ss\s+etcdfn\s+scaled to 5 members/, resource);
    }

    // The condition is set only once kubectl's watch is open, so the wait is met by a watch event.
    const watchesBefore = server.store.subscriberCount();
    const waiting = kubectl(k, ['wait', 'etcdcluster/ss', '--for=condition=Available', '--timeout=120s']);
    await waitFor('kubectl wait watching', async () => server.store.subscriberCount() > watchesBefore);
    server.store.patch(
      { apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdCluster', name: 'ss', namespace: NS },
      {
        status: {
          conditions: [
            {
              type: 'Available',
              status: 'True',
              reason: 'Quorum',
              message: 'ok',
              lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
            },
          ],
        },
      },
      'merge',
      { subresource: 'status' },
    );
    const waited = await waiting;
    assert.equal(waited.code, 0, waited.stderr);
    assert.equal(waited.stdout.trim(), 'etcdcluster.etcdfn.io/ss condition met');
  });

  it('handles core objects: typed create (protobuf), apply of Pods, selectors and graceful Pod deletion', async () => {
    const { run, file, server } = await env();
    assert.equal(ok(await run(['create', 'namespace', 'demo'])).trim(), 'namespace/demo created');
    assert.equal(
      ok(await run(['create', 'secret', 'generic', 's3', '--from-literal=key=secret', '-n', 'demo'])).trim(),
      'secret/s3 created',
    );
    assert.equal(
      ok(await run(['create', 'configmap', 'cfg', '--from-literal=a=b', '-n', 'demo'])).trim(),
      'configmap/cfg created',
    );
    const secret = server.store.get<Any>('v1', 'Secret', 's3', 'demo')!;
    assert.deepEqual(secret.data, { key: Buffer.from('secret').toString('base64') });
    assert.equal(secret.type, 'Opaque');

    const pod = (name: string, labels: Any, image = 'etcd:3.5.16') => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'demo', labels },
      spec: { containers: [{ name: 'etcd', image, ports: [{ containerPort: 2379 }] }] },
    });
    ok(
      await run([
        'apply',
        '-f',
        file('p1.yaml', pod('p1', { 'etcdfn.io/cluster': 'a', 'etcdfn.io/role': 'voter' })),
      ]),
    );
    ok(
      await run([
        'apply',
        '-f',
        file('p2.yaml', pod('p2', { 'etcdfn.io/cluster': 'a', 'etcdfn.io/role': 'learner' })),
      ]),
    );
    ok(await run(['apply', '-f', file('p3.yaml', pod('p3', { 'etcdfn.io/cluster': 'b' }))]));
    // A second client-side apply of a core kind is a strategic merge patch with $setElementOrder directives.
    assert.equal(
      ok(
        await run([
          'apply',
          '-f',
          file(
            'p1.yaml',
            pod('p1', { 'etcdfn.io/cluster': 'a', 'etcdfn.io/role': 'voter', extra: 'x' }, 'etcd:3.5.17'),
          ),
        ]),
      ).trim(),
      'pod/p1 configured',
    );
    const p1 = server.store.get<Any>('v1', 'Pod', 'p1', 'demo')!;
    assert.equal(p1.spec.containers[0].image, 'etcd:3.5.17');
    assert.equal(p1.metadata.labels.extra, 'x');

    const table = rows(
      ok(await run(['get', 'pods', '-n', 'demo', '-l', 'etcdfn.io/cluster in (a),etcdfn.io/role!=learner'])),
    );
    assert.deepEqual(table[0], ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    assert.deepEqual(
      table.slice(1).map(r => r.slice(0, 3)),
      [['p1', '0/1', 'Pending']],
    );
    const all = ok(
      await run(['get', 'all,pvc,etcdmember', '-n', 'demo', '-l', 'etcdfn.io/cluster=a', '-o', 'name']),
    );
    assert.deepEqual(all.trim().split('\n'), ['pod/p1', 'pod/p2']);

    // Pods wait for a kubelet: delete marks them, --force --grace-period=0 removes them.
    assert.equal(
      ok(await run(['delete', 'pod', 'p2', '-n', 'demo', '--wait=false'])).trim(),
      'pod "p2" deleted',
    );
    const terminating = rows(ok(await run(['get', 'pod', 'p2', '-n', 'demo'])));
    assert.equal(terminating[1][2], 'Terminating');
    ok(await run(['delete', 'pod', 'p2', '-n', 'demo', '--force', '--grace-period=0']));
    const gone = await run(['get', 'pod', 'p2', '-n', 'demo']);
    assert.equal(gone.stderr.trim(), 'Error from server (NotFound): pods "p2" not found');
  });
});
