// The object store: one global resourceVersion counter, objects per resource, an event history
// for watches that resume from a resourceVersion, and synchronous fan-out to subscribers.

import type { KObject } from './types.ts';
import { objectKey } from './util.ts';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: EventType;
  rv: number;
  storageKey: string;
  object: KObject;
  /** the previous state for MODIFIED and DELETED */
  old?: KObject;
}

export type Subscriber = (event: StoreEvent) => void;

export interface StoreSnapshot {
  resourceVersion: number;
  objects: Record<string, KObject[]>;
}

export class Store {
  private rv: number;
  private readonly data = new Map<string, Map<string, KObject>>();
  private readonly sortedKeys = new Map<string, string[]>();
  private history: StoreEvent[] = [];
  private historyStart = 0;
  /** the resourceVersion before the oldest event still held */
  private compactedRV: number;
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  private readonly globalSubscribers = new Set<Subscriber>();
  private readonly historyLimit: number;

  constructor(opts: { initialResourceVersion?: number; historyLimit?: number } = {}) {
    this.rv = opts.initialResourceVersion ?? 1;
    this.compactedRV = this.rv;
    this.historyLimit = opts.historyLimit ?? 50_000;
  }

  get resourceVersion(): number {
    return this.rv;
  }

  /** The oldest resourceVersion a watch can resume from. */
  get oldestResumableRV(): number {
    return this.compactedRV;
  }

  get(storageKey: string, namespace: string | undefined, name: string): KObject | undefined {
    return this.data.get(storageKey)?.get(objectKey(namespace, name));
  }

  /** Objects of one resource, sorted by namespace then name (as etcd keys sort). */
  list(storageKey: string, namespace?: string): KObject[] {
    const bucket = this.data.get(storageKey);
    if (!bucket) return [];
    let keys = this.sortedKeys.get(storageKey);
    if (!keys) {
      keys = [...bucket.keys()].sort();
      this.sortedKeys.set(storageKey, keys);
    }
    const out: KObject[] = [];
    for (const key of keys) {
      const obj = bucket.get(key)!;
      if (namespace === undefined || obj.metadata.namespace === namespace) out.push(obj);
    }
    return out;
  }

  count(storageKey: string): number {
    return this.data.get(storageKey)?.size ?? 0;
  }

  storageKeys(): string[] {
    return [...this.data.keys()];
  }

  /** Store a new object; assigns its resourceVersion. */
  create(storageKey: string, obj: KObject): KObject {
    let bucket = this.data.get(storageKey);
    if (!bucket) {
      bucket = new Map();
      this.data.set(storageKey, bucket);
    }
    const key = objectKey(obj.metadata.namespace, obj.metadata.name!);
    obj.metadata.resourceVersion = String(++this.rv);
    bucket.set(key, obj);
    this.sortedKeys.delete(storageKey);
    this.emit({ type: 'ADDED', rv: this.rv, storageKey, object: obj });
    return obj;
  }

  /** Replace a stored object; assigns a new resourceVersion. */
  update(storageKey: string, obj: KObject, old: KObject): KObject {
    const key = objectKey(obj.metadata.namespace, obj.metadata.name!);
    obj.metadata.resourceVersion = String(++this.rv);
    this.data.get(storageKey)!.set(key, obj);
    this.emit({ type: 'MODIFIED', rv: this.rv, storageKey, object: obj, old });
    return obj;
  }

  /** Remove an object; the DELETED event carries its last state with a new resourceVersion. */
  remove(storageKey: string, obj: KObject): KObject {
    const key = objectKey(obj.metadata.namespace, obj.metadata.name!);
    const bucket = this.data.get(storageKey);
    if (!bucket?.delete(key)) return obj;
    this.sortedKeys.delete(storageKey);
    const last: KObject = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } };
    this.emit({ type: 'DELETED', rv: this.rv, storageKey, object: last, old: obj });
    return last;
  }

  /** Events of one resource after `rv`, or undefined when history no longer reaches back that far. */
  eventsSince(storageKey: string, rv: number): StoreEvent[] | undefined {
    if (rv < this.compactedRV) return undefined;
    const events = this.history;
    let lo = this.historyStart;
    let hi = events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (events[mid].rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    const out: StoreEvent[] = [];
    for (let i = lo; i < events.length; i++) if (events[i].storageKey === storageKey) out.push(events[i]);
    return out;
  }

  /** How many per-resource subscriptions (open watches) there are: tests wait for a client's watch. */
  subscriberCount(): number {
    let count = 0;
    for (const set of this.subscribers.values()) count += set.size;
    return count;
  }

  /** Subscribe to the events of one resource, or of all resources with storageKey '*'. */
  subscribe(storageKey: string, fn: Subscriber): () => void {
    if (storageKey === '*') {
      this.globalSubscribers.add(fn);
      return () => this.globalSubscribers.delete(fn);
    }
    let set = this.subscribers.get(storageKey);
    if (!set) {
      set = new Set();
      this.subscribers.set(storageKey, set);
    }
    set.add(fn);
    return () => set.delete(fn);
  }

  private emit(event: StoreEvent): void {
    this.history.push(event);
    if (this.history.length - this.historyStart > this.historyLimit) {
      this.compactedRV = this.history[this.historyStart].rv;
      this.historyStart++;
      if (this.historyStart > this.historyLimit / 2) {
        this.history = this.history.slice(this.historyStart);
        this.historyStart = 0;
      }
    }
    const set = this.subscribers.get(event.storageKey);
    if (set) for (const fn of [...set]) fn(event);
    for (const fn of [...this.globalSubscribers]) fn(event);
  }

  snapshot(): StoreSnapshot {
    const objects: Record<string, KObject[]> = {};
    for (const [key, bucket] of this.data) objects[key] = [...bucket.values()];
    return { resourceVersion: this.rv, objects };
  }

  /** Replace the content with a snapshot (no events are emitted). */
  restore(snapshot: StoreSnapshot): void {
    this.data.clear();
    this.sortedKeys.clear();
    for (const [key, objs] of Object.entries(snapshot.objects)) {
      const bucket = new Map<string, KObject>();
      for (const obj of objs) bucket.set(objectKey(obj.metadata.namespace, obj.metadata.name!), obj);
      this.data.set(key, bucket);
    }
    this.rv = Math.max(this.rv, snapshot.resourceVersion);
    this.history = [];
    this.historyStart = 0;
    this.compactedRV = this.rv;
  }
}
