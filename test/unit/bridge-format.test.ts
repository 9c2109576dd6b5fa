// The CloudEvents the bridge builds, against ApiServerSource's and PingSource's format, and a round
// trip of each through the functions' own decoder.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  apiServerEvent,
  guessResource,
  objectReference,
  pingEvent,
  selfLinkSubject,
  toHttpMessage,
  withBrokerArrival,
  type WatchedObject,
} from '../../standalone/bridge/format.ts';
import { decodeEvent } from '../../shared/events/decode.ts';
import { loadEventFixture } from '../support/fixtures.ts';

const pod: WatchedObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'demo-0',
    namespace: 'default',
    uid: 'u1',
    resourceVersion: '7',
    labels: { 'etcdfn.io/cluster': 'demo' },
  },
  spec: { containers: [{ name: 'etcd', image: 'quay.io/coreos/etcd:v3.5.16' }] },
  status: { phase: 'Running' },
};
const cluster: WatchedObject = {
  apiVersion: 'etcdfn.io/v1alpha1',
  kind: 'EtcdCluster',
  metadata: { name: 'demo', namespace: 'default', resourceVersion: '42', generation: 1 },
  spec: { replicas: 3 },
};
const SOURCE = 'https://10.96.0.1:443';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('UnsafeGuessKindToResource', () => {
  const table: [string, string][] = [
    ['Pod', 'pods'],
    ['PersistentVolumeClaim', 'persistentvolumeclaims'],
    ['EtcdCluster', 'etcdclusters'],
    ['EtcdSnapshotSchedule', 'etcdsnapshotschedules'],
    ['Ingress', 'ingresses'],
    ['Policy', 'policies'],
    ['Endpoints', 'endpoints'],
    // No x/ch/sh rules in the guess: these differ from the real resource names, as in Knative.
    ['Box', 'boxs'],
    ['Patch', 'patchs'],
    ['', ''],
  ];
  for (const [kind, plural] of table)
    it(`${kind || '(empty)'} → ${plural || '(empty)'}`, () => assert.equal(guessResource(kind), plural));
});

describe('subject (Knative createSelfLink)', () => {
  it('core types are /apis/v1/..., not /api/v1', () => {
    assert.equal(
      selfLinkSubject({ apiVersion: 'v1', kind: 'Pod', name: 'p', namespace: 'default' }),
      '/apis/v1/namespaces/default/pods/p',
    );
  });
  it('grouped types carry group/version', () => {
    assert.equal(
      selfLinkSubject({ apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdMember', name: 'm', namespace: 'ns' }),
      '/apis/etcdfn.io/v1alpha1/namespaces/ns/etcdmembers/m',
    );
  });
  it('a dotted apiVersion without a version gets versionUnknown', () => {
    assert.equal(
      selfLinkSubject({ apiVersion: 'etcdfn.io', kind: 'EtcdMember', name: 'm', namespace: 'ns' }),
      '/apis/etcdfn.io/versionUnknown/namespaces/ns/etcdmembers/m',
    );
  });
});

describe('ApiServerSource events', () => {
  it('Reference mode: attributes, extensions and an ObjectReference as data', () => {
    const time = new Date('2026-11-22T10:00:00.000Z');
    const event = apiServerEvent({ source: SOURCE, mode: 'Reference', verb: 'update', object: pod, time });
    assert.equal(event.specversion, '1.0');
    assert.equal(event.type, 'dev.knative.apiserver.ref.update');
    assert.equal(event.source, SOURCE);
    assert.equal(event.subject, '/apis/v1/namespaces/default/pods/demo-0');
    assert.match(event.id, UUID);
    assert.equal(event.time, time.toISOString());
    assert.equal(event.datacontenttype, 'application/json');
    assert.deepEqual(
      { kind: event.kind, name: event.name, namespace: event.namespace, apiversion: event.apiversion },
      { kind: 'Pod', name: 'demo-0', namespace: 'default', apiversion: 'v1' },
    );
    // corev1.ObjectReference as Go's encoding/json writes it: only these four fields, in this order.
    assert.equal(
      JSON.stringify(event.data),
      '{"kind":"Pod","namespace":"default","name":"demo-0","apiVersion":"v1"}',
    );
  });

  it('Resource mode: the whole object as data', () => {
    const event = apiServerEvent({ source: SOURCE, mode: 'Resource', verb: 'delete', object: cluster });
    assert.equal(event.type, 'dev.knative.apiserver.resource.delete');
    assert.equal(event.subject, '/apis/etcdfn.io/v1alpha1/namespaces/default/etcdclusters/demo');
    assert.deepEqual(event.data, cluster);
  });

  it('every send has a fresh id', () => {
    const ids = new Set(
      Array.from(
        { length: 50 },
        () => apiServerEvent({ source: SOURCE, mode: 'Reference', verb: 'add', object: pod }).id,
      ),
    );
    assert.equal(ids.size, 50);
  });

  it('the reference omits an empty namespace (cluster-scoped objects)', () => {
    const ns: WatchedObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'etcd' } };
    assert.deepEqual(objectReference(ns), { kind: 'Namespace', name: 'etcd', apiVersion: 'v1' });
    assert.equal(
      apiServerEvent({ source: SOURCE, mode: 'Reference', verb: 'add', object: ns }).subject,
      '/apis/v1/namespaces//namespaces/etcd',
    );
  });

  it('binary mode puts attributes in ce-* headers and the data in the body', () => {
    const event = withBrokerArrival(
      apiServerEvent({ source: SOURCE, mode: 'Reference', verb: 'add', object: pod }),
    );
    const { headers, body } = toHttpMessage(event, 'binary');
    assert.equal(headers['content-type'], 'application/json');
    assert.equal(headers['ce-type'], 'dev.knative.apiserver.ref.add');
    assert.equal(headers['ce-kind'], 'Pod');
    assert.equal(headers['ce-apiversion'], 'v1');
    assert.match(headers['ce-knativearrivaltime'] ?? '', /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual(JSON.parse(String(body)), objectReference(pod));
  });

  for (const format of ['binary', 'structured'] as const) {
    for (const mode of ['Reference', 'Resource'] as const) {
      it(`round trip through decodeEvent (${mode}, ${format})`, () => {
        const event = apiServerEvent({ source: SOURCE, mode, verb: 'update', object: cluster });
        const decoded = decodeEvent(toHttpMessage(event, format));
        assert.equal(decoded.kind, 'object');
        if (decoded.kind !== 'object') return;
        assert.equal(decoded.id, event.id);
        assert.equal(decoded.source, SOURCE);
        assert.equal(decoded.mode, mode);
        assert.equal(decoded.verb, 'update');
        assert.deepEqual(decoded.ref, {
          apiVersion: 'etcdfn.io/v1alpha1',
          kind: 'EtcdCluster',
          name: 'demo',
          namespace: 'default',
        });
        if (mode === 'Resource') assert.deepEqual(decoded.object, cluster);
      });
    }
  }

  it('matches the hand-written fixture attribute for attribute (except id and time)', () => {
    const fixture = loadEventFixture('pod-ref-update.json');
    const object: WatchedObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'demo-0', namespace: 'default' },
    };
    const { headers, body } = toHttpMessage(
      apiServerEvent({ source: SOURCE, mode: 'Reference', verb: 'update', object }),
      'binary',
    );
    const strip = (h: Record<string, string>) => {
      const { ['ce-id']: _id, ['ce-time']: _time, ['ce-subject']: _subject, ...rest } = h;
      return rest;
    };
    assert.deepEqual(strip(headers), strip(fixture.headers));
    assert.equal(headers['ce-subject'], '/apis/v1/namespaces/default/pods/demo-0');
    assert.deepEqual(JSON.parse(String(body)), fixture.body);
  });
});

