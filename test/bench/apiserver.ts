// Benchmark (not a test): requests per second of the sandbox API server with 1,000 EtcdClusters
// stored, for GET of one object and for PUT /status with a resourceVersion precondition, over
// keep-alive HTTP from the same process (and GET through @kubernetes/client-node for comparison).
//
//   node --import tsx test/bench/apiserver.ts

import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../sandbox/apiserver/index.ts';
import { kubeConfigFor } from '../sandbox/kubeconfig.ts';

export interface BenchRow {
  benchmark: string;
  requests: number;
  errors: number;
  seconds: number;
  'req/s': number;
}

const CRDS = fileURLToPath(new URL('../../crds/', import.meta.url));
const OBJECTS = 1000;
const BASE = '/apis/etcdfn.io/v1alpha1/namespaces/default/etcdclusters';

interface Reply {
  status: number;
  body: string;
}

function call(agent: Agent, port: number, method: string, path: string, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: body ? { 'Content-Type': 'application/json' } : {},
      },
      res => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Run `total` calls of `one(i)` with `concurrency` in flight; returns a table row. */
async function measure(
  name: string,
  total: number,
  concurrency: number,
  one: (i: number) => Promise<boolean>,
): Promise<BenchRow> {
  let next = 0;
  let errors = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        if (!(await one(i))) errors++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return {
    benchmark: name,
    requests: total,
    errors,
    seconds: Number(seconds.toFixed(2)),
    'req/s': Math.round(total / seconds),
  };
}

function seed(server: ApiServer): string[] {
  const names: string[] = [];
  for (let i = 0; i < OBJECTS; i++) {
    const name = `bench-${String(i).padStart(4, '0')}`;
    server.store.create({
      apiVersion: 'etcdfn.io/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name, namespace: 'default', labels: { bench: 'yes' } },
      spec: { replicas: 3, version: '3.5.16' },
    });
    names.push(name);
  }
  return names;
}

export async function benchApiServer(
  opts: { requests?: number; concurrency?: number } = {},
): Promise<BenchRow[]> {
  const total = opts.requests ?? 20_000;
  const concurrency = opts.concurrency ?? 16;
  const server = await startApiServer({ crdDir: CRDS });
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  try {
    const names = seed(server);
    const rows: BenchRow[] = [];
    // warm-up (JIT, connections)
    await measure(
      'warm-up',
      2000,
      concurrency,
      async i => (await call(agent, server.port, 'GET', `${BASE}/${names[i % OBJECTS]}`)).status === 200,
    );

    rows.push(
      await measure('GET one EtcdCluster (http keep-alive)', total, concurrency, async i => {
        const r = await call(agent, server.port, 'GET', `${BASE}/${names[(i * 7919) % OBJECTS]}`);
        return r.status === 200;
      }),
    );

    const rv = new Map<string, string>();
    for (const name of names) {
      rv.set(
        name,
        server.store.get('etcdfn.io/v1alpha1', 'EtcdCluster', name, 'default')!.metadata.resourceVersion!,
      );
    }
    rows.push(
      await measure('PUT /status with resourceVersion (http keep-alive)', total, concurrency, async i => {
        const name = names[i % OBJECTS];
        const body = JSON.stringify({
          apiVersion: 'etcdfn.io/v1alpha1',
          kind: 'EtcdCluster',
          metadata: { name, namespace: 'default', resourceVersion: rv.get(name) },
          spec: { replicas: 3, version: '3.5.16' },
          status: { readyMembers: i % 4, ready: `${i % 4}/3`, phase: 'Running', observedGeneration: 1 },
        });
        const r = await call(agent, server.port, 'PUT', `${BASE}/${name}/status`, body);
        if (r.status !== 200) return false;
        rv.set(
          name,
          (JSON.parse(r.body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion,
        );
        return true;
      }),
    );

    rows.push(
      await measure('LIST 1,000 EtcdClusters (http keep-alive)', 200, 4, async () => {
        const r = await call(agent, server.port, 'GET', BASE);
        return r.status === 200;
      }),
    );

    const custom = kubeConfigFor(server.url).makeApiClient(CustomObjectsApi);
    rows.push(
      await measure('GET one EtcdCluster (client-node)', Math.min(total, 5000), concurrency, async i => {
        const name = names[(i * 7919) % OBJECTS];
        await custom.getNamespacedCustomObject({
          group: 'etcdfn.io',
          version: 'v1alpha1',
          namespace: 'default',
          plural: 'etcdclusters',
          name,
        });
        return true;
      }),
    );
    return rows;
  } finally {
    agent.destroy();
    await server.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const rows = await benchApiServer();
  console.log(`sandbox API server, ${OBJECTS} objects stored`);
  console.table(rows);
}
