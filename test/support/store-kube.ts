// A plain in-memory fake of the Kubernetes adapter (shared/k8s/objects.ts) for act-layer unit tests:
// objects held by kind/namespace/name, every call recorded in order, and any call's answer scripted
// (a conflict, a NotFound...) for the next time it is made. A merge patch merges as RFC 7396 does, so
// what a step leaves is read back as the API server would hold it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mock } from 'node:test';
import type { KubeObject, KubeObjects, ObjectRef } from '../../shared/k8s/objects.ts';
import { settingsFromEnv, type Context } from '../../shared/runtime/context.ts';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';

export type Verb =
  'get' | 'list' | 'create' | 'delete' | 'mergePatch' | 'mergePatchStatus' | 'replaceStatus' | 'replace';

export interface KubeCall {
  verb: Verb;
  kind: string;
  name: string;
  apiVersion?: string;
  namespace?: string;
  body?: unknown;
  options?: unknown;
}

const keyOf = (r: { kind?: string; namespace?: string; name?: string }) =>
  `${r.kind}/${r.namespace ?? ''}/${r.name ?? ''}`;

function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

const clone = <T>(v: T): T => structuredClone(v);

export class StoreKube {
  objects = new Map<string, KubeObject>();
  calls: KubeCall[] = [];
  private scripted = new Map<Verb, unknown[]>();
  private rv = 100;

  constructor(objects: KubeObject[] = []) {
    for (const o of objects) this.put(o);
  }

  put(object: KubeObject): void {
    this.objects.set(keyOf({ ...object.metadata, kind: object.kind }), clone(object));
  }

  stored<T = KubeObject>(kind: string, namespace: string, name: string): T | undefined {
    const o = this.objects.get(keyOf({ kind, namespace, name }));
    return o as T | undefined;
  }

  /** The next `verb` call answers `answers` in turn (then the store again). */
  script(verb: Verb, ...answers: unknown[]): this {
    this.scripted.set(verb, [...(this.scripted.get(verb) ?? []), ...answers]);
    return this;
  }

  /** The calls, one line each: `verb Kind name`. */
  get lines(): string[] {
    return this.calls.map(c => `${c.verb} ${c.kind} ${c.name}`);
  }

  private next(verb: Verb): unknown {
    const queue = this.scripted.get(verb);
    return queue && queue.length > 0 ? queue.shift() : undefined;
  }

  private record(verb: Verb, ref: Partial<ObjectRef>, body?: unknown, options?: unknown) {
    this.calls.push({
      verb,
      kind: ref.kind ?? '',
      name: ref.name ?? '',
      apiVersion: ref.apiVersion,
      namespace: ref.namespace,
      ...(body !== undefined && { body: clone(body) }),
      ...(options !== undefined && { options }),
    });
  }

  get(ref: ObjectRef) {
    this.record('get', ref);
    const s = this.next('get');
    if (s) return Promise.resolve(s);
    const o = this.objects.get(keyOf(ref));
    return Promise.resolve(o ? { kind: 'found', object: clone(o) } : { kind: 'not-found' });
  }

  async find(ref: ObjectRef) {
    const read = (await this.get(ref)) as { kind: string; object?: KubeObject };
    return read.kind === 'found' ? read.object : undefined;
  }

  list(apiVersion: string, kind: string, namespace: string, labelSelector?: string) {
    this.record('list', { apiVersion, kind, namespace, name: '' }, undefined, labelSelector);
    const s = this.next('list');
    if (s) return Promise.resolve(s);
    const items = [...this.objects.values()].filter(
      o => o.kind === kind && (namespace === '' || o.metadata.namespace === namespace),
    );
    return Promise.resolve(items.map(clone));
  }

  create(object: KubeObject) {
    this.record('create', { ...object.metadata, kind: object.kind, apiVersion: object.apiVersion }, object);
    const s = this.next('create');
    if (s) return Promise.resolve(s);
    const key = keyOf({ ...object.metadata, kind: object.kind });
    if (this.objects.has(key)) return Promise.resolve({ kind: 'already-exists' });
    const stored = clone({ ...object, metadata: { ...object.metadata, resourceVersion: `${this.rv++}` } });
    this.objects.set(key, stored);
    return Promise.resolve({ kind: 'created', object: clone(stored) });
  }