describe('PingSource events', () => {
  const ping = {
    name: 'etcdfn-tick',
    namespace: 'etcdfn-system',
    schedule: '* * * * *',
    contentType: 'application/json',
    data: '{"tick":"resync"}',
  };

  it('type, source, data from the manifest', () => {
    const event = pingEvent(ping);
    assert.equal(event.type, 'dev.knative.sources.ping');
    assert.equal(event.source, '/apis/v1/namespaces/etcdfn-system/pingsources/etcdfn-tick');
    assert.match(event.id, UUID);
    assert.equal(event.datacontenttype, 'application/json');
    assert.deepEqual(event.data, { tick: 'resync' });
    assert.equal(event.subject, undefined);
  });

  it('binary body is the spec.data bytes', () => {
    const { headers, body } = toHttpMessage(pingEvent(ping), 'binary');
    assert.equal(headers['content-type'], 'application/json');
    assert.equal(body, '{"tick":"resync"}');
  });

  it('matches the tick fixture and decodes as a tick', () => {
    const fixture = loadEventFixture('tick.json');
    const message = toHttpMessage(pingEvent(ping), 'binary');
    assert.equal(message.headers['ce-source'], fixture.headers['ce-source']);
    assert.equal(message.headers['ce-type'], fixture.headers['ce-type']);
    for (const format of ['binary', 'structured'] as const) {
      const decoded = decodeEvent(toHttpMessage(pingEvent(ping), format));
      assert.equal(decoded.kind, 'tick');
      if (decoded.kind === 'tick') assert.deepEqual(decoded.data, fixture.body);
    }
  });

  it('text data and dataBase64', () => {
    const text = pingEvent({ ...ping, contentType: 'text/plain', data: 'hello' });
    assert.equal(toHttpMessage(text, 'binary').body, 'hello');
    const { dataBase64: _, data: __, ...rest } = { ...ping, dataBase64: undefined };
    const binary = pingEvent({
      ...rest,
      contentType: 'application/octet-stream',
      dataBase64: Buffer.from('hi').toString('base64'),
    });
    assert.deepEqual(Buffer.from(toHttpMessage(binary, 'binary').body), Buffer.from('hi'));
  });
});
