// kubectl against the sandbox's control plane (the real kube-apiserver with etcdfn's CRDs), as a
// user drives an EtcdCluster: apply (created / unchanged / configured), get with the CRD's printer
// columns, explain, scale through the scale subresource, server-side apply, describe with Events,
// wait for a condition, and every TLS source and auth accepted. kubectl runs with its own HOME.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { CRD_DIR, startApiServer, type TestApiServer } from '../support/api-server.ts';

const NS = 'default';
const GROUP_PATH = `/apis/etcdfn.io/v1alpha1/namespaces/${NS}/etcdclusters`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cluster(name: string, spec: Any = {}): Any {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name, labels: { app: 'demo' } },
    spec: { replicas: 3, version: '3.5.16', ...spec },
  };
}

function ok(r: Run): string {
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

describe('kubectl against the sandbox: EtcdClusters', () => {
  let api: TestApiServer;
  let dir: string;

  const run = (...args: string[]): Promise<Run> =>
    new Promise(resolve => {
      execFile(
        'kubectl',
        ['--kubeconfig', api.kubeconfig, '--cache-dir', join(dir, 'cache'), '-n', NS, ...args],
        { env: { ...process.env, HOME: dir } },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  const file = (name: string, content: Any): string => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };
  const setStatus = async (name: string, status: Any): Promise<void> => {
    const reply = await api.request(
      'PATCH',
      `${GROUP_PATH}/${name}/status`,
      { status },
      'application/merge-patch+json',
    );
    assert.equal(reply.status, 200, reply.body);
  };
  const read = async (name: string): Promise<Any> => {
    const reply = await api.request('GET', `${GROUP_PATH}/${name}`);
    assert.equal(reply.status, 200, reply.body);
    return JSON.parse(reply.body) as Any;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubectl-etcdcluster-'));
    api = await startApiServer();
  });

  after(async () => {
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies an EtcdCluster and shows the CRD printer columns', async () => {
    const path = file('c.yaml', cluster('x'));
    assert.equal(ok(await run('apply', '-f', path)).trim(), 'etcdcluster.etcdfn.io/x created');
    assert.equal(ok(await run('apply', '-f', path)).trim(), 'etcdcluster.etcdfn.io/x unchanged');
    await setStatus('x', { ready: '2/3' });
    const table = rows(ok(await run('get', 'etcdclusters')));
    const crd = parse(readFileSync(join(CRD_DIR, 'etcdfn.io_etcdclusters.yaml'), 'utf8')) as Any;
    const columns = (crd.spec.versions[0].additionalPrinterColumns as Any[])
      .filter(c => !c.priority)
      .map(c => String(c.name).toUpperCase());
    assert.deepEqual(table[0], ['NAME', ...columns]);
    assert.equal(table[1][0], 'x');
    assert.ok(table[1].includes('2/3'), `ready column shown: ${table[1].join('|')}`);
    assert.ok(table[1].includes('3.5.16'));
    assert.match(table[1][table[1].length - 1], /^\d+s$/, 'age formatted by the server');

    const changed = file('c.yaml', cluster('x', { replicas: 5 }));
    assert.equal(ok(await run('apply', '-f', changed)).trim(), 'etcdcluster.etcdfn.io/x configured');
    assert.equal(ok(await run('get', 'etcd', 'x', '-o', 'jsonpath={.spec.replicas}')), '5');
    const all = rows(ok(await run('get', 'etcdclusters', '-A', '--show-labels')));
    assert.equal(all[0][0], 'NAMESPACE');
    assert.equal(all[1][0], 'default');
    assert.equal(all[1][all[1].length - 1], 'app=demo');
  });

  it('explains etcdcluster.spec from the published schema', async () => {
    const out = ok(await run('explain', 'etcdcluster.spec'));
    assert.match(out, /GROUP:\s+etcdfn\.io\n/);
    assert.match(out, /KIND:\s+EtcdCluster\n/);
    assert.match(out, /VERSION:\s+v1alpha1\n/);
    assert.match(out, /FIELD: spec <Object>/);
    assert.match(out, /\breplicas\b/);
    assert.match(out, /\bversion\b/);
  });

  it('scales an EtcdCluster with kubectl scale', async () => {
    ok(await run('apply', '-f', file('s.yaml', cluster('s'))));
    assert.equal(
      ok(await run('scale', 'etcdcluster', 's', '--replicas=5')).trim(),
      'etcdcluster.etcdfn.io/s scaled',
    );
    const scaled = await read('s');
    assert.equal(scaled.spec.replicas, 5);
    assert.equal(scaled.metadata.generation, 2);
    // --current-replicas makes kubectl GET /scale and check it first.
    assert.equal(
      ok(await run('scale', 'etcdcluster', 's', '--current-replicas=5', '--replicas=3')).trim(),
      'etcdcluster.etcdfn.io/s scaled',
    );
    assert.equal((await read('s')).spec.replicas, 3);
    const wrong = await run('scale', 'etcdcluster', 's', '--current-replicas=9', '--replicas=1');
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /Expected replicas to be 9, was 3/);
  });

  it('accepts every TLS source and auth, and refuses two peer sources at once', async () => {
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
      ok(await run('apply', '-f', file(`${name}.yaml`, cluster(name, spec))));
    const listed = ok(await run('get', 'etcdclusters', '-o', 'name'))
      .trim()
      .split('\n');
    for (const [name] of accepted) assert.ok(listed.includes(`etcdcluster.etcdfn.io/${name}`), name);
    const both = { tls: { peer: { auto: {}, secretRef: { name: 'peer' } } } };
    const r = await run('apply', '-f', file('both.yaml', cluster('both', both)));
    assert.equal(r.code, 1, 'two peer sources were accepted');
    assert.match(r.stderr, /spec\.tls\.peer needs exactly one certificate source/);
  });

  it('applies server-side, describes with Events and waits for a condition', async () => {
    const path = file('ss.yaml', cluster('ss'));
    assert.equal(
      ok(await run('apply', '--server-side', '-f', path)).trim(),
      'etcdcluster.etcdfn.io/ss serverside-applied',
    );
    const five = file('ss.yaml', cluster('ss', { replicas: 5 }));
    assert.equal(
      ok(await run('apply', '--server-side', '-f', five)).trim(),
      'etcdcluster.etcdfn.io/ss serverside-applied',
    );
    const obj = await read('ss');
    assert.equal(obj.spec.replicas, 5);
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const event = await api.request('POST', `/api/v1/namespaces/${NS}/events`, {
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
      firstTimestamp: now,
      lastTimestamp: now,
    });
    assert.equal(event.status, 201, event.body);
    const described = ok(await run('describe', 'etcdcluster', 'ss'));
    assert.match(described, /Replicas:\s+5/);
    assert.match(described, /Normal\s+Scaled\s+.*etcdfn\s+scaled to 5 members/);

    const waiting = run('wait', 'etcdcluster/ss', '--for=condition=Available', '--timeout=60s');
    await new Promise(r => setTimeout(r, 1000));
    await setStatus('ss', {
      conditions: [
        { type: 'Available', status: 'True', reason: 'Quorum', message: 'ok', lastTransitionTime: now },
      ],
    });
    const waited = await waiting;
    assert.equal(waited.code, 0, waited.stderr);
    assert.equal(waited.stdout.trim(), 'etcdcluster.etcdfn.io/ss condition met');
  });
});
