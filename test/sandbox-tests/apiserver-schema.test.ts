// Structural schema semantics of the sandbox API server with a test CRD registered through the API:
// pruning (preserve-unknown-fields, embedded resources), defaulting (nested, nullable), value
// validation messages (CEL rules are the real kube-apiserver's: test/integration/crd-rules.test.ts), several served
// versions, selectable fields, cluster scope; plus list paging, dry runs, /watch/ paths, 410 Expired
// and deletecollection.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startApiServer, type ApiServer } from '../sandbox/apiserver/index.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;

const WIDGET_SCHEMA: Any = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer', minimum: 1 },
        max: { type: 'integer', default: 10, maximum: 1000 },
        mode: { type: 'string', enum: ['open', 'locked'] },
        owner: { type: 'string', maxLength: 5 },
        label: { type: 'string', pattern: '^[a-z]+$', nullable: true },
        quantity: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
        tags: { type: 'array', maxItems: 2, items: { type: 'string' } },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string' }, port: { type: 'integer', default: 80 } },
          },
        },
        limits: {
          type: 'object',
          default: {},
          properties: {
            cpu: { type: 'string', default: '100m' },
            memory: { type: 'string', default: '64Mi' },
          },
        },
        extra: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { known: { type: 'integer' } },
        },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        color: { type: 'string' },
      },
    },
    status: { type: 'object', properties: { ready: { type: 'boolean' } } },
  },
};

function widgetCrd(scope = 'Namespaced'): Any {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.test.io' },
    spec: {
      group: 'test.io',
      scope,
      names: { kind: 'Widget', plural: 'widgets', shortNames: ['wd'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: WIDGET_SCHEMA },
          subresources: { status: {} },
          selectableFields: [{ jsonPath: '.spec.color' }],
          additionalPrinterColumns: [
            { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
            { name: 'Ready', type: 'boolean', jsonPath: '.status.ready' },
          ],
        },
        { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: WIDGET_SCHEMA } },
      ],
    },
  };
}

const servers: ApiServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

interface Reply {
  code: number;
  body: Any;
  warning: string | null;
}

async function setup(opts: { watchHistory?: number } = {}) {
  const server = await startApiServer(opts);
  servers.push(server);
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    type = 'application/json',
  ): Promise<Reply> => {
    const res = await fetch(server.url + path, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { 'Content-Type': type },
    });
    return { code: res.status, body: (await res.json()) as Any, warning: res.headers.get('warning') };
  };
  const created = await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd());
  assert.equal(created.code, 201, JSON.stringify(created.body));
  return { server, call };
}

const W = '/apis/test.io/v1/namespaces/default/widgets';

function widget(name: string, spec: Any): Any {
  return { apiVersion: 'test.io/v1', kind: 'Widget', metadata: { name }, spec };
}

