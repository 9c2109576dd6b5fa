// The sandbox API server: a local stand-in for kube-apiserver on loopback that kubectl and
// @kubernetes/client-node use unchanged. See startApiServer() for the options and the handle.

import { readdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { builtinDefs } from './builtin.ts';
import { ObjectStore } from './client.ts';
import type { ServerContext, SubresourceHandler } from './context.ts';
import { crdResourceDef, defsFromCrd } from './crd.ts';
import { Controllers } from './gc.ts';
import { createHttpServer } from './http.ts';
import { Engine } from './operations.ts';
import { Persistence } from './persistence.ts';
import { Registry } from './registry.ts';
import { SANDBOX_DEFAULT_CLASS, STORAGE_CLASS_KEY } from './pvc-storage.ts';
import { Store, type StoreEvent } from './store.ts';
import type { KObject } from './types.ts';

export { ApiError } from './errors.ts';
export type { ObjectStore, PatchKind, ListOptions } from './client.ts';
export type { SubresourceHandler, SubresourceRequest } from './context.ts';
export type { KObject, DeleteOptions } from './types.ts';
export type { StoreEvent } from './store.ts';

export interface ApiServerOptions {
  /** TCP port on 127.0.0.1; 0 (the default) picks a free one */
  port?: number;
  /** directory of CustomResourceDefinition YAML files applied at start (e.g. crds/) */
  crdDir?: string;
  /** further CRD directories applied at start (the full sandbox adds Knative's PingSource, test/sandbox/crds) */
  extraCrdDirs?: string[];
  /** directory for persistence: objects survive a restart with the same dataDir */
  dataDir?: string;
  /**
   * true (default): DELETE of a Pod without gracePeriodSeconds only sets deletionTimestamp and
   * deletionGracePeriodSeconds (from the body, else spec.terminationGracePeriodSeconds, else 30); the
   * Pod stays until someone deletes it with gracePeriodSeconds=0 (the kubelet, or
   * `kubectl delete --force --grace-period=0`). Pods in phase Succeeded/Failed go at once.
   * false: Pods are deleted at once, as other objects (use this when no kubelet runs).
   */
  podGracefulDeletion?: boolean;
  /** namespaces to create at start besides default, kube-system, kube-public, kube-node-lease */
  namespaces?: string[];
  /** create the default StorageClass `standard` (allowVolumeExpansion: true) at start; default true */
  defaultStorageClass?: boolean;
  /** watch events kept for resuming watches from a resourceVersion (older ones answer 410 Expired) */
  watchHistory?: number;
  /** request log (one line per request) */
  log?: (line: string) => void;
}

export interface ApiServer {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  /** in-process CRUD with the same semantics as the HTTP API */
  store: ObjectStore;
  engine: Engine;
  registry: Registry;
  /** serve a subresource the API server does not implement itself, e.g. "pods/log" */
  registerSubresource(name: string, handler: SubresourceHandler): void;
  /** resolves when the garbage collector and the other controllers have nothing pending */
  settle(): Promise<void>;
  close(): Promise<void>;
}

const CRD_KEY = 'apiextensions.k8s.io/customresourcedefinitions';
const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** Keep the registry in step with the stored CRDs. */
function crdSync(registry: Registry, store: Store): (ev: StoreEvent) => void {
  const served = new Map<string, { group: string; plural: string }>();
  const register = (crd: KObject): void => {
    const prev = served.get(crd.metadata.name!);
    if (prev) registry.removeResource(prev.group, prev.plural);
    const defs = defsFromCrd(crd);
    for (const def of defs) registry.add(def);
    if (defs[0]) served.set(crd.metadata.name!, { group: defs[0].group, plural: defs[0].resource });
  };
  for (const crd of store.list(CRD_KEY)) register(crd);
  return ev => {
    if (ev.type !== 'DELETED') return register(ev.object);
    const prev = served.get(ev.object.metadata.name!);
    if (!prev) return;
    served.delete(ev.object.metadata.name!);
    const storageKey = `${prev.group}/${prev.plural}`;
    registry.removeResource(prev.group, prev.plural);
    for (const obj of store.list(storageKey)) store.remove(storageKey, obj);
  };
}

function readCrdFiles(dir: string): KObject[] {
  const out: KObject[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!/\.(ya?ml|json)$/.test(file)) continue;
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      const obj = doc.toJS() as KObject | null;
      if (obj?.kind === 'CustomResourceDefinition') out.push(obj);
    }
  }
  return out;
}

