// The bridge's small parts: manifest parsing, the retry predicate and back-off, chaos determinism, and
// the dispatcher against a plain local HTTP server.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { after, before, describe, it, mock } from 'node:test';
import { pino } from 'pino';
import { DEFAULT_KNATIVE_DIR } from '../../standalone/bridge/bridge.ts';
import { Chaos, seededRandom } from '../../standalone/bridge/chaos.ts';
import { backoffMs, Dispatcher, isRetryable, type DeliveryRecord } from '../../standalone/bridge/delivery.ts';
import { pingEvent } from '../../standalone/bridge/format.ts';
import {
  labelSelectorToString,
  loadBrokerDelivery,
  loadSources,
  parseIsoDuration,
  parseManifests,
  parseSources,
} from '../../standalone/bridge/sources.ts';
import { Ticker } from '../../standalone/bridge/tick.ts';

const silent = pino({ level: 'silent' });

describe('knative/ manifests', () => {
  it('sources.yaml: two ApiServerSources and the tick', () => {
    const { apiServerSources, pingSources } = loadSources(DEFAULT_KNATIVE_DIR);
    assert.deepEqual(
      apiServerSources.map(s => [
        s.name,
        s.mode,
        s.namespaces.kind,
        s.resources.map(r => `${r.kind}:${r.labelSelector ?? ''}`),
      ]),
      [
        [
          'etcdfn-resources',
          'Reference',
          'all',
          ['EtcdCluster:', 'EtcdMember:', 'EtcdSnapshot:', 'EtcdSnapshotSchedule:'],
        ],
        [
          'etcdfn-owned',
          'Reference',
          'all',
          ['Pod:etcdfn.io/cluster', 'PersistentVolumeClaim:etcdfn.io/cluster', 'Job:etcdfn.io/cluster'],
        ],
      ],
    );
    assert.deepEqual(pingSources, [
      {
        name: 'etcdfn-tick',
        // The base names no namespace (an overlay sets it); Kubernetes' default applies.
        namespace: 'default',
        schedule: '*/10 * * * *',
        contentType: 'application/json',
        data: '{"tick":"resync"}',
      },
    ]);
  });

  it('broker.yaml: delivery', () => {
    assert.deepEqual(loadBrokerDelivery(DEFAULT_KNATIVE_DIR), {
      retry: 6,
      backoffPolicy: 'exponential',
      backoffDelayMs: 1000,
      timeoutMs: 660_000,
    });
  });

  it('defaults: Reference mode, own namespace without namespaceSelector', () => {
    const [source] = parseSources(
      parseManifests(
        'kind: ApiServerSource\nmetadata: {name: s, namespace: ns}\nspec: {resources: [{apiVersion: v1, kind: Pod}]}\n',
      ),
    ).apiServerSources;
    assert.equal(source?.mode, 'Reference');
    assert.deepEqual(source?.namespaces, { kind: 'own', namespace: 'ns' });
  });

  it('label selectors as the API server takes them', () => {
    assert.equal(
      labelSelectorToString({
        matchLabels: { app: 'etcd' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['b', 'a'] },
          { key: 'zone', operator: 'NotIn', values: ['x'] },
          { key: 'etcdfn.io/cluster', operator: 'Exists' },
          { key: 'skip', operator: 'DoesNotExist' },
        ],
      }),
      'app=etcd,etcdfn.io/cluster,!skip,tier in (a,b),zone notin (x)',
    );
    assert.equal(labelSelectorToString({}), '');
    assert.throws(
      () => labelSelectorToString({ matchExpressions: [{ key: 'k', operator: 'In' }] }),
      /needs values/,
    );
  });

  it('ISO-8601 durations', () => {
    assert.equal(parseIsoDuration('PT0.2S'), 200);
    assert.equal(parseIsoDuration('PT120S'), 120_000);
    assert.equal(parseIsoDuration('PT1M30S'), 90_000);
    assert.equal(parseIsoDuration('P1DT1H'), 90_000_000);
    for (const bad of ['P', 'PT', '0.2S', 'P1W', 'PT-1S'])
      assert.throws(() => parseIsoDuration(bad), /ISO-8601/, bad);
  });
});

