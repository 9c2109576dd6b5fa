// A small list-and-watch cache (the kubelet's "informer"): lists a resource once, then watches
// from the list's resourceVersion. A dropped watch resumes from the last version seen; a 410 Gone
// (or any list-level trouble) re-lists and reports what changed in between as events.
import type { Api } from './api.ts';
import { errorText, statusCode } from './api.ts';
import type { KObj, Logger } from './types.ts';
import { keyOf } from './types.ts';

export interface InformerHandler<T extends KObj> {
  /** Added or modified; `old` is undefined for an object seen for the first time. */
  upsert?(obj: T, old: T | undefined): void;
  deleted?(obj: T): void;
}

export class Informer<T extends KObj> {
  readonly store = new Map<string, T>();
  private readonly handlers: InformerHandler<T>[] = [];
  private resourceVersion = '';
  private abort: AbortController | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private synced = false;

  private readonly api: Api;
  readonly path: string;
  private readonly log: Logger;
  constructor(
    api: Api,
    /** collection path, e.g. /api/v1/pods */
    path: string,
    log: Logger,
  ) {
    this.api = api;
    this.path = path;
    this.log = log;
  }

  on(handler: InformerHandler<T>): this {
    this.handlers.push(handler);
    return this;
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  list(): T[] {
    return [...this.store.values()];
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.store.get(`${namespace ?? ''}/${name}`);
  }

  /** Lists (retrying until the API server answers) and starts watching. */
  async start(): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      try {
        await this.relist();
        break;
      } catch (err) {
        this.log(`list ${this.path} failed (${errorText(err)}); retrying`);
        await new Promise(r => setTimeout(r, 500));
      }
    }
    this.synced = true;
    void this.startWatch();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.abort?.abort();
  }

  private async relist(): Promise<void> {
    const list = await this.api.getJson<{ metadata?: { resourceVersion?: string }; items?: T[] }>(this.path);
    const seen = new Set<string>();
    for (const item of list.items ?? []) {
      seen.add(keyOf(item));
      this.apply('MODIFIED', item);
    }
    for (const [key, obj] of [...this.store]) {
      if (!seen.has(key)) this.apply('DELETED', obj);
    }
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
  }

  private apply(type: string, obj: T): void {
    const key = keyOf(obj);
    const old = this.store.get(key);
    if (type === 'DELETED') {
      if (!old) return;
      this.store.delete(key);
      for (const h of this.handlers) this.safely(() => h.deleted?.(obj));
      return;
    }
    if (
      old &&
      old.metadata.resourceVersion === obj.metadata.resourceVersion &&
      old.metadata.uid === obj.metadata.uid
    ) {
      return;
    }
    if (old && old.metadata.uid !== obj.metadata.uid) {
      // Same name, new object: the old one was deleted in between.
      this.store.delete(key);
      for (const h of this.handlers) this.safely(() => h.deleted?.(old));
      this.store.set(key, obj);
      for (const h of this.handlers) this.safely(() => h.upsert?.(obj, undefined));
      return;
    }
    this.store.set(key, obj);
    for (const h of this.handlers) this.safely(() => h.upsert?.(obj, old));
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log(`handler for ${this.path} failed: ${(err as Error).stack ?? String(err)}`);
    }
  }

  private async startWatch(): Promise<void> {
    if (this.stopped) return;
    let gone = false;
    const onEvent = (type: string, raw: unknown): void => {
      const obj = raw as T & { code?: number };
      if (type === 'ERROR') {
        if (obj.code === 410) gone = true;
        else this.log(`watch ${this.path}: ${JSON.stringify(raw)}`);
        return;
      }
      if (obj.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
      if (type === 'BOOKMARK') return;
      this.apply(type, obj);
    };
    const onDone = (err: unknown): void => {
      if (this.stopped) return;
      if (statusCode(err) === 410) gone = true;
      this.timer = setTimeout(() => void this.restart(gone), err ? 300 : 0);
    };
    try {
      this.abort = await this.api.watch(this.path, this.resourceVersion, onEvent, onDone);
    } catch (err) {
      onDone(err);
    }
  }

  private async restart(relist: boolean): Promise<void> {
    if (this.stopped) return;
    if (relist) {
      try {
        await this.relist();
      } catch (err) {
        this.log(`re-list ${this.path} failed (${errorText(err)}); retrying`);
        this.timer = setTimeout(() => void this.restart(true), 500);
        return;
      }
    }
    await this.startWatch();
  }
}
