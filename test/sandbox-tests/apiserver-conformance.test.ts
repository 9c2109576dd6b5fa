// Conformance of the sandbox API server as @kubernetes/client-node sees it: CRUD, patches, watch,
// resourceVersion conflicts, generateName, finalizers, garbage collection, subresources, CRD schema
// and CEL enforcement, error bodies, persistence. Every test starts its own server on a free port.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  Watch,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { KubeConfig, KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../sandbox/apiserver/index.ts';
import { kubeConfigFor } from '../sandbox/kubeconfig.ts';

const CRDS = new URL('../../crds/', import.meta.url).pathname;
const GROUP = 'etcdfn.io';
const VERSION = 'v1alpha1';
const NS = 'default';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;

interface Env {
  server: ApiServer;
  kc: KubeConfig;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  objects: KubernetesObjectApi;
}

const open: ApiServer[] = [];
after(async () => {
  for (const s of open) await s.close();
});

async function env(opts: ApiServerOptions = {}): Promise<Env> {
  const server = await startApiServer({ crdDir: CRDS, ...opts });
  open.push(server);
  const kc = kubeConfigFor(server.url);
  return {
    server,
    kc,
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    objects: KubernetesObjectApi.makeApiClient(kc),
  };
}

/** A plain JSON copy of a client-node model object. */
function plain(value: unknown): Any {
  return JSON.parse(JSON.stringify(value)) as Any;
}

/** The Status body of a failed call. */
async function failure(p: Promise<unknown>): Promise<{ code: number; status: Any }> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ApiException, `expected ApiException, got ${String(e)}`);
    return { code: e.code, status: JSON.parse(e.body as string) as Any };
  }
  assert.fail('expected the call to fail');
}

function cluster(name: string, spec: Any = {}, metadata: Any = {}): Any {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'EtcdCluster',
    metadata: { name, namespace: NS, ...metadata },
    spec: { replicas: 3, version: '3.5.16', ...spec },
  };
}

