// The standalone bridge's delivery queue is bounded: anyone who can create a Pod labelled
// etcdfn.io/cluster feeds it. A delivery still waiting absorbs later ones of the same object, trigger
// and type; past maxQueued waiting deliveries a new one is shed and counted; the tick never is.
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { CloudEvent } from 'cloudevents';
import { pino } from 'pino';
import { Dispatcher, type DeliveryJob } from '../../standalone/bridge/delivery.ts';
import { apiServerEventType, PING_EVENT_TYPE } from '../../shared/events/types.ts';

const silent = pino({ level: 'silent' });

describe('the bridge delivery queue', () => {
  const held: ServerResponse[] = [];
  const seen: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(String(req.headers['ce-subject'] ?? req.headers['ce-type']));
      held.push(res);
    });
  });
  let url = '';
  before(async () => {
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
  });
  after(() => new Promise<void>(resolve => server.close(() => resolve())));
  /** Answers every held request, and those that come after, until the dispatcher is idle. */
  const releaseAll = async (d: Dispatcher) => {
    let idle = false;
    const done = d.idle().then(() => (idle = true));
    while (!idle) {
      for (const res of held.splice(0)) res.writeHead(200).end();
      await new Promise(resolve => setTimeout(resolve, 5));
    }
    await done;
  };

  const job = (subject: string, type = apiServerEventType('Reference', 'update')): DeliveryJob => ({
    subscriber: 'reconcile-member',
    trigger: 'reconcile-member-pods',
    url,
    event: new CloudEvent({ type, source: 'https://api', subject, data: {} }),
    policy: { retry: 0, backoffPolicy: 'exponential', backoffDelayMs: 1 },
    key: `reconcile-member-pods|${subject}`,
    ...(type === PING_EVENT_TYPE && { keep: true }),
  });

  it('a thousand updates of one object submitted at once: one is sent, the other 999 are absorbed', async () => {
    seen.length = 0;
    const dropped: string[] = [];
    const d = new Dispatcher({ log: silent, concurrency: 1, onDropped: reason => dropped.push(reason) });
    const outcomes = Array.from({ length: 1000 }, () => d.submit(job('pods/prod/p-1')));
    await new Promise(resolve => setTimeout(resolve, 20));
    assert.ok(d.stats.queued <= 1, `queued ${d.stats.queued}`);
    await releaseAll(d);
    const results = await Promise.all(outcomes);
    assert.equal(
      results.filter(r => r === 'delivered').length,
      1,
      'the first waits for the slot and absorbs the rest',
    );
    assert.equal(results.filter(r => r === 'coalesced').length, 999);
    assert.equal(d.stats.coalesced, 999);
    assert.equal(dropped.length, 999);
    assert.equal(seen.length, 1);
  });

  it('once one is in flight, a later update is still sent after it (the change it brings is not lost)', async () => {
    seen.length = 0;
    const d = new Dispatcher({ log: silent, concurrency: 1 });
    const first = d.submit(job('pods/prod/p-2'));
    while (seen.length === 0) await new Promise(resolve => setTimeout(resolve, 2));
    const later = [d.submit(job('pods/prod/p-2')), d.submit(job('pods/prod/p-2'))];
    await releaseAll(d);
    assert.deepEqual(await Promise.all([first, ...later]), ['delivered', 'delivered', 'coalesced']);
    assert.equal(seen.length, 2);
  });

  it('past maxQueued, new objects are shed and counted; the tick is never shed; the bound holds', async () => {
    seen.length = 0;
    const dropped: string[] = [];
    const d = new Dispatcher({
      log: silent,
      concurrency: 1,
      maxQueued: 50,
      onDropped: reason => dropped.push(reason),
    });
    const outcomes = Array.from({ length: 500 }, (_, i) => d.submit(job(`pods/prod/flood-${i}`)));
    const tick = d.submit(
      job('/apis/sources.knative.dev/v1/namespaces/etcdfn-system/pingsources/tick', PING_EVENT_TYPE),
    );
    assert.ok(d.stats.queued <= 51, `queued ${d.stats.queued}`);
    assert.equal(d.stats.shed, 450);
    assert.equal(dropped.filter(r => r === 'shed').length, 450);
    await releaseAll(d);
    const results = await Promise.all(outcomes);
    assert.equal(results.filter(r => r === 'delivered').length, 50);
    assert.equal(results.filter(r => r === 'shed').length, 450);
    assert.equal(await tick, 'delivered');
    assert.equal(d.stats.queued, 0);
  });

  it('with coalescing off (chaos), every duplicate is sent', async () => {
    seen.length = 0;
    const d = new Dispatcher({ log: silent, concurrency: 1, coalesce: false });
    const outcomes = Array.from({ length: 5 }, () => d.submit(job('pods/prod/p-3')));
    await releaseAll(d);
    assert.deepEqual(await Promise.all(outcomes), Array(5).fill('delivered'));
  });
});
