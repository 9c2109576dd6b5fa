// A sender chooses ce-type; the metrics must not grow with it. Every type a function handles maps to
// one of a fixed set of (mode, verb) label pairs, and anything else is refused with 400 before it is
// counted under anything but none/none.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventFunction } from '../../shared/events/handler.ts';
import { apiServerEventType, eventMetricLabels } from '../../shared/events/types.ts';
import { decodeEvent } from '../../shared/events/decode.ts';
import { registry } from '../../shared/runtime/metrics.ts';
import { loadEventFixture } from '../support/fixtures.ts';

function post(type: string): { headers: Record<string, string>; body: unknown } {
  const fixture = loadEventFixture('cluster-ref-update.json');
  return { headers: { ...fixture.headers, 'ce-type': type }, body: fixture.body };
}

async function send(type: string): Promise<{ status: number; body: unknown }> {
  const http = eventFunction('labels-test', async () => ({ result: 'done', summary: 'ok' }));
  const reply = { status: 0, body: undefined as unknown };
  const res = {
    status(code: number) {
      reply.status = code;
      return this;
    },
    set() {
      return this;
    },
    json(body: unknown) {
      reply.body = body;
      return this;
    },
    // A handled event's answer: no body (shared/events/handler.ts).
    end() {
      return this;
    },
  };
  await http({ method: 'POST', path: '/', ...post(type) } as never, res as never);
  return reply;
}

async function seriesOf(fn: string): Promise<string[]> {
  const text = await registry.metrics();
  return text.split('\n').filter(l => l.startsWith('etcdfn_events_total{') && l.includes(`function="${fn}"`));
}

describe('event metric labels', () => {
  it('are the normalised mode and verb of every type etcdfn handles', () => {
    const cases = [
      [apiServerEventType('Reference', 'add'), { mode: 'ref', verb: 'add' }],
      [apiServerEventType('Reference', 'update'), { mode: 'ref', verb: 'update' }],
    ] as const;
    for (const [type, labels] of cases) {
      assert.deepEqual(eventMetricLabels(decodeEvent(post(type))), labels, type);
    }
    assert.deepEqual(eventMetricLabels(decodeEvent(loadEventFixture('member-resource-update.json'))), {
      mode: 'resource',
      verb: 'update',
    });
    assert.deepEqual(eventMetricLabels(decodeEvent(loadEventFixture('tick.json'))), {
      mode: 'ping',
      verb: 'tick',
    });
    assert.deepEqual(eventMetricLabels(undefined), { mode: 'none', verb: 'none' });
  });

  it('a hundred made-up types add no series: each is refused with 400, a clear message, and counted as none/none', async () => {
    const types = Array.from({ length: 100 }, (_, i) =>
      i % 3 === 0
        ? `dev.knative.apiserver.ref.update.x${i}`
        : i % 3 === 1
          ? `dev.knative.apiserver.resource.add${i}`
          : `com.example.t${i}`,
    );
    for (const type of types) {
      const reply = await send(type);
      assert.equal(reply.status, 400, type);
      assert.match(
        String((reply.body as { error?: string }).error),
        /^unsupported (ApiServerSource )?event type/,
        type,
      );
    }
    assert.equal((await send(apiServerEventType('Reference', 'update'))).status, 200);
    const series = await seriesOf('labels-test');
    assert.deepEqual(series.map(l => l.replace(/ \d+$/, '')).sort(), [
      'etcdfn_events_total{function="labels-test",mode="none",verb="none",outcome="rejected"}',
      'etcdfn_events_total{function="labels-test",mode="ref",verb="update",outcome="done"}',
    ]);
    for (const line of series) assert.doesNotMatch(line, /x\d|add\d|example/);
  });
});
