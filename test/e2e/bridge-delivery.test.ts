// The event bridge end to end: a real API server, the bridge reading knative/, and four echo
// functions named after the Trigger subscribers, each served through the real functions framework.
// Checks what the functions receive against ApiServerSource's format in both modes, the routing of
// knative/triggers.yaml, retries (503), dead letters (400), chaos duplicates and the tick.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Request, Response } from 'express';
import type { DeliveryRecord } from '../../standalone/bridge/delivery.ts';
import type { OperatorEvent } from '../../shared/events/types.ts';

process.env.LOG_LEVEL ??= 'silent';
// Imported after LOG_LEVEL is set: these modules create the shared logger when loaded.
const ff = await import('@google-cloud/functions-framework');
const { functionServer, listen } = await import('../../shared/runtime/function-server.ts');
const { eventFunction } = await import('../../shared/events/handler.ts');
const { startBridge } = await import('../../standalone/bridge/bridge.ts');
const { KubeObjects } = await import('../../shared/k8s/objects.ts');
const { startApiServer } = await import('../support/api-server.ts');
type Bridge = Awaited<ReturnType<typeof startBridge>>;
type BridgeOptions = Parameters<typeof startBridge>[0];

const FUNCTIONS = ['reconcile-cluster', 'reconcile-member', 'finalize-member', 'run-snapshot'] as const;
type FunctionName = (typeof FUNCTIONS)[number];
const ETCDFN = 'etcdfn.io/v1alpha1';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** One POST as a function received it (every attempt, including the ones answered 4xx/5xx). */
interface Received {
  fn: FunctionName;
  headers: Record<string, string>;
  body: unknown;
  at: number;
}

const received: Received[] = [];
const handled: { fn: FunctionName; event: OperatorEvent }[] = [];
/** Objects (by name) whose events the functions answer with 400. */
const reject = new Set<string>();
/** Objects (by name) whose next N events the functions answer with 503. */
const flaky = new Map<string, number>();

for (const fn of FUNCTIONS) {
  const handle = eventFunction(fn, async event => {
    const name = event.kind === 'object' ? event.ref.name : '';
    const failures = flaky.get(name) ?? 0;
    if (failures > 0) {
      flaky.set(name, failures - 1);
      return { result: 'retry', reason: 'flaky on purpose', status: 503 };
    }
    handled.push({ fn, event });
    return { result: 'done', summary: 'echo' };
  });
  ff.http(fn, async (req: Request, res: Response) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
    received.push({ fn, headers, body: req.body, at: Date.now() });
    if (reject.has(headers['ce-name'] ?? '')) {
      res.status(400).json({ error: `${headers['ce-name']} is refused on purpose` });
      return;
    }
    await handle(req, res);
  });
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 20));
  }
}

const byName = (fn: FunctionName, name: string) =>
  received.filter(r => r.fn === fn && r.headers['ce-name'] === name);
const verbOf = (r: Received) => r.headers['ce-type']?.split('.').at(-1);