describe('retry policy', () => {
  it("Knative's SelectiveRetry", () => {
    for (const s of [undefined, 404, 408, 409, 429, 500, 502, 503, 504])
      assert.equal(isRetryable(s), true, String(s));
    for (const s of [400, 401, 403, 410, 413, 422, 301]) assert.equal(isRetryable(s), false, String(s));
  });

  it('back-off: exponential delay·2^n, linear delay·n', () => {
    const exp = { backoffPolicy: 'exponential' as const, backoffDelayMs: 200 };
    assert.deepEqual(
      [0, 1, 2, 3].map(n => backoffMs(exp, n)),
      [200, 400, 800, 1600],
    );
    const lin = { backoffPolicy: 'linear' as const, backoffDelayMs: 200 };
    assert.deepEqual(
      [0, 1, 2].map(n => backoffMs(lin, n)),
      [0, 200, 400],
    );
  });
});

describe('chaos', () => {
  const run = (seed: number) => {
    const out: number[] = [];
    const chaos = new Chaos<number>({ seed, duplicate: 0.3, reorderWindow: 4 }, n => out.push(n));
    for (let i = 0; i < 20; i++) chaos.submit(i);
    chaos.flush();
    chaos.stop();
    return { out, stats: { ...chaos.stats } };
  };

  it('the PRNG is deterministic and uniform enough', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const xs = Array.from({ length: 1000 }, () => a());
    assert.deepEqual(
      xs.slice(0, 5),
      Array.from({ length: 5 }, () => b()),
    );
    assert.ok(xs.every(x => x >= 0 && x < 1));
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    assert.ok(Math.abs(mean - 0.5) < 0.05, String(mean));
  });

  it('same seed, same chaos; every item still delivered at least once', () => {
    const first = run(42);
    assert.deepEqual(run(42), first);
    assert.notDeepEqual(run(43).out, first.out);
    assert.ok(first.stats.duplicated > 0);
    assert.equal(first.out.length, 20 + first.stats.duplicated);
    assert.deepEqual(
      [...new Set(first.out)].sort((x, y) => x - y),
      Array.from({ length: 20 }, (_, i) => i),
    );
    assert.notDeepEqual(
      first.out.slice(0, 20),
      Array.from({ length: 20 }, (_, i) => i),
      'reordered',
    );
  });

  // The clock is the test's (mocked timers): "later" and "never" are shown by moving it past the
  // longest delay, not by sleeping.
  it('delays release later, and stop() drops what is held', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const out: number[] = [];
      const chaos = new Chaos<number>({ seed: 1, maxDelayMs: 30 }, n => out.push(n));
      chaos.submit(1);
      chaos.submit(2);
      assert.ok(out.length < 2, 'at least one item is held back, not forwarded at once');
      mock.timers.tick(30);
      assert.deepEqual([...out].sort(), [1, 2]);
      chaos.submit(3);
      chaos.stop();
      mock.timers.tick(30);
      assert.equal(out.length, 2);
    } finally {
      mock.timers.reset();
    }
  });
});

describe('tick', () => {
  it('tickNow sends the PingSource event; the cron schedule is parsed', () => {
    const events: string[] = [];
    const ping = { name: 'etcdfn-tick', namespace: 'etcdfn-system', schedule: '*/5 * * * *' };
    const ticker = new Ticker({ ping, onTick: e => events.push(e.type), log: silent });
    ticker.start();
    const next = ticker.nextRun();
    assert.ok(next && next.getUTCMinutes() % 5 === 0 && next.getUTCSeconds() === 0);
    ticker.tickNow();
    ticker.stop();
    assert.deepEqual(events, ['dev.knative.sources.ping']);
    assert.throws(() => new Ticker({ ping: { ...ping, schedule: '* * * * * *' }, onTick: () => {} }).start());
  });
});

