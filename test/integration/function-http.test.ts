// The HTTP contract of the four real functions (functions/*): each entry point is loaded, served by
// the functions framework on a loopback port, and sent real HTTP CloudEvents, in binary and in
// structured mode, with the sandbox API server behind it. 2xx = done (including "nothing to do"),
// 4xx = can never succeed (with a message, never reaching the handler's work), 5xx = try again.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FUNCTION_NAMES, loadFunction, type FunctionName } from '../../functions/registry.ts';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { loadKubeConfig } from '../../shared/k8s/client.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { functionServer, listen } from '../../shared/runtime/function-server.ts';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';
import { loadEventFixture, loadEventFixtures, wireBody, type EventFixture } from '../support/fixtures.ts';

interface Answer {
  status: number;
  /** the body as sent */
  text: string;
  body: Record<string, unknown>;
  headers: Headers;
}

/** A binary-mode fixture as the same event in structured mode (application/cloudevents+json). */
function structured(fixture: EventFixture): { headers: Record<string, string>; body: string } {
  const attributes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fixture.headers)) {
    if (key.startsWith('ce-')) attributes[key.slice(3)] = value;
  }
  const data = typeof fixture.body === 'string' ? JSON.parse(fixture.body) : fixture.body;
  return {
    headers: { 'content-type': 'application/cloudevents+json; charset=utf-8' },
    body: JSON.stringify({ ...attributes, datacontenttype: 'application/json', data }),
  };
}

const isBinary = (f: EventFixture) => f.headers['ce-id'] !== undefined;
const valid = loadEventFixtures().filter(f => f.expect.status < 400);
const malformed = loadEventFixtures().filter(f => f.expect.status >= 400);

