import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildEvent,
  eventName,
  type EventContent,
  type InvolvedObject,
} from '../../shared/builders/index.ts';

const involved: InvolvedObject = {
  apiVersion: 'etcdfn.io/v1alpha1',
  kind: 'EtcdCluster',
  name: 'demo',
  namespace: 'prod',
  uid: 'cluster-uid',
};
const added: EventContent = {
  type: 'Normal',
  reason: 'MemberAdded',
  message: 'added demo-abcde as a learner',
};
const now = new Date('2025-01-02T03:04:05.678Z');

describe('Kubernetes Events', () => {
  it('is a core/v1 Event about the object, in its namespace, counted once', () => {
    const ev = buildEvent(involved, added, now);
    assert.equal(ev.apiVersion, 'v1');
    assert.equal(ev.kind, 'Event');
    assert.equal(ev.metadata.namespace, 'prod');
    assert.ok(ev.metadata.name?.startsWith('demo.'));
    assert.deepEqual(ev.involvedObject, involved);
    assert.equal(ev.type, 'Normal');
    assert.equal(ev.reason, 'MemberAdded');
    assert.equal(ev.message, 'added demo-abcde as a learner');
    assert.equal(ev.count, 1);
    assert.deepEqual(ev.firstTimestamp, now);
    assert.deepEqual(ev.lastTimestamp, now);
    assert.deepEqual(ev.source, { component: 'etcdfn' });
    assert.equal(ev.reportingComponent, 'etcdfn');
    assert.equal(ev.reportingInstance, 'etcdfn');
  });

  it('the same Event said again, at any moment, has the same name (AlreadyExists: counted, not duplicated)', () => {
    assert.equal(buildEvent(involved, added, now).metadata.name, eventName(involved, added));
    const later = new Date(now.getTime() + 3_600_000);
    assert.equal(
      buildEvent(involved, added, later).metadata.name,
      buildEvent(involved, added, now).metadata.name,
    );
  });

  it('a different type, reason, message or object makes a different Event', () => {
    const base = eventName(involved, added);
    assert.notEqual(eventName(involved, { ...added, type: 'Warning' }), base);
    assert.notEqual(eventName(involved, { ...added, reason: 'MemberPromoted' }), base);
    assert.notEqual(eventName(involved, { ...added, message: 'other' }), base);
    assert.notEqual(eventName({ ...involved, uid: 'recreated' }, added), base);
  });

  it('names stay within the 253 characters an object name may have', () => {
    const long = { ...involved, name: 'x'.repeat(253) };
    assert.ok(eventName(long, added).length <= 253);
  });

  it('a Warning keeps its type; component and instance can be named', () => {
    const ev = buildEvent(involved, { ...added, type: 'Warning' }, now, {
      component: 'etcdfn-reconcile-cluster',
      instance: 'pod-1',
    });
    assert.equal(ev.type, 'Warning');
    assert.deepEqual(ev.source, { component: 'etcdfn-reconcile-cluster' });
    assert.equal(ev.reportingInstance, 'pod-1');
  });

  it('an overlong message is cut to fit', () => {
    const ev = buildEvent(involved, { ...added, message: 'm'.repeat(5000) }, now);
    assert.ok(ev.message!.length <= 1000);
    assert.ok(ev.message!.endsWith('…'));
  });
});