describe('event bridge → functions', () => {
  let api: Awaited<ReturnType<typeof startApiServer>>;
  let kube: InstanceType<typeof KubeObjects>;
  let kubeConfig: typeof api.kc;
  const servers: Server[] = [];
  const urls: Record<string, string> = {};

  before(async () => {
    api = await startApiServer();
    kubeConfig = api.kc;
    kube = new KubeObjects(kubeConfig);
    for (const fn of FUNCTIONS) {
      const server = functionServer(fn);
      servers.push(server);
      urls[fn] = `http://127.0.0.1:${await listen(server, 0)}`;
    }
  });

  after(async () => {
    await Promise.all(servers.map(s => new Promise(resolve => s.close(resolve))));
    await api.close();
  });

  /** Starts a bridge for one test and returns it with what it published. */
  async function bridgeFor(options: Partial<BridgeOptions> = {}) {
    const published: { id: string; name: unknown; routed: string[] }[] = [];
    const deliveries: DeliveryRecord[] = [];
    const bridge: Bridge = await startBridge({
      kubeConfig,
      apiServerUrl: api.url,
      subscribers: urls,
      tick: false,
      onEvent: (event, routed) => published.push({ id: event.id, name: event.name, routed }),
      onDelivery: record => deliveries.push(record),
      ...options,
    });
    return { bridge, published, deliveries };
  }

  const pod = (name: string, labels: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels },
    spec: { containers: [{ name: 'etcd', image: 'quay.io/coreos/etcd:v3.5.16' }] },
  });
  const podRef = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name });

  for (const mode of ['Reference', 'Resource'] as const) {
    it(`a Pod's add, update and delete arrive in ApiServerSource's ${mode} format`, async () => {
      const { bridge, published } = await bridgeFor({ mode });
      const started = Date.now();
      const name = `member-${mode.toLowerCase()}`;
      const stray = `stray-${mode.toLowerCase()}`;
      try {
        assert.equal((await kube.create(pod(stray, { app: 'other' }))).kind, 'created');
        assert.equal((await kube.create(pod(name, { 'etcdfn.io/cluster': 'demo' }))).kind, 'created');
        const patched = await kube.mergePatch(podRef(name), { metadata: { labels: { touched: 'yes' } } });
        assert.equal(patched.kind, 'written');
        await kube.mergePatch(podRef(stray), { metadata: { labels: { touched: 'yes' } } });
        await kube.delete(podRef(stray), { gracePeriodSeconds: 0 });
        assert.equal((await kube.delete(podRef(name), { gracePeriodSeconds: 0 })).kind, 'deleted');

        const events = await until(`${name}'s delete at reconcile-member`, () => {
          const got = byName('reconcile-member', name);
          return got.some(r => verbOf(r) === 'delete') && got;
        });
        const verbs = events.map(verbOf);
        assert.equal(verbs[0], 'add', verbs.join());
        assert.equal(verbs.at(-1), 'delete', verbs.join());
        assert.ok(
          verbs.slice(1, -1).length >= 1 && verbs.slice(1, -1).every(v => v === 'update'),
          verbs.join(),
        );

        const word = mode === 'Reference' ? 'ref' : 'resource';
        for (const r of events) {
          const h = r.headers;
          assert.equal(h['ce-specversion'], '1.0');
          assert.equal(h['ce-type'], `dev.knative.apiserver.${word}.${verbOf(r)}`);
          assert.equal(h['ce-source'], api.url);
          assert.equal(h['ce-subject'], `/apis/v1/namespaces/default/pods/${name}`);
          assert.match(h['ce-id'] ?? '', UUID);
          // Order, not elapsed time: stamped after the test began (to the whole second, the
          // coarsest ce-time) and no later than the event arrived.
          const time = Date.parse(h['ce-time'] ?? '');
          assert.ok(time >= Math.floor(started / 1000) * 1000 && time <= r.at, h['ce-time']);
          assert.match(h['content-type'] ?? '', /^application\/json/);
          assert.deepEqual(
            [h['ce-kind'], h['ce-name'], h['ce-namespace'], h['ce-apiversion']],
            ['Pod', name, 'default', 'v1'],
          );
          assert.ok(h['ce-knativearrivaltime'], 'the Broker stamps its arrival time');
          if (mode === 'Reference') {
            assert.deepEqual(r.body, { kind: 'Pod', namespace: 'default', name, apiVersion: 'v1' });
          } else {
            const object = r.body as { apiVersion: string; kind: string; metadata: Record<string, unknown> };
            assert.equal(object.kind, 'Pod');
            assert.equal(object.apiVersion, 'v1');
            assert.equal(object.metadata.name, name);
            assert.equal((object.metadata.labels as Record<string, string>)['etcdfn.io/cluster'], 'demo');
            assert.ok(object.metadata.resourceVersion);
          }
        }
        if (mode === 'Resource') {
          const update = events.find(r => verbOf(r) === 'update')?.body as {
            metadata: { labels: Record<string, string> };
          };
          assert.equal(update.metadata.labels.touched, 'yes', 'update carries the new object');
        }
        assert.equal(
          new Set(events.map(r => r.headers['ce-id'])).size,
          events.length,
          'a fresh id per event',
        );

        const decoded = handled.filter(h => h.event.kind === 'object' && h.event.ref.name === name);
        assert.equal(decoded.length, events.length, 'every event decodes in the function');
        for (const { event } of decoded) assert.ok(event.kind === 'object' && event.mode === mode);

        assert.deepEqual(
          published.filter(p => p.name === stray),
          [],
          'the label selector keeps the other Pod out',
        );
        assert.equal(received.filter(r => r.headers['ce-name'] === stray).length, 0);
        for (const fn of ['reconcile-cluster', 'finalize-member', 'run-snapshot'] as const) {
          assert.equal(byName(fn, name).length, 0, `${fn} does not get Pod events`);
        }
      } finally {
        await bridge.stop();
      }
    });
  }

  it('EtcdCluster and EtcdMember events reach only the Triggers that match', async () => {
    const { bridge } = await bridgeFor();
    try {
      const cluster = {
        apiVersion: ETCDFN,
        kind: 'EtcdCluster',
        metadata: { name: 'routed', namespace: 'default' },
        spec: { version: '3.5.16' },
      };
      assert.equal((await kube.create(cluster)).kind, 'created');
      const member = {
        apiVersion: ETCDFN,
        kind: 'EtcdMember',
        metadata: { name: 'routed-0', namespace: 'default', labels: { 'etcdfn.io/cluster': 'routed' } },
        spec: {
          clusterName: 'routed',
          version: '3.5.16',
          storage: { size: '1Gi' },
          initialCluster: '',
          clusterToken: 'tok',
        },
      };
      assert.equal((await kube.create(member)).kind, 'created');
      const memberRef = { apiVersion: ETCDFN, kind: 'EtcdMember', namespace: 'default', name: 'routed-0' };
      await until(
        'the member add at reconcile-cluster and reconcile-member',
        () =>
          byName('reconcile-cluster', 'routed-0').length > 0 &&
          byName('reconcile-member', 'routed-0').length > 0,
      );
      assert.equal(
        (await kube.mergePatch(memberRef, { metadata: { annotations: { step: '1' } } })).kind,
        'written',
      );
      await until(
        'the member update at finalize-member',
        () => byName('finalize-member', 'routed-0').length > 0,
      );
      await until('the member update at reconcile-cluster', () =>
        byName('reconcile-cluster', 'routed-0').some(r => verbOf(r) === 'update'),
      );

      assert.deepEqual(byName('reconcile-cluster', 'routed').map(verbOf), ['add']);
      for (const fn of ['reconcile-member', 'finalize-member', 'run-snapshot'] as const) {
        assert.equal(byName(fn, 'routed').length, 0, `${fn} does not get EtcdCluster events`);
      }
      const cluster0 = byName('reconcile-cluster', 'routed')[0];
      assert.equal(
        cluster0?.headers['ce-subject'],
        '/apis/etcdfn.io/v1alpha1/namespaces/default/etcdclusters/routed',
      );
      assert.equal(cluster0?.headers['ce-apiversion'], ETCDFN);

      await bridge.idle();
      assert.deepEqual(byName('reconcile-member', 'routed-0').map(verbOf), ['add', 'update']);
      assert.deepEqual(
        byName('finalize-member', 'routed-0').map(verbOf),
        ['update'],
        'the add is filtered out',
      );
      assert.equal(byName('run-snapshot', 'routed-0').length, 0);
      // One CloudEvent fanned out to several Triggers keeps its id.
      const addIds = FUNCTIONS.flatMap(fn =>
        byName(fn, 'routed-0')
          .filter(r => verbOf(r) === 'add')
          .map(r => r.headers['ce-id']),
      );
      assert.equal(addIds.length, 2);
      assert.equal(new Set(addIds).size, 1);
    } finally {
      await bridge.stop();
    }
  });

  it('a 503 is retried with the same event until the function handles it', async () => {
    const { bridge, deliveries } = await bridgeFor();
    try {
      flaky.set('flaky', 1);
      const cluster = {
        apiVersion: ETCDFN,
        kind: 'EtcdCluster',
        metadata: { name: 'flaky', namespace: 'default' },
        spec: { version: '3.5.16' },
      };
      assert.equal((await kube.create(cluster)).kind, 'created');
      // The bridge records a delivery once the function's reply is in, which can be after the
      // handler ran: wait for the record of the successful attempt, not only for the handler.
      await until(
        'flaky handled and its delivery recorded',
        () =>
          handled.some(h => h.event.kind === 'object' && h.event.ref.name === 'flaky') &&
          deliveries.some(
            d =>
              d.subscriber === 'reconcile-cluster' &&
              d.subject?.endsWith('/flaky') &&
              d.outcome === 'delivered',
          ),
      );
      const attempts = byName('reconcile-cluster', 'flaky');
      assert.equal(attempts.length, 2, 'delivered twice');
      assert.equal(new Set(attempts.map(a => a.headers['ce-id'])).size, 1, 'the retry is the same event');
      assert.equal(
        handled.filter(h => h.event.kind === 'object' && h.event.ref.name === 'flaky').length,
        1,
        'handled once',
      );
      const records = deliveries.filter(
        d => d.subscriber === 'reconcile-cluster' && d.subject?.endsWith('/flaky'),
      );
      assert.deepEqual(
        records.map(d => [d.attempt, d.status, d.outcome]),
        [
          [1, 503, 'retry'],
          [2, 200, 'delivered'],
        ],
      );
      assert.equal(bridge.deadLetters.length, 0);
    } finally {
      await bridge.stop();
    }
  });

  it('a 400 is not retried: the event is dead-lettered with the response body', async () => {
    const { bridge } = await bridgeFor();
    try {
      reject.add('refused');
      const cluster = {
        apiVersion: ETCDFN,
        kind: 'EtcdCluster',
        metadata: { name: 'refused', namespace: 'default' },
        spec: { version: '3.5.16' },
      };
      assert.equal((await kube.create(cluster)).kind, 'created');
      const letter = await until('a dead letter', () =>
        bridge.deadLetters.find(d => d.event.name === 'refused'),
      );
      assert.equal(letter.status, 400);
      assert.equal(letter.subscriber, 'reconcile-cluster');
      assert.equal(letter.attempts, 1);
      assert.match(letter.body ?? '', /refused on purpose/);
      await bridge.idle();
      assert.equal(byName('reconcile-cluster', 'refused').length, 1, 'delivered once, never retried');
    } finally {
      await bridge.stop();
    }
  });

  it('the tick reaches reconcile-cluster, reconcile-member and run-snapshot, and only them', async () => {
    const { bridge } = await bridgeFor({ tick: true, tickSeconds: 0.2 });
    const pings = (fn: FunctionName) =>
      received.filter(r => r.fn === fn && r.headers['ce-type'] === 'dev.knative.sources.ping');
    try {
      const [now] = bridge.tickNow();
      await until(
        'the scheduled tick and tickNow at the three functions',
        () =>
          pings('reconcile-cluster').length >= 2 &&
          pings('reconcile-member').length >= 2 &&
          pings('run-snapshot').length >= 2,
      );
      for (const fn of ['reconcile-cluster', 'reconcile-member', 'run-snapshot'] as const) {
        const got = pings(fn);
        assert.ok(
          got.some(p => p.headers['ce-id'] === now?.id),
          `${fn} got tickNow()`,
        );
        assert.equal(got[0]?.headers['ce-source'], '/apis/v1/namespaces/default/pingsources/etcdfn-tick');
        assert.deepEqual(got[0]?.body, { tick: 'resync' });
      }
      assert.ok(handled.some(h => h.fn === 'run-snapshot' && h.event.kind === 'tick'));
    } finally {
      await bridge.stop();
    }
    assert.equal(pings('finalize-member').length, 0);
  });

  it('chaos with a fixed seed delivers some events twice', async () => {
    const { bridge } = await bridgeFor({ chaos: { seed: 7, duplicate: 0.5 } });
    const names = Array.from({ length: 6 }, (_, i) => `chaos-${i}`);
    try {
      for (const name of names) await kube.create(pod(name, { 'etcdfn.io/cluster': 'chaos' }));
      await until('every chaos Pod at reconcile-member', () =>
        names.every(n => byName('reconcile-member', n).length > 0),
      );
      await bridge.idle();
      const duplicated = bridge.stats.chaos?.duplicated ?? 0;
      const got = names.flatMap(n => byName('reconcile-member', n));
      assert.ok(duplicated > 0, 'seed 7 duplicates some of six events');
      assert.equal(got.length, names.length + duplicated);
      const perId = new Map<string, number>();
      for (const r of got)
        perId.set(r.headers['ce-id'] ?? '', (perId.get(r.headers['ce-id'] ?? '') ?? 0) + 1);
      assert.equal(
        [...perId.values()].filter(n => n === 2).length,
        duplicated,
        'a duplicate is the same event again',
      );
    } finally {
      await bridge.stop();
      for (const name of names) await kube.delete(podRef(name), { gracePeriodSeconds: 0 });
    }
  });

  it('replayInitialList sends add events for objects that already exist (off by default)', async () => {
    const { bridge, published } = await bridgeFor({ replayInitialList: true });
    try {
      await until('the replayed EtcdCluster', () => byName('reconcile-cluster', 'routed').length > 1);
      const replayed = byName('reconcile-cluster', 'routed').at(-1);
      assert.equal(verbOf(replayed as Received), 'add');
      assert.ok(published.some(p => p.name === 'flaky'));
    } finally {
      await bridge.stop();
    }
  });
});
