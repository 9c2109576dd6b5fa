// An in-memory stand-in for shared/k8s/objects.ts's KubeObjects, for unit tests of the act layer
// (shared/reconcile/*): objects kept by kind, namespace and name, each call recorded in order as
// "verb Kind ns/name", resourceVersion counted up on every write (replace and replaceStatus are
// compare-and-swap on it, as the API server's are), and answers scripted per verb and kind to make
// a call fail on cue (a conflict, a refusal, a thrown error) where a real API server cannot.
import type { KubeObject, KubeObjects, ObjectRef } from '../../shared/k8s/objects.ts';
import type { Context } from '../../shared/runtime/context.ts';
import { settingsFromEnv } from '../../shared/runtime/context.ts';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';

type Verb = 'get' | 'list' | 'create' | 'replace' | 'replaceStatus' | 'mergePatch' | 'delete';
/** A scripted answer: returned as the call's result, thrown when an Error; null: the store answers. */
type Answer = Record<string, unknown> | Error | null;

const keyOf = (kind: string, namespace: string, name: string) => `${kind}/${namespace}/${name}`;
const clone = <T>(o: T): T => structuredClone(o);

function mergeInto(target: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date))
      out[k] = mergeInto((out[k] as Record<string, unknown>) ?? {}, v as Record<string, unknown>);
    else out[k] = v;
  }
  return out;
}

export class FakeKube {
  readonly objects = new Map<string, KubeObject>();
  /** Every call, in order: "verb Kind namespace/name". */
  readonly calls: string[] = [];
  /** The objects created, in order (Events included). */
  readonly created: KubeObject[] = [];
  /** The options of each delete, in order. */
  readonly deletes: { ref: ObjectRef; options: unknown }[] = [];
  /** The merge patches sent, in order. */
  readonly patches: { ref: ObjectRef; patch: Record<string, unknown> }[] = [];
  private readonly scripted = new Map<string, Answer[]>();
  private version = 100;

  constructor(objects: readonly unknown[] = []) {
    for (const o of objects) this.put(o as KubeObject);
  }

  put(object: KubeObject): void {
    const o = clone(object);
    o.metadata.resourceVersion ??= String(++this.version);
    this.objects.set(keyOf(o.kind ?? '', o.metadata.namespace ?? '', o.metadata.name ?? ''), o);
  }

  /** The stored object, or undefined. */
  stored<T = KubeObject>(kind: string, namespace: string, name: string): T | undefined {
    return this.objects.get(keyOf(kind, namespace, name)) as T | undefined;
  }

  /** The next `verb`s on `kind` answer `answers` (in order, once each; null: the store) instead of the store. */
  script(verb: Verb, kind: string, ...answers: Answer[]): this {
    const key = `${verb} ${kind}`;
    this.scripted.set(key, [...(this.scripted.get(key) ?? []), ...answers]);
    return this;
  }

  /** The Events created: "type reason: message". */
  get events(): string[] {
    return this.created
      .filter(o => o.kind === 'Event')
      .map(o => {
        const e = o as KubeObject & { type?: string; reason?: string; message?: string };
        return `${e.type} ${e.reason}: ${e.message}`;
      });
  }

  /** The calls other than Event writes. */
  get writes(): string[] {
    return this.calls.filter(c => !/^(get|find|list) /.test(c) && !c.includes(' Event '));
  }

  private take(verb: Verb, kind: string): Record<string, unknown> | undefined {
    const queue = this.scripted.get(`${verb} ${kind}`);
    const answer = queue?.shift();
    if (answer instanceof Error) throw answer;
    return answer ?? undefined;
  }

  private record(verb: string, kind: string, namespace: string, name: string) {
    this.calls.push(`${verb} ${kind} ${namespace}/${name}`);
  }

  /** The stored object `ref` names; an apiVersion other than the stored one's is refused, as a real API server would. */
  private at(ref: ObjectRef): KubeObject | undefined {
    const o = this.objects.get(keyOf(ref.kind, ref.namespace, ref.name));
    if (o?.apiVersion && o.apiVersion !== ref.apiVersion)
      throw new Error(`no ${ref.kind} in apiVersion "${ref.apiVersion}" (it is ${o.apiVersion})`);
    return o;
  }

  get = async <T extends KubeObject>(ref: ObjectRef) => {
    this.record('get', ref.kind, ref.namespace, ref.name);
    const answer = this.take('get', ref.kind);
    if (answer) return answer as never;
    const o = this.at(ref);
    return (o ? { kind: 'found', object: clone(o) as T } : { kind: 'not-found' }) as
      { kind: 'found'; object: T } | { kind: 'not-found' };
  };

  find = async <T extends KubeObject>(ref: ObjectRef): Promise<T | undefined> => {
    const read = await this.get<T>(ref);
    return read.kind === 'found' ? read.object : undefined;
  };