/** Create or update a CRD from a file, as `kubectl apply` would. */
function applyCrd(engine: Engine, crd: KObject): void {
  const def = engine.registry.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!;
  const existing = engine.getStored(def, undefined, crd.metadata.name!);
  if (!existing) {
    engine.create(def, undefined, crd);
    return;
  }
  const body = {
    ...crd,
    metadata: { ...existing.metadata, ...crd.metadata, resourceVersion: existing.metadata.resourceVersion },
  };
  engine.update(def, undefined, crd.metadata.name!, body);
}

/** The sandbox's default StorageClass (pvc-storage.ts), created once; a deleted one comes back at start. */
function ensureDefaultStorageClass(engine: Engine): void {
  const def = engine.registry.lookup('storage.k8s.io', 'v1', 'storageclasses')!;
  const name = SANDBOX_DEFAULT_CLASS.metadata.name!;
  if (!engine.getStored(def, undefined, name))
    engine.create(def, undefined, structuredClone(SANDBOX_DEFAULT_CLASS));
}

function ensureNamespaces(engine: Engine, names: string[]): void {
  const def = engine.registry.lookup('', 'v1', 'namespaces')!;
  for (const name of names) {
    if (!engine.getStored(def, undefined, name)) engine.create(def, undefined, { metadata: { name } });
  }
}

export async function startApiServer(opts: ApiServerOptions = {}): Promise<ApiServer> {
  const store = new Store({ historyLimit: opts.watchHistory });
  const registry = new Registry();
  const engine = new Engine(store, registry);
  for (const def of builtinDefs({
    podGracefulDeletion: opts.podGracefulDeletion ?? true,
    listServices: () => store.list('/services'),
    listStorageClasses: () => store.list(STORAGE_CLASS_KEY),
  })) {
    registry.add(def);
  }
  registry.add(crdResourceDef());

  const persistence = opts.dataDir ? new Persistence(opts.dataDir, store) : undefined;
  const snapshot = persistence?.load();
  if (snapshot) store.restore(snapshot);
  store.subscribe(CRD_KEY, crdSync(registry, store));
  persistence?.start();

  ensureNamespaces(engine, [...DEFAULT_NAMESPACES, ...(opts.namespaces ?? [])]);
  if (opts.defaultStorageClass !== false) ensureDefaultStorageClass(engine);
  if (opts.crdDir) for (const crd of readCrdFiles(opts.crdDir)) applyCrd(engine, crd);
  for (const dir of opts.extraCrdDirs ?? []) for (const crd of readCrdFiles(dir)) applyCrd(engine, crd);

  const controllers = new Controllers(engine);
  controllers.trigger();

  const ctx: ServerContext = {
    engine,
    registry,
    store,
    watches: new Set(),
    subresources: new Map(),
    hostPort: '',
    log: opts.log,
  };
  const server = createHttpServer(ctx);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  ctx.hostPort = `127.0.0.1:${port}`;

  let closed = false;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    store: new ObjectStore(engine),
    engine,
    registry,
    registerSubresource(name, handler) {
      ctx.subresources.set(name, handler);
    },
    settle: () => controllers.idle(),
    async close() {
      if (closed) return;
      closed = true;
      for (const close of [...ctx.watches]) close();
      controllers.close();
      persistence?.close();
      await new Promise<void>(resolve => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
