// Kubernetes Events as shared/reconcile/record-event.ts writes them, over an in-memory Kubernetes
// (test/support/fake-kube.ts): the same Event said again is one Event whose count and lastTimestamp
// grow (as client-go's recorder aggregates), the count written against the resourceVersion just
// read, and an Event that cannot be written never fails the step.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CoreV1Event } from '@kubernetes/client-node';
import { buildEvent } from '../../shared/builders/k8s-event.ts';
import type { KubeObject, KubeObjects } from '../../shared/k8s/objects.ts';
import { recordEvent, writeEvent } from '../../shared/reconcile/record-event.ts';
import { FakeKube, fakeContext } from '../support/fake-kube.ts';

process.env.LOG_LEVEL ??= 'silent';

const T1 = new Date('2026-11-22T10:00:00Z');
const T2 = new Date('2026-11-22T10:05:00Z');
const involved = {
  apiVersion: 'etcdfn.io/v1alpha1',
  kind: 'EtcdCluster',
  name: 'demo',
  namespace: 'prod',
  uid: 'c-uid',
};
const content = { type: 'Warning' as const, reason: 'NoQuorum', message: 'two of three members down' };
const event = (at: Date) => buildEvent(involved, content, at, { instance: 'reconcile-cluster' });
type Event = CoreV1Event & KubeObject;
const storedEvents = (kube: FakeKube) =>
  [...kube.objects.values()].filter(o => o.kind === 'Event') as Event[];

describe('writeEvent', () => {
  it('a new Event is created as built', async () => {
    const kube = new FakeKube();
    await writeEvent(kube as unknown as KubeObjects, event(T1));
    const [stored] = storedEvents(kube);
    assert.equal(stored?.reason, 'NoQuorum');
    assert.equal(stored?.message, 'two of three members down');
    assert.deepEqual(kube.patches, []);
  });

  it('the same Event again: one Event, its count 2 and lastTimestamp moved, written against the version read', async () => {
    const kube = new FakeKube();
    await writeEvent(kube as unknown as KubeObjects, event(T1));
    await writeEvent(kube as unknown as KubeObjects, event(T2));
    const all = storedEvents(kube);
    assert.equal(all.length, 1);
    assert.equal(all[0]?.count, 2);
    assert.equal(new Date(all[0].lastTimestamp as unknown as string).getTime(), T2.getTime());
    assert.equal(kube.patches.length, 2);
    assert.deepEqual(Object.keys(kube.patches[0].patch), ['lastTimestamp']);
    const second = kube.patches[1].patch as { count: number; metadata: { resourceVersion: string } };
    assert.equal(second.count, 2);
    assert.ok(second.metadata.resourceVersion, 'conditional on the version the first patch answered');
    await writeEvent(kube as unknown as KubeObjects, event(T2));
    assert.equal(storedEvents(kube)[0]?.count, 3);
  });

  it('an Event without a count yet counts as one', async () => {
    const kube = new FakeKube();
    const e = event(T1);
    await writeEvent(kube as unknown as KubeObjects, e);
    const [stored] = storedEvents(kube);
    delete (stored as { count?: number }).count;
    await writeEvent(kube as unknown as KubeObjects, event(T2));
    assert.equal(storedEvents(kube)[0]?.count, 2);
  });

  it('the Event gone between the create and the patch: no count written', async () => {
    const kube = new FakeKube();
    kube.script('create', 'Event', { kind: 'already-exists' });
    await writeEvent(kube as unknown as KubeObjects, event(T1));
    assert.equal(kube.patches.length, 1, 'only the touch, which found nothing');
  });

  it('created: nothing patched; refused: nothing patched', async () => {
    const kube = new FakeKube();
    kube.script('create', 'Event', { kind: 'invalid', message: 'bad' });
    await writeEvent(kube as unknown as KubeObjects, event(T1));
    assert.deepEqual(kube.patches, []);
  });
});

describe('recordEvent', () => {
  const cluster = {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name: 'demo', namespace: 'prod', uid: 'c-uid' },
  };

  it('about the object given, at the context’s time, from the instance named', async () => {
    const kube = new FakeKube();
    await recordEvent(fakeContext(kube, {}, {}, T1), cluster, content, 'reconcile-cluster');
    const [stored] = storedEvents(kube) as (Event & { reportingInstance?: string })[];
    assert.deepEqual(
      { ...stored?.involvedObject },
      {
        apiVersion: 'etcdfn.io/v1alpha1',
        kind: 'EtcdCluster',
        name: 'demo',
        namespace: 'prod',
        uid: 'c-uid',
      },
    );
    assert.equal(stored?.metadata.namespace, 'prod');
    assert.equal(stored?.type, 'Warning');
    assert.match(JSON.stringify(stored), /reconcile-cluster/);
    assert.equal(new Date(stored.lastTimestamp as unknown as string).getTime(), T1.getTime());
  });

  it('an object missing fields: empty ones, not a crash', async () => {
    const kube = new FakeKube();
    await recordEvent(
      fakeContext(kube, {}, {}, T1),
      { metadata: { name: 'x', namespace: 'prod' } },
      content,
      'i',
    );
    const [stored] = storedEvents(kube);
    assert.deepEqual(
      { ...stored?.involvedObject },
      { apiVersion: '', kind: '', name: 'x', namespace: 'prod', uid: '' },
    );
  });

  it('an Event that cannot be written: logged, not thrown', async () => {
    const kube = new FakeKube();
    kube.script('create', 'Event', new Error('events are forbidden'));
    await recordEvent(fakeContext(kube, {}, {}, T1), cluster, content, 'reconcile-cluster');
    assert.deepEqual(storedEvents(kube), []);
  });
});
