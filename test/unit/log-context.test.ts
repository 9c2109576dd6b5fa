// Every log line of an event carries its function, event id and object, and what the reconcile
// noted (cluster, member, plan step): shared/log-context.ts, read by the logger's mixin. Checked on
// a real pino logger with the same mixin, through the real HTTP handler wrapper.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { eventFunction } from '../../shared/events/handler.ts';
import { logContextFields, noteLogContext, withLogContext } from '../../shared/log-context.ts';
import { loadEventFixture } from '../support/fixtures.ts';

function capture(): { lines: Record<string, unknown>[]; logger: pino.Logger } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: pino({ mixin: logContextFields }, sink) };
}

describe('log context', () => {
  it('outside an event a line carries nothing extra', () => {
    assert.deepEqual(logContextFields(), {});
    noteLogContext({ step: 'ignored' });
    assert.deepEqual(logContextFields(), {});
  });

  it('lines deep in awaited code carry the event and what was noted since; concurrent events never mix', async () => {
    const { lines, logger } = capture();
    const event = (id: string, cluster: string, wait: number) =>
      withLogContext(
        { function: 'reconcile-cluster', eventId: id, kind: 'EtcdCluster', name: cluster },
        async () => {
          logger.info('observed');
          await sleep(wait);
          noteLogContext({ cluster, step: id === 'a' ? 'claim' : 'none' });
          await sleep(wait);
          logger.info('acted');
        },
      );
    await Promise.all([event('a', 'one', 20), event('b', 'two', 5)]);
    const byEvent = (id: string) => lines.filter(l => l.eventId === id);
    assert.equal(byEvent('a').length, 2);
    assert.equal(byEvent('b').length, 2);
    for (const l of byEvent('a')) assert.equal(l.name, 'one');
    assert.equal(byEvent('a')[0].step, undefined, 'the step is not known before the plan');
    assert.deepEqual(byEvent('a').at(-1), {
      ...byEvent('a').at(-1),
      cluster: 'one',
      step: 'claim',
      function: 'reconcile-cluster',
    });
    assert.equal(byEvent('b').at(-1)?.step, 'none');
    assert.equal(byEvent('b').at(-1)?.cluster, 'two');
  });

  it("the HTTP wrapper opens the event's context around the handler: id, object, and what it notes", async () => {
    const fixture = loadEventFixture('cluster-ref-update.json');
    let seen: Record<string, unknown> = {};
    const http = eventFunction('reconcile-cluster', async () => {
      noteLogContext({ cluster: 'demo', step: 'add-member' });
      seen = { ...logContextFields() };
      return { result: 'done', summary: 'ok' };
    });
    let status = 0;
    const res = {
      status(code: number) {
        status = code;
        return this;
      },
      set() {
        return this;
      },
      json() {
        return this;
      },
      end() {
        return this;
      },
    };
    await http({ method: 'POST', headers: fixture.headers, body: fixture.body } as never, res as never);
    assert.equal(status, 200);
    assert.equal(seen.function, 'reconcile-cluster');
    assert.equal(seen.eventId, fixture.headers['ce-id']);
    assert.equal(seen.kind, 'EtcdCluster');
    assert.equal(seen.step, 'add-member');
    assert.equal(seen.cluster, 'demo');
    assert.deepEqual(logContextFields(), {}, 'and closes it after');
  });
});