  delete(ref: ObjectRef, options?: unknown) {
    this.record('delete', ref, undefined, options);
    const s = this.next('delete');
    if (s) return Promise.resolve(s);
    return Promise.resolve(this.objects.delete(keyOf(ref)) ? { kind: 'deleted' } : { kind: 'not-found' });
  }

  private patch(verb: Verb, ref: ObjectRef, patch: Record<string, unknown>) {
    this.record(verb, ref, patch);
    const s = this.next(verb);
    if (s) return Promise.resolve(s);
    const o = this.objects.get(keyOf(ref));
    if (!o) return Promise.resolve({ kind: 'not-found' });
    const merged = mergePatch(o, patch) as KubeObject;
    merged.metadata = { ...merged.metadata, resourceVersion: `${this.rv++}` };
    this.objects.set(keyOf(ref), merged);
    return Promise.resolve({ kind: 'written', object: clone(merged) });
  }

  mergePatch(ref: ObjectRef, patch: Record<string, unknown>) {
    return this.patch('mergePatch', ref, patch);
  }

  mergePatchStatus(ref: ObjectRef, status: Record<string, unknown>) {
    return this.patch('mergePatchStatus', ref, { status });
  }

  private write(verb: Verb, object: KubeObject & { status?: unknown }) {
    this.record(verb, { ...object.metadata, kind: object.kind, apiVersion: object.apiVersion }, object);
    const s = this.next(verb);
    if (s) return Promise.resolve(s);
    const key = keyOf({ ...object.metadata, kind: object.kind });
    const o = this.objects.get(key);
    if (!o) return Promise.resolve({ kind: 'not-found' });
    if (
      object.metadata.resourceVersion !== undefined &&
      object.metadata.resourceVersion !== o.metadata.resourceVersion
    )
      return Promise.resolve({ kind: 'conflict', message: 'the object has been modified' });
    const stored =
      verb === 'replaceStatus'
        ? { ...o, status: clone(object.status), metadata: { ...o.metadata, resourceVersion: `${this.rv++}` } }
        : { ...clone(object), metadata: { ...object.metadata, resourceVersion: `${this.rv++}` } };
    this.objects.set(key, stored);
    return Promise.resolve({ kind: 'written', object: clone(stored) });
  }

  replaceStatus(object: KubeObject) {
    return this.write('replaceStatus', object);
  }

  replace(object: KubeObject) {
    return this.write('replace', object);
  }
}

/** A Context over the fakes; `settings` overrides the defaults. */
export function storeContext(
  kube: StoreKube,
  etcd: Partial<EtcdAdapter>,
  settings: Partial<Context['settings']> = {},
  now = new Date('2026-11-29T12:00:00Z'),
): Context {
  return {
    kube: kube as unknown as KubeObjects,
    etcd: etcd as EtcdAdapter,
    now: () => now,
    settings: { ...settingsFromEnv({}), promoteAttempts: 3, promoteIntervalMs: 1, ...settings },
  };
}

/**
 * Runs `step` with crash point `point` armed (shared/runtime/crash.ts) and process.kill replaced:
 * resolves with `{ killed: true, at }` where `at` is what `snapshot` saw when it fired, or with the
 * step's result when it never fired.
 */
export async function withCrashArmed<T, S>(
  point: string,
  step: () => Promise<T>,
  snapshot: () => S,
): Promise<{ killed: true; at: S } | { killed: false; result: T }> {
  const dir = mkdtempSync(join(tmpdir(), 'etcdfn-crash-unit-'));
  const saved = process.env.ETCDFN_CRASH_DIR;
  process.env.ETCDFN_CRASH_DIR = dir;
  writeFileSync(join(dir, point), '');
  let killed: (at: S) => void = () => {};
  const death = new Promise<{ killed: true; at: S }>(resolve => {
    killed = at => resolve({ killed: true, at });
  });
  const kill = mock.method(process, 'kill', () => {
    killed(snapshot());
    return true;
  });
  try {
    return await Promise.race([step().then(result => ({ killed: false as const, result })), death]);
  } finally {
    kill.mock.restore();
    if (saved === undefined) delete process.env.ETCDFN_CRASH_DIR;
    else process.env.ETCDFN_CRASH_DIR = saved;
    rmSync(dir, { recursive: true, force: true });
  }
}