describe('the HTTP contract of the four real functions', () => {
  let api: TestApiServer;
  let dir: string;
  let kubeconfig: string;
  const servers = new Map<FunctionName, Server>();
  const urls = new Map<FunctionName, string>();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'etcdfn-function-http-'));
    api = await startApiServer();
    kubeconfig = join(dir, 'kubeconfig');
    api.writeKubeconfig(kubeconfig);
    // The functions build their context on first use, from $KUBECONFIG.
    process.env.KUBECONFIG = kubeconfig;
    process.env.LOG_LEVEL = 'silent';
    for (const name of FUNCTION_NAMES) {
      // A function that fails to load fails the suite: its literal import() throws.
      await loadFunction(name);
      const server = functionServer(name);
      const port = await listen(server, 0);
      servers.set(name, server);
      urls.set(name, `http://127.0.0.1:${port}/`);
    }
  });
  after(async () => {
    await Promise.all([...servers.values()].map(s => new Promise(done => s.close(done))));
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function send(
    name: FunctionName,
    method: string,
    headers: Record<string, string> = {},
    body?: string,
  ): Promise<Answer> {
    const res = await fetch(urls.get(name) ?? '', { method, headers, ...(body !== undefined && { body }) });
    const text = await res.text();
    let parsed: Record<string, unknown>;
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      parsed = { text };
    }
    return { status: res.status, text, body: parsed, headers: res.headers };
  }

  it('serves all four functions', () => {
    assert.deepEqual([...servers.keys()].sort(), [...FUNCTION_NAMES].sort());
  });

  for (const name of FUNCTION_NAMES) {
    describe(name, () => {
      for (const fixture of valid) {
        it(`${fixture.file} (${isBinary(fixture) ? 'binary' : 'structured'}) → 2xx done`, async () => {
          const res = await send(name, 'POST', fixture.headers, wireBody(fixture));
          assert.ok(res.status >= 200 && res.status < 300, `${res.status}: ${JSON.stringify(res.body)}`);
          // An empty reply: behind a Knative Broker, a non-empty reply that is not a CloudEvent is a
          // failed delivery (the broker filter answers 502 and the event is retried, then dead-lettered).
          assert.equal(res.text, '');
        });
        if (isBinary(fixture)) {
          it(`${fixture.file} in structured mode → the same answer`, async () => {
            const binary = await send(name, 'POST', fixture.headers, wireBody(fixture));
            const event = structured(fixture);
            const res = await send(name, 'POST', event.headers, event.body);
            assert.equal(res.status, binary.status, JSON.stringify(res.body));
            assert.deepEqual(res.body, binary.body);
          });
        }
      }

      for (const fixture of malformed) {
        it(`${fixture.file} → ${fixture.expect.status} saying why`, async () => {
          const res = await send(name, 'POST', fixture.headers, wireBody(fixture));
          assert.equal(res.status, fixture.expect.status, JSON.stringify(res.body));
          assert.equal(typeof res.body.error, 'string');
          assert.match(String(res.body.error), new RegExp(fixture.expect.error ?? '.'));
        });
      }

      it('an unknown event type is a 400 that names it as unsupported (it can never succeed)', async () => {
        const fixture = loadEventFixture('cluster-ref-update.json');
        const res = await send(
          name,
          'POST',
          { ...fixture.headers, 'ce-type': 'io.example.unknown' },
          wireBody(fixture),
        );
        assert.equal(res.status, 400);
        assert.match(String(res.body.error), /unsupported event type/);
      });

      it('a body that is not JSON under application/json is a 400 with the parser’s message', async () => {
        const fixture = loadEventFixture('cluster-ref-update.json');
        const res = await send(name, 'POST', fixture.headers, '{not json');
        assert.equal(res.status, 400);
        assert.match(String(res.body.error), /unreadable request body: .*JSON/);
      });

      it('GET is the readiness probe; PUT is a 405 that says to POST', async () => {
        const get = await send(name, 'GET');
        assert.equal(get.status, 200);
        assert.deepEqual(get.body, { function: name, ready: true });
        const put = await send(name, 'PUT', { 'content-type': 'application/json' }, '{}');
        assert.equal(put.status, 405);
        assert.equal(put.headers.get('allow'), 'GET, POST');
        assert.match(String(put.body.error), /POST a CloudEvent/);
      });
    });
  }

  it('reconcile-cluster acts on an event for a cluster that exists: 200, and the cluster is claimed', async () => {
    const kube = new KubeObjects(loadKubeConfig(kubeconfig));
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: 'demo', namespace: 'default' },
      spec: { replicas: 1, version: '3.5.16' },
    });
    assert.equal(created.kind, 'created');
    const fixture = loadEventFixture('cluster-ref-update.json');
    const res = await send('reconcile-cluster', 'POST', fixture.headers, wireBody(fixture));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, '');
    const read = await kube.get<EtcdCluster & KubeObject>({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      namespace: 'default',
      name: 'demo',
    });
    assert.equal(read.kind, 'found');
    const cluster = (read as { object: EtcdCluster & KubeObject }).object;
    // The first step of a new cluster changed it (finalizer or status): the event reached the work.
    assert.ok(
      (cluster.metadata.finalizers?.length ?? 0) > 0 || cluster.status !== undefined,
      JSON.stringify(cluster),
    );
  });

  it('GET /metrics counts the events each function handled, API calls by outcome, and names no object', async () => {
    const res = await fetch(`${urls.get('reconcile-cluster')}metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const sample = (pattern: RegExp): number => {
      const line = text.split('\n').find(l => pattern.test(l));
      assert.ok(line, `no sample matching ${pattern}:\n${text}`);
      return Number(line.split(' ').at(-1));
    };
    // Every function answered fixtures above: done and rejected events, each with a duration.
    for (const name of FUNCTION_NAMES) {
      assert.ok(
        sample(
          new RegExp(
            `^etcdfn_events_total\\{function="${name}",mode="(ref|resource|ping)",verb="[a-z]+",outcome="done"\\}`,
          ),
        ) > 0,
      );
      assert.ok(
        sample(
          new RegExp(
            `^etcdfn_events_total\\{function="${name}",mode="none",verb="none",outcome="rejected"\\}`,
          ),
        ) > 0,
      );
      assert.ok(
        sample(new RegExp(`^etcdfn_event_duration_seconds_count\\{function="${name}",outcome="done"\\}`)) > 0,
      );
    }
    // The claim of "demo" above: a read of the cluster and a status write, counted by kind and result.
    assert.ok(sample(/^etcdfn_kube_requests_total\{verb="get",resource="EtcdCluster",result="found"\}/) > 0);
    assert.ok(
      sample(
        /^etcdfn_kube_requests_total\{verb="(replaceStatus|mergePatchStatus|replace|mergePatch)",resource="EtcdCluster",result="written"\}/,
      ) > 0,
    );
    // A tick lists every cluster and records them by phase.
    const tick = loadEventFixture('tick.json');
    assert.equal((await send('reconcile-cluster', 'POST', tick.headers, wireBody(tick))).status, 200);
    const after = await (await fetch(`${urls.get('reconcile-cluster')}metrics`)).text();
    assert.match(after, /^etcdfn_clusters\{phase="[A-Za-z]+"\} 1$/m);
    // Labels are kinds and outcomes only: no namespace or object name reaches a scrape.
    assert.doesNotMatch(after, /demo|default/);
  });

  it('with the API server gone, an event that needs it is answered 5xx (retried), the reason kept out of the reply', async () => {
    await api.close();
    const events: [FunctionName, string][] = [
      ['reconcile-cluster', 'cluster-ref-update.json'],
      ['reconcile-member', 'member-ref-update.json'],
      ['finalize-member', 'member-ref-update.json'],
      ['run-snapshot', 'snapshot-ref-update.json'],
    ];
    for (const [name, file] of events) {
      const fixture = loadEventFixture(file);
      const res = await send(name, 'POST', fixture.headers, wireBody(fixture));
      assert.ok(res.status >= 500, `${name}: ${res.status} ${JSON.stringify(res.body)}`);
      // The reason goes to the log, not the reply: a caller learns nothing about the cluster.
      assert.deepEqual(
        Object.keys(res.body).sort(),
        ['id', 'result'],
        `${name}: ${JSON.stringify(res.body)}`,
      );
      assert.ok(['error', 'retry'].includes(String(res.body.result)), `${name}: ${JSON.stringify(res.body)}`);
    }
  });
});