describe('dispatcher', () => {
  const hits: { path: string; id: string; contentType: string }[] = [];
  const script = new Map<string, number[]>();
  // Requests to /slow are answered only when the suite ends: a timeout cannot lose a race to them.
  const held: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      hits.push({
        path,
        id: String(req.headers['ce-id'] ?? ''),
        contentType: String(req.headers['content-type']),
      });
      if (path === '/slow') return void held.push(res);
      const status = script.get(path)?.shift() ?? 200;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ status }));
    });
  });
  let base = '';
  before(async () => {
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  after(
    () =>
      new Promise<void>(resolve => {
        for (const res of held) res.writeHead(200).end();
        server.close(() => resolve());
      }),
  );

  const policy = { retry: 3, backoffPolicy: 'exponential' as const, backoffDelayMs: 5 };
  const job = (path: string, overrides = {}) => ({
    subscriber: 's',
    trigger: 't',
    url: `${base}${path}`,
    event: pingEvent({
      name: 'p',
      namespace: 'n',
      schedule: '* * * * *',
      contentType: 'application/json',
      data: '{}',
    }),
    policy: { ...policy, ...overrides },
  });

  it('retries 503 and 409 then succeeds; the same event every time', async () => {
    script.set('/flaky', [503, 409]);
    const records: DeliveryRecord[] = [];
    const d = new Dispatcher({ log: silent, onAttempt: r => records.push(r) });
    assert.equal(await d.submit(job('/flaky')), 'delivered');
    const attempts = hits.filter(h => h.path === '/flaky');
    assert.equal(attempts.length, 3);
    assert.equal(new Set(attempts.map(a => a.id)).size, 1);
    assert.deepEqual(
      records.map(r => [r.attempt, r.status, r.outcome]),
      [
        [1, 503, 'retry'],
        [2, 409, 'retry'],
        [3, 200, 'delivered'],
      ],
    );
  });

  it('400 is dead-lettered at once with the response body', async () => {
    script.set('/bad', [400]);
    const d = new Dispatcher({ log: silent });
    assert.equal(await d.submit(job('/bad')), 'dead-lettered');
    assert.equal(hits.filter(h => h.path === '/bad').length, 1);
    assert.equal(d.deadLetters.length, 1);
    assert.equal(d.deadLetters[0]?.status, 400);
    assert.equal(d.deadLetters[0]?.body, '{"status":400}');
  });

  it('gives up after `retry` retries; times out slow requests; structured mode on request', async () => {
    script.set('/down', [500, 500, 500, 500, 500]);
    const d = new Dispatcher({ log: silent });
    assert.equal(await d.submit(job('/down', { retry: 2 })), 'dead-lettered');
    assert.equal(hits.filter(h => h.path === '/down').length, 3);
    assert.equal(await d.submit(job('/slow', { retry: 0, timeoutMs: 50 })), 'dead-lettered');
    assert.equal(d.deadLetters.at(-1)?.error, 'request timed out');
    assert.equal(await d.submit(job('/structured', { format: 'structured' })), 'delivered');
    assert.match(hits.at(-1)?.contentType ?? '', /^application\/cloudevents\+json/);
  });

  it('keeps same-key deliveries in order and bounds concurrency', async () => {
    script.set('/k', [503]);
    const d = new Dispatcher({ log: silent, concurrency: 2 });
    const order: string[] = [];
    const first = job('/k');
    const second = job('/k2');
    const a = d.submit({ ...first, key: 'x' }).then(() => order.push('a'));
    const b = d.submit({ ...second, key: 'x' }).then(() => order.push('b'));
    await Promise.all([a, b]);
    assert.deepEqual(order, ['a', 'b']);
    await d.idle();
    await d.stop();
  });
});
