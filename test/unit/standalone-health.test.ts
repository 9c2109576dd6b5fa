// The standalone Pod's health endpoints (standalone/health.ts): the kubelet reaches them on the
// Pod IP, and they answer for functions that listen on loopback only.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { healthServer, listenOn } from '../../standalone/health.ts';

describe('standalone health endpoints', () => {
  let fn: Server;
  let closedPort: number;
  let health: Server;
  let base: string;
  let ready = false;

  before(async () => {
    fn = createServer((_req, res) => res.end());
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

  it('unknown functions and paths are 404; other methods 405', async () => {
    assert.equal(await status('/functions/nope'), 404);
    assert.equal(await status('/metrics'), 404);
    assert.equal(await status('/healthz', 'POST'), 405);
  });
});