  list = async <T extends KubeObject>(
    apiVersion: string,
    kind: string,
    namespace: string,
    labelSelector?: string,
  ): Promise<T[]> => {
    this.calls.push(`list ${kind} ${namespace}${labelSelector ? ` ${labelSelector}` : ''}`);
    const answer = this.take('list', kind);
    if (answer) return answer as never;
    const other = [...this.objects.values()].find(
      o => o.kind === kind && o.apiVersion && o.apiVersion !== apiVersion,
    );
    if (other) throw new Error(`no ${kind} in apiVersion "${apiVersion}" (it is ${other.apiVersion})`);
    const wanted = (labelSelector ?? '')
      .split(',')
      .filter(Boolean)
      .map(s => s.split('='));
    return [...this.objects.values()]
      .filter(o => o.kind === kind && (!namespace || o.metadata.namespace === namespace))
      .filter(o => wanted.every(([k, v]) => o.metadata.labels?.[k ?? ''] === v))
      .map(o => clone({ ...o, apiVersion }) as T);
  };

  create = async <T extends KubeObject>(object: T) => {
    const { kind = '', metadata } = object;
    this.record('create', kind, metadata.namespace ?? '', metadata.name ?? '');
    const answer = this.take('create', kind);
    if (answer) return answer as never;
    const key = keyOf(kind, metadata.namespace ?? '', metadata.name ?? '');
    if (this.objects.has(key)) return { kind: 'already-exists' } as const;
    const stored = clone(object);
    stored.metadata.resourceVersion = String(++this.version);
    stored.metadata.uid ??= `${metadata.name}-uid-${this.version}`;
    this.objects.set(key, stored);
    this.created.push(clone(stored));
    return { kind: 'created', object: clone(stored) } as const;
  };

  private swap<T extends KubeObject>(verb: Verb, object: T, statusOnly: boolean) {
    const { kind = '', metadata } = object;
    this.record(verb, kind, metadata.namespace ?? '', metadata.name ?? '');
    const answer = this.take(verb, kind);
    if (answer) return answer as never;
    const key = keyOf(kind, metadata.namespace ?? '', metadata.name ?? '');
    const current = this.objects.get(key);
    if (!current) return { kind: 'not-found' } as const;
    if (current.metadata.resourceVersion !== metadata.resourceVersion)
      return { kind: 'conflict', message: 'the object has been modified' } as const;
    const next = statusOnly
      ? { ...clone(current), status: clone((object as { status?: unknown }).status) }
      : clone(object);
    next.metadata.resourceVersion = String(++this.version);
    this.objects.set(key, next);
    return { kind: 'written', object: clone(next) as T } as const;
  }

  replace = async <T extends KubeObject>(object: T) => this.swap('replace', object, false);
  replaceStatus = async <T extends KubeObject>(object: T) => this.swap('replaceStatus', object, true);

  mergePatch = async <T extends KubeObject>(ref: ObjectRef, patch: Record<string, unknown>) => {
    this.record('mergePatch', ref.kind, ref.namespace, ref.name);
    this.patches.push({ ref, patch: clone(patch) });
    const answer = this.take('mergePatch', ref.kind);
    if (answer) return answer as never;
    const key = keyOf(ref.kind, ref.namespace, ref.name);
    const current = this.at(ref);
    if (!current) return { kind: 'not-found' } as const;
    const wantVersion = (patch.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
    if (wantVersion && wantVersion !== current.metadata.resourceVersion)
      return { kind: 'conflict', message: 'the object has been modified' } as const;
    const next = mergeInto(clone(current) as never, patch) as unknown as KubeObject;
    next.metadata.resourceVersion = String(++this.version);
    this.objects.set(key, next);
    return { kind: 'written', object: clone(next) as T } as const;
  };

  delete = async (ref: ObjectRef, options?: { uid?: string }) => {
    this.record('delete', ref.kind, ref.namespace, ref.name);
    this.deletes.push({ ref, options: clone(options) });
    const answer = this.take('delete', ref.kind);
    if (answer) return answer as never;
    const key = keyOf(ref.kind, ref.namespace, ref.name);
    const current = this.at(ref);
    if (!current) return { kind: 'not-found' } as const;
    if (options?.uid && options.uid !== current.metadata.uid)
      return { kind: 'conflict', message: 'uid precondition failed' } as const;
    this.objects.delete(key);
    return { kind: 'deleted' } as const;
  };
}

export const FAKE_NOW = new Date('2026-11-22T10:00:00.000Z');

/** A Context over the fake Kubernetes and an etcd adapter of the test's making. */
export function fakeContext(
  kube: FakeKube,
  etcd: Partial<EtcdAdapter> = {},
  settings: Partial<Context['settings']> = {},
  now: Date = FAKE_NOW,
): Context {
  return {
    kube: kube as unknown as KubeObjects,
    etcd: etcd as EtcdAdapter,
    now: () => now,
    settings: { ...settingsFromEnv({}), ...settings },
  };
}
