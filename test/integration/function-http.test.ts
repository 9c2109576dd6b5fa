// The HTTP contract of every etcdfn function, through the real functions framework: fixtures in,
// status codes out. 2xx = done, 4xx = never retry (with a message), 409/429/5xx = retry.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as ff from '@google-cloud/functions-framework';
import { functionServer } from '../../shared/runtime/function-server.ts';
import request from 'supertest';
import { eventFunction, type HandlerOutcome } from '../../shared/events/handler.ts';
import type { OperatorEvent } from '../../shared/events/types.ts';
import { loadEventFixture, loadEventFixtures, wireBody } from '../support/fixtures.ts';

const seen: OperatorEvent[] = [];
let next: () => Promise<HandlerOutcome> = async () => ({ result: 'done', summary: 'nothing to do' });

ff.http(
  'contract',
  eventFunction('contract', async event => {
    seen.push(event);
    return next();
  }),
);
const app = functionServer('contract');
const server = () => app;

describe('function HTTP contract', () => {
  for (const fixture of loadEventFixtures()) {
    it(`${fixture.file} → ${fixture.expect.status}`, async () => {
      next = async () => ({ result: 'done', summary: 'nothing to do' });
      const before = seen.length;
      const res = await request(server()).post('/').set(fixture.headers).send(wireBody(fixture));
      assert.equal(res.status, fixture.expect.status, res.text);
      if (fixture.expect.status >= 400) {
        assert.match(res.body.error, new RegExp(fixture.expect.error ?? '.'));
        assert.equal(seen.length, before, 'a rejected event must not reach the handler');
      } else {
        assert.equal(res.body.result, 'done');
        assert.equal(seen.at(-1)?.kind, fixture.expect.kind);
      }
    });
  }

  it('a handler that lost a race answers 409 so the event is retried', async () => {
    next = async () => ({ result: 'retry', reason: 'status changed underneath', status: 409 });
    const fixture = loadEventFixture('cluster-ref-update.json');
    const res = await request(server()).post('/').set(fixture.headers).send(wireBody(fixture));
    assert.equal(res.status, 409);
    assert.deepEqual(res.body, { id: fixture.headers['ce-id'], result: 'retry' });
  });

  it('a handler that throws answers 500, and the message stays in the log', async () => {
    next = async () => {
      throw new Error('etcd at 10.0.0.7 unreachable');
    };
    const fixture = loadEventFixture('tick.json');
    const res = await request(server()).post('/').set(fixture.headers).send(wireBody(fixture));
    assert.equal(res.status, 500);
    assert.deepEqual(res.body, { id: fixture.headers['ce-id'], result: 'error' });
  });

  it('a reply carries only the event id and the outcome, never what the handler did', async () => {
    next = async () => ({
      result: 'done',
      summary: 'team-a/secret-cluster: created member secret-cluster-2',
      details: ['team-a/secret-cluster: ok', 'team-b/other: ok'],
    });
    const fixture = loadEventFixture('cluster-ref-update.json');
    const res = await request(server()).post('/').set(fixture.headers).send(wireBody(fixture));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { id: fixture.headers['ce-id'], result: 'done' });
    assert.doesNotMatch(res.text, /team-|secret-cluster|member/);
  });

  it('a body that is not JSON under content-type application/json is a 400', async () => {
    const fixture = loadEventFixture('cluster-ref-update.json');
    const res = await request(server()).post('/').set(fixture.headers).send('{not json');
    assert.equal(res.status, 400);
    assert.match(res.body.error, /unreadable request body: .*JSON/);
  });

  it('GET is a readiness probe and PUT is refused', async () => {
    const get = await request(server()).get('/');
    assert.equal(get.status, 200);
    assert.equal(get.body.ready, true);
    const put = await request(server()).put('/').send('{}');
    assert.equal(put.status, 405);
  });
});
