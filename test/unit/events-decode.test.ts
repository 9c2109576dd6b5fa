import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HTTP, CloudEvent } from 'cloudevents';
import { decodeEvent, EventDecodeError } from '../../shared/events/decode.ts';
import { apiServerEventType } from '../../shared/events/types.ts';
import { loadEventFixtures, wireBody } from '../support/fixtures.ts';

describe('decodeEvent over the fixtures', () => {
  for (const fixture of loadEventFixtures()) {
    // The HTTP layer may hand over the raw text or the parsed JSON: both must decode the same.
    for (const [form, body] of [
      ['raw body', wireBody(fixture)],
      ['parsed body', fixture.body],
    ] as const) {
      it(`${fixture.file} (${form}): ${fixture.description}`, () => {
        const message = { headers: fixture.headers, body };
        if (fixture.expect.status >= 400) {
          assert.throws(
            () => decodeEvent(message),
            (err: unknown) =>
              err instanceof EventDecodeError &&
              err.status === fixture.expect.status &&
              err.message.includes(fixture.expect.error ?? ''),
          );
          return;
        }
        const event = decodeEvent(message);
        assert.equal(event.kind, fixture.expect.kind);
        assert.equal(event.type, fixture.headers['ce-type'] ?? (fixture.body as { type: string }).type);
      });
    }
  }
});

describe('decodeEvent: what an ApiServerSource event says', () => {
  const ref = { apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdMember', name: 'demo-abcde', namespace: 'prod' };

  it('Reference mode names the object and carries no payload object', () => {
    const ce = new CloudEvent({
      type: apiServerEventType('Reference', 'delete'),
      source: 'https://10.96.0.1:443',
      data: ref,
      kind: 'EtcdMember',
      name: 'demo-abcde',
      namespace: 'prod',
    });
    const event = decodeEvent(HTTP.binary(ce));
    assert.equal(event.kind, 'object');
    if (event.kind !== 'object') return;
    assert.deepEqual(event.ref, ref);
    assert.equal(event.mode, 'Reference');
    assert.equal(event.verb, 'delete');
    assert.equal(event.object, undefined);
  });

  it('Resource mode keeps the object as the watch saw it, for a cluster-scoped object too', () => {
    const object = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod', resourceVersion: '7' } };
    const ce = new CloudEvent({ type: apiServerEventType('Resource', 'add'), source: 's', data: object });
    const event = decodeEvent(HTTP.structured(ce));
    assert.equal(event.kind, 'object');
    if (event.kind !== 'object') return;
    assert.deepEqual(event.ref, { apiVersion: 'v1', kind: 'Namespace', name: 'prod', namespace: '' });
    assert.equal(event.object?.metadata.resourceVersion, '7');
  });

  it('header names are case-insensitive', () => {
    const ce = new CloudEvent({ type: apiServerEventType('Reference', 'update'), source: 's', data: ref });
    const { headers, body } = HTTP.binary(ce);
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    assert.equal(decodeEvent({ headers: upper, body }).kind, 'object');
  });

  it('an empty body is a clear error, not a crash', () => {
    assert.throws(
      () => decodeEvent({ headers: {}, body: undefined }),
      /not a CloudEvent: missing id, source, type/,
    );
  });
});