function member(name: string, owner: Any): Any {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'EtcdMember',
    metadata: {
      name,
      namespace: NS,
      ownerReferences: [
        {
          apiVersion: owner.apiVersion,
          kind: owner.kind,
          name: owner.metadata.name,
          uid: owner.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { clusterName: owner.metadata.name, version: '3.5.16', initialCluster: '', clusterToken: 'tok' },
  };
}

function pod(name: string, labels: Record<string, string> = {}, owner?: Any): V1Pod {
  const metadata: Any = { name, namespace: NS, labels };
  if (owner) {
    metadata.ownerReferences = [
      {
        apiVersion: owner.apiVersion,
        kind: owner.kind,
        name: owner.metadata.name,
        uid: owner.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ];
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata,
    spec: { containers: [{ name: 'etcd', image: 'etcd:3.5.16' }] },
  };
}

const clusterApi = () => ({ group: GROUP, version: VERSION, namespace: NS, plural: 'etcdclusters' });
const named = (name: string) => ({ ...clusterApi(), name });

async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise(r => setTimeout(r, 20));
  }
  assert.fail(`timed out waiting for ${what}`);
}

describe('sandbox API server through @kubernetes/client-node', () => {
  it('serves discovery for KubernetesObjectApi and round-trips a ConfigMap and an EtcdCluster', async () => {
    const { objects } = await env();
    const cm = await objects.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: NS },
      data: { a: '1' },
    } as KubernetesObject);
    assert.equal(cm.metadata?.name, 'c');
    assert.match(cm.metadata.uid!, /^[0-9a-f-]{36}$/);
    const read = plain(
      await objects.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: NS } }),
    );
    assert.deepEqual(read.data, { a: '1' });
    read.data = { a: '1', b: '2' };
    const replaced = plain(await objects.replace(read));
    assert.equal(replaced.data.b, '2');
    assert.ok(Number(replaced.metadata.resourceVersion) > Number(read.metadata.resourceVersion));

    const created = plain(await objects.create(cluster('a')));
    assert.equal(created.spec.storage.size, '1Gi', 'schema default applied');
    const list = await objects.list(`${GROUP}/${VERSION}`, 'EtcdCluster', NS);
    assert.deepEqual(
      list.items.map(i => i.metadata?.name),
      ['a'],
    );
    await objects.delete(created);
    const gone = await failure(objects.read(created as never));
    assert.equal(gone.code, 404);
  });

  it('creates, gets, lists with label and field selectors, updates and deletes Pods', async () => {
    const { core } = await env({ podGracefulDeletion: false });
    await core.createNamespacedPod({ namespace: NS, body: pod('p1', { app: 'etcd', tier: 'db' }) });
    await core.createNamespacedPod({ namespace: NS, body: pod('p2', { app: 'etcd' }) });
    await core.createNamespacedPod({ namespace: NS, body: pod('p3', { app: 'web' }) });
    const names = async (q: { labelSelector?: string; fieldSelector?: string }) =>
      (await core.listNamespacedPod({ namespace: NS, ...q })).items.map(p => p.metadata!.name);
    assert.deepEqual(await names({ labelSelector: 'app=etcd' }), ['p1', 'p2']);
    assert.deepEqual(await names({ labelSelector: 'app in (etcd,web),tier' }), ['p1']);
    assert.deepEqual(await names({ labelSelector: 'app notin (web),!tier' }), ['p2']);
    assert.deepEqual(await names({ labelSelector: 'app!=etcd' }), ['p3']);
    assert.deepEqual(await names({ fieldSelector: 'metadata.name=p2' }), ['p2']);
    assert.deepEqual(await names({ fieldSelector: 'metadata.namespace=default,metadata.name!=p2' }), [
      'p1',
      'p3',
    ]);
    assert.deepEqual(await names({ fieldSelector: 'status.phase=Pending' }), ['p1', 'p2', 'p3']);
    const bad = await failure(core.listNamespacedPod({ namespace: NS, fieldSelector: 'spec.foo=x' }));
    assert.equal(bad.code, 400);

    const p1 = await core.readNamespacedPod({ name: 'p1', namespace: NS });
    assert.equal(p1.status?.phase, 'Pending');
    assert.equal(p1.spec?.restartPolicy, 'Always', 'pod defaults applied');
    p1.metadata!.labels!.extra = 'yes';
    const updated = await core.replaceNamespacedPod({ name: 'p1', namespace: NS, body: p1 });
    assert.equal(updated.metadata?.labels?.extra, 'yes');

    const all = await core.listPodForAllNamespaces({});
    assert.equal(all.items.length, 3);
    await core.deleteNamespacedPod({ name: 'p3', namespace: NS });
    assert.deepEqual(await names({}), ['p1', 'p2']);
  });

  it('merges, JSON-patches and strategic-merge-patches a Pod', async () => {
    const { core } = await env();
    const base = pod('p', { a: '1' });
    base.spec!.containers.push({ name: 'sidecar', image: 'busybox:1', env: [{ name: 'X', value: '1' }] });
    await core.createNamespacedPod({ namespace: NS, body: base });
    const merged = await core.patchNamespacedPod(
      { name: 'p', namespace: NS, body: { metadata: { labels: { b: '2', a: null } } } },
      merge,
    );
    assert.deepEqual(merged.metadata?.labels, { b: '2' });
    const jp = await core.patchNamespacedPod(
      {
        name: 'p',
        namespace: NS,
        body: [{ op: 'add', path: '/metadata/annotations', value: { note: 'x' } }],
      },
      jsonPatch,
    );
    assert.deepEqual(jp.metadata?.annotations, { note: 'x' });
    const smp = await core.patchNamespacedPod(
      { name: 'p', namespace: NS, body: { spec: { containers: [{ name: 'sidecar', image: 'busybox:2' }] } } },
      strategic,
    );
    assert.deepEqual(
      smp.spec?.containers.map(c => [c.name, c.image]),
      [
        ['etcd', 'etcd:3.5.16'],
        ['sidecar', 'busybox:2'],
      ],
      'containers merged by name, the other container kept',
    );
    assert.deepEqual(JSON.parse(JSON.stringify(smp.spec?.containers[1].env)), [{ name: 'X', value: '1' }]);
    const immutable = await failure(
      core.patchNamespacedPod(
        { name: 'p', namespace: NS, body: { spec: { restartPolicy: 'Never' } } },
        strategic,
      ),
    );
    assert.equal(immutable.code, 422);
    assert.match(immutable.status.message, /pod updates may not change fields other than/);
  });

  it('answers a stale update with 409 Conflict and a duplicate create with 409 AlreadyExists', async () => {
    const { core, custom } = await env();
    await core.createNamespacedConfigMap({
      namespace: NS,
      body: { metadata: { name: 'cm' }, data: { v: '1' } },
    });
    const first = await core.readNamespacedConfigMap({ name: 'cm', namespace: NS });
    const second = await core.readNamespacedConfigMap({ name: 'cm', namespace: NS });
    first.data = { v: '2' };
    await core.replaceNamespacedConfigMap({ name: 'cm', namespace: NS, body: first });
    second.data = { v: '3' };
    const stale = await failure(core.replaceNamespacedConfigMap({ name: 'cm', namespace: NS, body: second }));
    assert.equal(stale.code, 409);
    assert.equal(stale.status.kind, 'Status');
    assert.equal(stale.status.reason, 'Conflict');
    assert.equal(
      stale.status.message,
      'Operation cannot be fulfilled on configmaps "cm": the object has been modified; please apply your changes to the latest version and try again',
    );
    assert.deepEqual(stale.status.details, { name: 'cm', kind: 'configmaps' });

    const dup = await failure(
      core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'cm' } } }),
    );
    assert.equal(dup.code, 409);
    assert.equal(dup.status.reason, 'AlreadyExists');
    assert.equal(dup.status.message, 'configmaps "cm" already exists');

    // Custom resources: a PUT without resourceVersion is unconditional, a stale one conflicts.
    const c = (await custom.createNamespacedCustomObject({ ...clusterApi(), body: cluster('c') })) as Any;
    const unconditional = {
      ...c,
      metadata: { ...c.metadata, resourceVersion: undefined },
      spec: { ...c.spec, replicas: 5 },
    };
    const put = (await custom.replaceNamespacedCustomObject({ ...named('c'), body: unconditional })) as Any;
    assert.equal(put.spec.replicas, 5);
    const staleCr = await failure(custom.replaceNamespacedCustomObject({ ...named('c'), body: c }));
    assert.equal(staleCr.code, 409);
    assert.equal(staleCr.status.details.group, 'etcdfn.io');
    assert.match(staleCr.status.message, /^Operation cannot be fulfilled on etcdclusters\.etcdfn\.io "c"/);
  });

  it('generates names from generateName', async () => {
    const { core } = await env();
    const made = await Promise.all(
      [1, 2, 3].map(() =>
        core.createNamespacedSecret({
          namespace: NS,
          body: { metadata: { generateName: 'snap-' }, stringData: { k: 'v' } },
        }),
      ),
    );
    const names = made.map(s => s.metadata!.name!);
    for (const n of names) assert.match(n, /^snap-[a-z0-9]{5}$/);
    assert.equal(new Set(names).size, 3);
    assert.deepEqual(made[0].data, { k: Buffer.from('v').toString('base64') }, 'stringData folded into data');
    const missing = await failure(core.createNamespacedSecret({ namespace: NS, body: { metadata: {} } }));
    assert.equal(missing.code, 422);
    assert.equal(missing.status.details.causes[0].field, 'metadata.name');
  });

  it('keeps an object with finalizers until the last one is removed', async () => {
    const { custom, kc } = await env();
    const events: string[] = [];
    const watch = await new Watch(kc).watch(
      `/apis/${GROUP}/${VERSION}/namespaces/${NS}/etcdclusters`,
      {},
      (type, obj: Any) => events.push(`${type} ${obj.metadata.deletionTimestamp ? 'deleting' : 'live'}`),
      () => undefined,
    );
    const created = (await custom.createNamespacedCustomObject({
      ...clusterApi(),
      body: cluster('f', {}, { finalizers: ['etcdfn.io/member-cleanup'] }),
    })) as Any;
    assert.equal(created.metadata.generation, 1);
    await custom.deleteNamespacedCustomObject(named('f'));
    const marked = (await custom.getNamespacedCustomObject(named('f'))) as Any;
    assert.ok(marked.metadata.deletionTimestamp, 'deletionTimestamp set');
    assert.equal(marked.metadata.deletionGracePeriodSeconds, 0);
    assert.equal(marked.metadata.generation, 2, 'marking for deletion bumps generation');

    const refused = await failure(
      custom.patchNamespacedCustomObject(
        {
          ...named('f'),
          body: { metadata: { finalizers: ['etcdfn.io/member-cleanup', 'example.com/more'] } },
        },
        merge,
      ),
    );
    assert.equal(refused.code, 422);
    assert.match(refused.status.message, /no new finalizers can be added if the object is being deleted/);

    await custom.patchNamespacedCustomObject(
      { ...named('f'), body: { metadata: { finalizers: null } } },
      merge,
    );
    assert.equal((await failure(custom.getNamespacedCustomObject(named('f')))).code, 404);
    await until(() => events.length === 3, 'three watch events');
    watch.abort();
    assert.deepEqual(events, ['ADDED live', 'MODIFIED deleting', 'DELETED deleting']);
  });

  it('collects a three-level owner chain (EtcdCluster → EtcdMember → Pod) in the background', async () => {
    const { server, custom, core } = await env({ podGracefulDeletion: false });
    const c = (await custom.createNamespacedCustomObject({ ...clusterApi(), body: cluster('gc') })) as Any;
    const members: Any[] = [];
    for (const i of [0, 1]) {
      const m = (await custom.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: NS,
        plural: 'etcdmembers',
        body: member(`gc-${i}`, c),
      })) as Any;
      members.push(m);
      await core.createNamespacedPod({ namespace: NS, body: pod(`gc-${i}`, {}, m) });
    }
    await core.createNamespacedPod({ namespace: NS, body: pod('unrelated') });
    await custom.deleteNamespacedCustomObject(named('gc'));
    await server.settle();
    const left = await core.listNamespacedPod({ namespace: NS });
    assert.deepEqual(
      left.items.map(p => p.metadata!.name),
      ['unrelated'],
    );
    const ms = (await custom.listNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: NS,
      plural: 'etcdmembers',
    })) as Any;
    assert.deepEqual(ms.items, []);
  });

  it('deletes in the foreground (owner waits for blocking dependents) and orphans on request', async () => {
    const { server, custom, core } = await env();
    const c = (await custom.createNamespacedCustomObject({ ...clusterApi(), body: cluster('fg') })) as Any;
    const m = (await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: NS,
      plural: 'etcdmembers',
      body: member('fg-0', c),
    })) as Any;
    await core.createNamespacedPod({ namespace: NS, body: pod('fg-0', {}, m) });
    await custom.deleteNamespacedCustomObject({ ...named('fg'), propagationPolicy: 'Foreground' });
    await server.settle();
    // The Pod waits for a kubelet (graceful deletion), so the member and the cluster wait for it.
    const waiting = (await custom.getNamespacedCustomObject(named('fg'))) as Any;
    assert.deepEqual(waiting.metadata.finalizers, ['foregroundDeletion']);
    const p = await core.readNamespacedPod({ name: 'fg-0', namespace: NS });
    assert.ok(p.metadata?.deletionTimestamp);
    assert.equal(p.metadata?.deletionGracePeriodSeconds, 30);
    // The kubelet's final delete.
    await core.deleteNamespacedPod({ name: 'fg-0', namespace: NS, gracePeriodSeconds: 0 });
    await server.settle();
    assert.equal((await failure(custom.getNamespacedCustomObject(named('fg')))).code, 404);

    // Orphan: the dependent stays, without its owner reference.
    const o = (await custom.createNamespacedCustomObject({ ...clusterApi(), body: cluster('or') })) as Any;
    await core.createNamespacedConfigMap({
      namespace: NS,
      body: {
        metadata: {
          name: 'dep',
          ownerReferences: [{ apiVersion: o.apiVersion, kind: o.kind, name: 'or', uid: o.metadata.uid }],
        },
      },
    });
    await custom.deleteNamespacedCustomObject({ ...named('or'), propagationPolicy: 'Orphan' });
    await server.settle();
    assert.equal((await failure(custom.getNamespacedCustomObject(named('or')))).code, 404);
    const dep = await core.readNamespacedConfigMap({ name: 'dep', namespace: NS });
    assert.equal(dep.metadata?.ownerReferences, undefined);
  });

  it('separates status and main writes and bumps generation only on spec changes', async () => {
    const { custom } = await env();
    const c = (await custom.createNamespacedCustomObject({
      ...clusterApi(),
      body: { ...cluster('s'), status: { phase: 'Ignored' } },
    })) as Any;
    assert.equal(c.status, undefined, 'status dropped on create');
    const withStatus = {
      ...c,
      spec: { ...c.spec, replicas: 7 },
      status: { phase: 'Running', readyMembers: 3 },
    };
    const s1 = (await custom.replaceNamespacedCustomObjectStatus({ ...named('s'), body: withStatus })) as Any;
    assert.equal(s1.spec.replicas, 3, 'status write cannot change spec');
    assert.equal(s1.status.phase, 'Running');
    assert.equal(s1.metadata.generation, 1, 'status writes leave generation');
    const m1 = (await custom.replaceNamespacedCustomObject({
      ...named('s'),
      body: { ...s1, spec: { ...s1.spec, replicas: 5 }, status: { phase: 'Hacked' } },
    })) as Any;
    assert.equal(m1.status.phase, 'Running', 'main write cannot change status');
    assert.equal(m1.metadata.generation, 2);
    const m2 = (await custom.patchNamespacedCustomObject(
      { ...named('s'), body: { metadata: { labels: { a: 'b' } } } },
      merge,
    )) as Any;
    assert.equal(m2.metadata.generation, 2, 'metadata changes leave generation');
    const noop = (await custom.patchNamespacedCustomObject(
      { ...named('s'), body: { spec: { replicas: 5 } } },
      merge,
    )) as Any;
    assert.equal(noop.metadata.resourceVersion, m2.metadata.resourceVersion, 'a no-op patch does not write');
    const bad = await failure(
      custom.patchNamespacedCustomObjectStatus(
        { ...named('s'), body: { status: { readyMembers: 'three' } } },
        merge,
      ),
    );
    assert.equal(bad.code, 422, 'status is validated against the status schema');
    assert.equal(bad.status.details.causes[0].field, 'status.readyMembers');
  });

  it('serves the scale subresource as autoscaling/v1 Scale', async () => {
    const { custom } = await env();
    await custom.createNamespacedCustomObject({ ...clusterApi(), body: cluster('sc') });
    const scale = (await custom.getNamespacedCustomObjectScale(named('sc'))) as Any;
    assert.equal(scale.kind, 'Scale');
    assert.equal(scale.apiVersion, 'autoscaling/v1');
    assert.equal(scale.spec.replicas, 3);
    scale.spec.replicas = 5;
    const put = (await custom.replaceNamespacedCustomObjectScale({ ...named('sc'), body: scale })) as Any;
    assert.equal(put.spec.replicas, 5);
    const patched = (await custom.patchNamespacedCustomObjectScale(
      { ...named('sc'), body: { spec: { replicas: 1 } } },
      merge,
    )) as Any;
    assert.equal(patched.spec.replicas, 1);
    const obj = (await custom.getNamespacedCustomObject(named('sc'))) as Any;
    assert.equal(obj.spec.replicas, 1);
    assert.equal(obj.metadata.generation, 3);
    const stale = await failure(custom.replaceNamespacedCustomObjectScale({ ...named('sc'), body: scale }));
    assert.equal(stale.code, 409);
    const negative = await failure(
      custom.patchNamespacedCustomObjectScale({ ...named('sc'), body: { spec: { replicas: -1 } } }, merge),
    );
    assert.equal(negative.code, 422);
  });

  it('watches with resume from a resourceVersion and selector transitions', async () => {
    const { core, kc } = await env();
    await core.createNamespacedConfigMap({
      namespace: NS,
      body: { metadata: { name: 'w1', labels: { watch: 'yes' } } },
    });
    const start = (await core.listNamespacedConfigMap({ namespace: NS })).metadata!.resourceVersion!;
    await core.patchNamespacedConfigMap({ name: 'w1', namespace: NS, body: { data: { a: '1' } } }, merge);
    const seen: string[] = [];
    const w = await new Watch(kc).watch(
      `/api/v1/namespaces/${NS}/configmaps`,
      { resourceVersion: start, labelSelector: 'watch=yes', allowWatchBookmarks: true },
      (type, obj: Any) => seen.push(`${type} ${obj.metadata.name}`),
      () => undefined,
    );
    await until(() => seen.length === 1, 'the replayed change');
    await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'w2' } } });
    await core.patchNamespacedConfigMap(
      { name: 'w2', namespace: NS, body: { metadata: { labels: { watch: 'yes' } } } },
      merge,
    );
    await core.patchNamespacedConfigMap(
      { name: 'w1', namespace: NS, body: { metadata: { labels: { watch: 'no' } } } },
      merge,
    );
    await core.deleteNamespacedConfigMap({ name: 'w2', namespace: NS });
    await until(() => seen.length === 4, 'four events');
    w.abort();
    assert.deepEqual(seen, ['MODIFIED w1', 'ADDED w2', 'DELETED w1', 'DELETED w2']);

    let ended = false;
    const timed = await new Watch(kc).watch(
      `/api/v1/namespaces/${NS}/configmaps`,
      { timeoutSeconds: 1 },
      () => undefined,
      () => {
        ended = true;
      },
    );
    await until(() => ended, 'the watch to end after timeoutSeconds', 4000);
    timed.abort();
  });

  it('prunes, defaults and enforces the CRD schema with the real 422 body', async () => {
    const { custom, server } = await env();
    const created = (await custom.createNamespacedCustomObject({
      ...clusterApi(),
      body: { ...cluster('d'), spec: { version: '3.5.16', unknownField: 1 } },
    })) as Any;
    assert.equal(created.spec.unknownField, undefined, 'unknown field pruned');
    assert.equal(created.spec.replicas, 3, 'default applied');

    const schema = await failure(
      custom.createNamespacedCustomObject({ ...clusterApi(), body: cluster('neg', { replicas: -1 }) }),
    );
    assert.equal(schema.code, 422);
    assert.deepEqual(schema.status.details.causes, [
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: -1: spec.replicas in body should be greater than or equal to 0',
        field: 'spec.replicas',
      },
    ]);
    const typed = await failure(
      custom.createNamespacedCustomObject({ ...clusterApi(), body: cluster('t', { replicas: 'three' }) }),
    );
    assert.match(
      typed.status.details.causes[0].message,
      /^Invalid value: "string": spec\.replicas in body must be of type integer: "string"$/,
    );

    // The in-process handle enforces the same schema.
    assert.throws(() => server.store.create(cluster('inproc', { replicas: -1 }) as never), /is invalid/);
  });

  it('answers bad requests with the real status codes and Status bodies', async () => {
    const { server, custom } = await env();
    const post = (path: string, body: string, type = 'application/json', method = 'POST') =>
      fetch(server.url + path, { method, body, headers: { 'Content-Type': type } }).then(async r => ({
        code: r.status,
        body: (await r.json()) as Any,
      }));
    const badJson = await post(`/api/v1/namespaces/${NS}/configmaps`, '{nope');
    assert.equal(badJson.code, 400);
    assert.equal(badJson.body.reason, 'BadRequest');
    await custom.createNamespacedCustomObject({ ...clusterApi(), body: cluster('e') });
    const mismatch = await post(
      `/apis/${GROUP}/${VERSION}/namespaces/${NS}/etcdclusters/e`,
      JSON.stringify(cluster('other')),
      'application/json',
      'PUT',
    );
    assert.equal(mismatch.code, 400);
    assert.equal(
      mismatch.body.message,
      'the name of the object (other) does not match the name on the URL (e)',
    );
    const missing = await fetch(`${server.url}/api/v1/namespaces/${NS}/pods/x`).then(async r => ({
      code: r.status,
      body: (await r.json()) as Any,
    }));
    assert.equal(missing.code, 404);
    assert.deepEqual(missing.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "x" not found',
      reason: 'NotFound',
      details: { name: 'x', kind: 'pods' },
      code: 404,
    });
    const unknown = await fetch(`${server.url}/apis/nope.io/v1/things`);
    assert.equal(unknown.status, 404);
    const notAllowed = await post(`/api/v1/namespaces/${NS}/configmaps/x`, '{}');
    assert.equal(notAllowed.code, 405);
    assert.equal(notAllowed.body.reason, 'MethodNotAllowed');
    const smp = await post(
      `/apis/${GROUP}/${VERSION}/namespaces/${NS}/etcdclusters/e`,
      '{}',
      'application/strategic-merge-patch+json',
      'PATCH',
    );
    assert.equal(smp.code, 415);
    assert.equal(smp.body.reason, 'UnsupportedMediaType');
    const noNs = await post(
      '/api/v1/namespaces/nowhere/configmaps',
      JSON.stringify({ metadata: { name: 'x' } }),
    );
    assert.equal(noNs.code, 404);
    assert.equal(noNs.body.message, 'namespaces "nowhere" not found');
    const strict = await post(
      `/apis/${GROUP}/${VERSION}/namespaces/${NS}/etcdclusters?fieldValidation=Strict`,
      JSON.stringify({ ...cluster('u'), spec: { version: '3.5.16', foo: 1 } }),
    );
    assert.equal(strict.code, 400);
    assert.match(strict.body.message, /strict decoding error: unknown field "spec\.foo"/);
    const warn = await fetch(`${server.url}/apis/${GROUP}/${VERSION}/namespaces/${NS}/etcdclusters`, {
      method: 'POST',
      body: JSON.stringify({ ...cluster('w'), spec: { version: '3.5.16', foo: 1 } }),
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(warn.status, 201);
    assert.equal(warn.headers.get('warning'), '299 - "unknown field \\"spec.foo\\""');
  });

  it('serves server-side apply as create-or-merge and Tables with printer columns', async () => {
    const { server } = await env();
    const url = `${server.url}/apis/${GROUP}/${VERSION}/namespaces/${NS}/etcdclusters/ssa?fieldManager=test`;
    const apply = (spec: Any) =>
      fetch(url, {
        method: 'PATCH',
        body: JSON.stringify(cluster('ssa', spec)),
        headers: { 'Content-Type': 'application/apply-patch+yaml' },
      });
    assert.equal((await apply({ replicas: 3 })).status, 201);
    const second = await apply({ replicas: 5 });
    assert.equal(second.status, 200);
    assert.equal(((await second.json()) as Any).spec.replicas, 5);
    const table = (await fetch(`${server.url}/apis/${GROUP}/${VERSION}/namespaces/${NS}/etcdclusters`, {
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
    }).then(r => r.json())) as Any;
    assert.equal(table.kind, 'Table');
    const crdColumns = (parse(readFileSync(join(CRDS, 'etcdfn.io_etcdclusters.yaml'), 'utf8')) as Any).spec
      .versions[0].additionalPrinterColumns as Any[];
    assert.deepEqual(
      table.columnDefinitions.map((c: Any) => c.name),
      ['Name', ...crdColumns.map(c => c.name)],
    );
    assert.equal(table.rows[0].cells[0], 'ssa');
    assert.equal(table.rows[0].object.kind, 'PartialObjectMetadata');
  });

  it('registers a CustomResourceDefinition created through the API and cleans up on its deletion', async () => {
    const { server, kc } = await env({ crdDir: undefined });
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const crd = parse(
      readFileSync(join(CRDS, 'etcdfn.io_etcdsnapshotschedules.yaml'), 'utf8'),
    ) as KubernetesObject;
    await objects.create(crd);
    const stored = plain(await objects.read(crd as never));
    assert.equal(stored.status.conditions.find((c: Any) => c.type === 'Established').status, 'True');
    const res = await fetch(`${server.url}/apis/${GROUP}/${VERSION}`);
    assert.equal(res.status, 200);
    assert.deepEqual(
      ((await res.json()) as Any).resources.map((r: Any) => r.name),
      ['etcdsnapshotschedules', 'etcdsnapshotschedules/status'],
    );
    const custom = kc.makeApiClient(CustomObjectsApi);
    const list = (await custom.listNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: NS,
      plural: 'etcdsnapshotschedules',
    })) as Any;
    assert.deepEqual(list.items, []);
    await objects.delete(crd);
    await server.settle();
    assert.equal((await fetch(`${server.url}/apis/${GROUP}/${VERSION}`)).status, 404);
  });

  it('deletes a namespace with its content', async () => {
    const { server, core } = await env({ podGracefulDeletion: false });
    await core.createNamespace({ body: { metadata: { name: 'tmp' } } });
    await core.createNamespacedConfigMap({ namespace: 'tmp', body: { metadata: { name: 'a' } } });
    await core.createNamespacedPersistentVolumeClaim({
      namespace: 'tmp',
      body: {
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    });
    await core.deleteNamespace({ name: 'tmp' });
    await server.settle();
    assert.equal((await failure(core.readNamespace({ name: 'tmp' }))).code, 404);
    const refused = await failure(core.deleteNamespace({ name: 'default' }));
    assert.equal(refused.code, 403);
  });

  it('keeps objects and the resourceVersion counter across a restart with dataDir', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'apiserver-data-'));
    try {
      const first = await env({ dataDir });
      const c = (await first.custom.createNamespacedCustomObject({
        ...clusterApi(),
        body: cluster('keep'),
      })) as Any;
      await first.core.createNamespacedConfigMap({
        namespace: NS,
        body: { metadata: { name: 'keep' }, data: { x: 'y' } },
      });
      const rvBefore = first.server.store.resourceVersion;
      await first.server.close();

      const second = await env({ dataDir });
      const again = (await second.custom.getNamespacedCustomObject(named('keep'))) as Any;
      assert.equal(again.metadata.uid, c.metadata.uid);
      assert.equal(again.metadata.resourceVersion, c.metadata.resourceVersion);
      assert.deepEqual((await second.core.readNamespacedConfigMap({ name: 'keep', namespace: NS })).data, {
        x: 'y',
      });
      const next = await second.core.createNamespacedConfigMap({
        namespace: NS,
        body: { metadata: { name: 'after' } },
      });
      assert.ok(Number(next.metadata!.resourceVersion) > rvBefore, 'resourceVersion counter restored');
      await second.server.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('serves core events under events.k8s.io/v1 as well', async () => {
    const { core, server } = await env();
    await core.createNamespacedEvent({
      namespace: NS,
      body: {
        metadata: { name: 'e1' },
        involvedObject: { kind: 'EtcdCluster', name: 'x', namespace: NS },
        reason: 'Scaled',
        message: 'scaled to 3 members',
        type: 'Normal',
      },
    });
    const listed = (await fetch(`${server.url}/apis/events.k8s.io/v1/namespaces/${NS}/events`).then(r =>
      r.json(),
    )) as Any;
    assert.equal(listed.items[0].note, 'scaled to 3 members');
    assert.equal(listed.items[0].regarding.name, 'x');
    const selected = await core.listNamespacedEvent({
      namespace: NS,
      fieldSelector: 'involvedObject.kind=EtcdCluster,involvedObject.name=x',
    });
    assert.equal(selected.items.length, 1);
  });
});
