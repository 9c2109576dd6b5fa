// The dead-letter sink (functions/dead-letter) over HTTP through the functions framework, against
// the sandbox API server: a dead-lettered event, in either HTTP encoding, becomes a Warning Event
// (EventDeliveryFailed) on the object it named, saying where it failed and what the subscriber
// answered; a tick's dead letter is only logged; every dead letter is answered 202, never retried.
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

  it('binary mode: a Warning Event on the EtcdMember the event named', async () => {
    const res = await request(server)
      .post('/')
      .set({
        'ce-specversion': '1.0',
        'ce-id': 'a1',
        'ce-type': 'dev.knative.apiserver.ref.update',
        'ce-source': 'https://kubernetes.default.svc',
        'ce-kind': 'EtcdMember',
        'ce-name': 'example-1',
        'ce-namespace': 'team-a',
        'ce-apiversion': 'etcdfn.io/v1alpha1',
        'ce-knativeerrordest': 'http://reconcile-member.etcdfn-system.svc.cluster.local',
        'ce-knativeerrorcode': '503',
        'ce-knativeerrordata': reply,
        'content-type': 'application/json',
      })
      .send({ kind: 'EtcdMember', name: 'example-1', namespace: 'team-a' });
    assert.equal(res.status, 202, res.text);
    const [event] = await events('team-a');
    assert.ok(event, 'an Event was recorded');
    assert.equal(event.type, 'Warning');
    assert.equal(event.involvedObject.name, 'example-1');
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
});