describe('sandbox API server: structural schemas and CEL options', () => {
  it('prunes unknown fields but keeps preserved and embedded ones, and applies nested defaults', async () => {
    const { call } = await setup();
    const r = await call(
      'POST',
      W,
      widget('a', {
        size: 2,
        bogus: true,
        label: null,
        quantity: '1Gi',
        ports: [{ name: 'http' }],
        extra: { known: 1, anything: { deep: true } },
        template: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'x', junk: 1 },
          spec: { whatever: 1 },
          other: 2,
        },
        labels: { a: 'b' },
      }),
    );
    assert.equal(r.code, 201, JSON.stringify(r.body));
    const spec = r.body.spec as Any;
    assert.equal(spec.bogus, undefined);
    assert.equal(spec.label, null, 'nullable null kept');
    assert.equal(spec.max, 10);
    assert.deepEqual(spec.limits, { cpu: '100m', memory: '64Mi' }, 'defaults inside a defaulted object');
    assert.deepEqual(spec.ports, [{ name: 'http', port: 80 }]);
    assert.deepEqual(spec.extra, { known: 1, anything: { deep: true } });
    assert.deepEqual(spec.template, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'x' },
      spec: { whatever: 1 },
    });
    assert.equal(r.warning?.includes('unknown field \\"spec.bogus\\"'), true);
  });

  it('reports value validation errors in the API server wording', async () => {
    const { call } = await setup();
    const r = await call(
      'POST',
      W,
      widget('bad', {
        size: 0,
        mode: 'shut',
        owner: 'toolong',
        label: 'ABC',
        tags: ['a', 'b', 'c'],
        ports: [{ name: 'a' }, { name: 'a' }],
      }),
    );
    assert.equal(r.code, 422);
    const causes = (r.body.details.causes as Any[]).map(c => `${c.field}: ${c.message}`);
    assert.deepEqual(causes.sort(), [
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      'spec.label: Invalid value: "ABC": spec.label in body should match \'^[a-z]+$\'',
      'spec.mode: Unsupported value: "shut": supported values: "open", "locked"',
      'spec.owner: Too long: may not be more than 5 bytes',
      'spec.ports[1]: Duplicate value: "{\\"name\\":\\"a\\",\\"port\\":80}"',
      'spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1',
      'spec.tags: Too many: 3: must have at most 2 items',
    ]);
    assert.match(r.body.message, /^Widget\.test\.io "bad" is invalid: \[/);
    const missing = await call('POST', W, widget('m', {}));
    assert.deepEqual(missing.body.details.causes[0], {
      reason: 'FieldValueRequired',
      message: 'Required value',
      field: 'spec.size',
    });
  });

  it('serves every version, selectable fields and printer columns of the CRD', async () => {
    const { call } = await setup();
    await call('POST', W, { ...widget('red', { size: 1, color: 'red' }) });
    await call('POST', '/apis/test.io/v1beta1/namespaces/default/widgets', {
      ...widget('blue', { size: 2, color: 'blue' }),
      apiVersion: 'test.io/v1beta1',
    });
    const beta = await call('GET', '/apis/test.io/v1beta1/namespaces/default/widgets/red');
    assert.equal(beta.body.apiVersion, 'test.io/v1beta1');
    const v1 = await call('GET', `${W}/blue`);
    assert.equal(v1.body.apiVersion, 'test.io/v1');
    const sel = await call('GET', `${W}?fieldSelector=spec.color%3Dblue`);
    assert.deepEqual(
      sel.body.items.map((i: Any) => i.metadata.name),
      ['blue'],
    );
    const groups = await call('GET', '/apis/test.io');
    assert.deepEqual(groups.body.preferredVersion, { groupVersion: 'test.io/v1', version: 'v1' });
    const red = await call('GET', `${W}/red`);
    const status = await call('PUT', `${W}/red/status`, { ...red.body, status: { ready: true } });
    assert.equal(status.code, 200);
    const { server } = { server: servers[servers.length - 1] };
    const table = (await fetch(`${server.url}${W}`, {
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    }).then(r => r.json())) as Any;
    assert.deepEqual(
      table.columnDefinitions.map((c: Any) => c.name),
      ['Name', 'Size', 'Ready'],
    );
    assert.deepEqual(
      table.rows.map((r: Any) => r.cells),
      [
        ['blue', 2, null],
        ['red', 1, true],
      ],
    );
  });

  it('pages lists, dry-runs writes, watches on /watch/ paths, expires old resourceVersions and deletes collections', async () => {
    const { call, server } = await setup({ watchHistory: 5 });
    for (let i = 0; i < 7; i++)
      await call('POST', W, widget(`w${i}`, { size: 1, color: i % 2 ? 'odd' : 'even' }));
    const page1 = await call('GET', `${W}?limit=3`);
    assert.deepEqual(
      page1.body.items.map((i: Any) => i.metadata.name),
      ['w0', 'w1', 'w2'],
    );
    assert.equal(page1.body.metadata.remainingItemCount, 4);
    const page2 = await call(
      'GET',
      `${W}?limit=3&continue=${encodeURIComponent(page1.body.metadata.continue as string)}`,
    );
    assert.deepEqual(
      page2.body.items.map((i: Any) => i.metadata.name),
      ['w3', 'w4', 'w5'],
    );

    const dry = await call('POST', `${W}?dryRun=All`, widget('dry', { size: 1 }));
    assert.equal(dry.code, 201);
    assert.equal((await call('GET', `${W}/dry`)).code, 404);

    const expired = await fetch(
      `${server.url}/apis/test.io/v1/watch/namespaces/default/widgets?resourceVersion=1`,
    ).then(r => r.text());
    const event = JSON.parse(expired.trim()) as Any;
    assert.equal(event.type, 'ERROR');
    assert.equal(event.object.code, 410);
    assert.equal(event.object.reason, 'Expired');

    const controller = new AbortController();
    const stream = await fetch(`${server.url}/apis/test.io/v1/watch/namespaces/default/widgets/w1`, {
      signal: controller.signal,
    });
    const reader = stream.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.equal((JSON.parse(first.trim()) as Any).object.metadata.name, 'w1');
    controller.abort();

    const deleted = await call('DELETE', `${W}?fieldSelector=spec.color%3Dodd`);
    assert.equal(deleted.code, 200);
    assert.deepEqual(
      (await call('GET', W)).body.items.map((i: Any) => i.metadata.name),
      ['w0', 'w2', 'w4', 'w6'],
    );
  });

  it('serves cluster-scoped custom resources', async () => {
    const server = await startApiServer();
    servers.push(server);
    const post = await fetch(`${server.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
      method: 'POST',
      body: JSON.stringify(widgetCrd('Cluster')),
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(post.status, 201);
    const created = await fetch(`${server.url}/apis/test.io/v1/widgets`, {
      method: 'POST',
      body: JSON.stringify(widget('global', { size: 1 })),
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(created.status, 201);
    const body = (await created.json()) as Any;
    assert.equal(body.metadata.namespace, undefined);
    assert.equal(
      (await fetch(`${server.url}/apis/test.io/v1/namespaces/default/widgets/global`)).status,
      404,
    );
  });
});
