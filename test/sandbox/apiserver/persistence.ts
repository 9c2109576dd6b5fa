// Optional persistence: the whole store as one JSON snapshot in a directory, written shortly after
// changes (debounced) and on close, loaded on start with the resourceVersion counter.

import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Store, StoreSnapshot } from './store.ts';

const FILE = 'apiserver-state.json';

export class Persistence {
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private dirty = false;

  private readonly dir: string;
  private readonly store: Store;
  private readonly debounceMs;
  constructor(dir: string, store: Store, debounceMs = 200) {
    this.dir = dir;
    this.store = store;
    this.debounceMs = debounceMs;
  }

  get file(): string {
    return join(this.dir, FILE);
  }

  /** The saved snapshot, if there is one. */
  load(): StoreSnapshot | undefined {
    if (!existsSync(this.file)) return undefined;
    return JSON.parse(readFileSync(this.file, 'utf8')) as StoreSnapshot;
  }

  start(): void {
    mkdirSync(this.dir, { recursive: true });
    this.unsubscribe = this.store.subscribe('*', () => this.schedule());
  }

  private schedule(): void {
    this.dirty = true;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.debounceMs);
  }

  flush(): void {
    if (!this.dirty) return;
    this.dirty = false;
    const tmp = `${this.file}.tmp`;
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(tmp, JSON.stringify(this.store.snapshot()));
    renameSync(tmp, this.file);
  }

  close(): void {
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.flush();
  }
}
