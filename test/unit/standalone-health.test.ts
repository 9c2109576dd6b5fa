// The standalone Pod's health endpoints (standalone/health.ts): the kubelet reaches them on the
// Pod IP, and they answer for functions that listen on loopback only.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { metrics } from '../../shared/runtime/metrics.ts';
import { healthServer, listenOn } from '../../standalone/health.ts';

describe('standalone health endpoints', () => {
  let fn: Server;
  let closedPort: number;
  let health: Server;
  let base: string;
  let ready = false;

  before(async () => {
    fn = createServer((req, res) => {
      if (req.url === '/metrics') res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      res.end(req.url === '/metrics' ? 'etcdfn_events_total{function="up"} 3\n' : '');
    });
    const fnPort = await listenOn(fn, 0, '127.0.0.1');
    const probe = createServer();
    closedPort = await listenOn(probe, 0, '127.0.0.1');
    await new Promise(resolve => probe.close(resolve));
    health = healthServer({
      subscribers: { up: `http://127.0.0.1:${fnPort}`, down: `http://127.0.0.1:${closedPort}` },
      ready: () => ready,
    });
    base = `http://127.0.0.1:${await listenOn(health, 0, '127.0.0.1')}`;
  });
  after(async () => {
    await new Promise(resolve => health.close(resolve));
    await new Promise(resolve => fn.close(resolve));
  });

  const status = async (path: string, method = 'GET') => (await fetch(base + path, { method })).status;

  it('/healthz answers 200 while the process serves', async () => {
    assert.equal(await status('/healthz'), 200);
  });

  it('/readyz follows the bridge: 503 until it has started, then 200', async () => {
    assert.equal(await status('/readyz'), 503);
    ready = true;
    assert.equal(await status('/readyz'), 200);
  });

  it('/functions/<name> is 200 when the function port accepts connections, 503 when not', async () => {
    assert.equal(await status('/functions/up'), 200);
    assert.equal(await status('/functions/down'), 503);
  });

  it("/functions/<name>/metrics relays that function's GET /metrics; 503 when it does not listen", async () => {
    const res = await fetch(`${base}/functions/up/metrics`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4');
    assert.equal(await res.text(), 'etcdfn_events_total{function="up"} 3\n');
    assert.equal(await status('/functions/down/metrics'), 503);
    assert.equal(await status('/functions/nope/metrics'), 404);
  });

  it("/metrics serves the bridge's own counters: what it coalesced or shed, by reason and Trigger", async () => {
    metrics.bridgeDropped.inc({ reason: 'shed', trigger: 'reconcile-member-pods' });
    const res = await fetch(`${base}/metrics`);
    assert.equal(res.status, 200);
    assert.match(
      await res.text(),
      /^etcdfn_bridge_deliveries_dropped_total\{reason="shed",trigger="reconcile-member-pods"\} 1$/m,
    );
  });

  it('unknown functions and paths are 404; other methods 405', async () => {
    assert.equal(await status('/functions/nope'), 404);
    assert.equal(await status('/nope'), 404);
    assert.equal(await status('/healthz', 'POST'), 405);
  });
});
