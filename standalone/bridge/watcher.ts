// List + watch of one resource, the way ApiServerSource's reflector does it: list, then watch from the
// list's resourceVersion with the label selector pushed down; resume from the last resourceVersion
// seen when a watch ends; list again when the API server answers 410 Gone.
//
// Like ApiServerSource (whose store's Replace() is a no-op), a list produces no events unless
// replayInitialList is set; then the first list replays every object as `add` and each later list
// is diffed against what was known (add / update / delete), as an informer would.
import { KubernetesObjectApi, Watch, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { log as rootLog } from '../../shared/log.ts';
import type { ObjectEventVerb } from '../../shared/events/types.ts';
import type { WatchedObject } from './format.ts';

export interface WatchTarget {
  apiVersion: string;
  kind: string;
  labelSelector?: string;
  /** undefined = all namespaces. */
  namespace?: string;
}

export type WatchHandler = (verb: ObjectEventVerb, object: WatchedObject) => void;

export interface ResourceWatcherOptions {
  kubeConfig: KubeConfig;
  target: WatchTarget;
  onEvent: WatchHandler;
  replayInitialList?: boolean;
  /** First delay after a failed list or watch; doubles up to maxRetryDelayMs. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  log?: Logger;
}

const VERBS: Record<string, ObjectEventVerb> = { ADDED: 'add', MODIFIED: 'update', DELETED: 'delete' };

type WatchEnd = 'closed' | 'gone' | 'error';

/** Exposes the client's discovery-backed collection path (e.g. /api/v1/pods). */
class CollectionPaths extends KubernetesObjectApi {
  collectionPath(apiVersion: string, kind: string, namespace?: string): Promise<string> {
    return this.specUriPath({ apiVersion, kind, metadata: namespace ? { namespace } : {} }, 'list');
  }
}

export class ResourceWatcher {
  private readonly api: CollectionPaths;
  private readonly watch: Watch;
  private readonly log: Logger;
  private readonly known = new Map<string, WatchedObject>();
  private path = '';
  private resourceVersion = '';
  private controller: AbortController | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private listed = false;
  private signalStop: () => void = () => {};
  /** Resolves when stop() is called: a list or a watch that is still connecting is not waited for. */
  private readonly stopSignal = new Promise<undefined>(
    resolve => (this.signalStop = () => resolve(undefined)),
  );

  private readonly options: ResourceWatcherOptions;
  constructor(options: ResourceWatcherOptions) {
    this.options = options;
    this.api = options.kubeConfig.makeApiClient(CollectionPaths);
    this.watch = new Watch(options.kubeConfig);
    const { apiVersion, kind, labelSelector, namespace } = options.target;
    this.log = (options.log ?? rootLog).child({ watch: `${apiVersion}/${kind}`, labelSelector, namespace });
  }

  get lastResourceVersion(): string {
    return this.resourceVersion;
  }

  /** Lists and opens the watch; rejects if either fails the first time. Later failures are retried. */
  async start(): Promise<void> {
    const { apiVersion, kind, namespace } = this.options.target;
    this.path = await this.api.collectionPath(apiVersion, kind, namespace);
    await this.list();
    const first = await this.openWatch(true);
    this.loop = this.run(first.ended);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.signalStop();
    this.controller?.abort();
    this.wake?.();
    await this.loop;
  }

  private async run(firstWatch: Promise<WatchEnd>): Promise<void> {
    let ended: Promise<WatchEnd> | undefined = firstWatch;
    let delay = this.options.retryDelayMs ?? 500;
    const maxDelay = this.options.maxRetryDelayMs ?? 30_000;
    while (!this.stopped) {
      try {
        if (!ended) {
          if (!this.listed) await Promise.race([this.list(), this.stopSignal]);
          if (this.stopped) break;
          const opened = await Promise.race([this.openWatch(false), this.stopSignal]);
          if (!opened) break;
          ended = opened.ended;
        }
        const opened = Date.now();
        const end = await Promise.race([ended, this.stopSignal]);
        if (end === undefined) break;
        ended = undefined;
        if (end === 'gone') this.listed = false;
        if (end !== 'error') {
          delay = this.options.retryDelayMs ?? 500;
          // A server that closes watches at once must not make this loop spin.
          if (Date.now() - opened < 100) await this.sleep(100);
          continue;
        }
      } catch (err) {
        ended = undefined;
        if (this.stopped) break;
        this.log.warn({ err: errorText(err) }, 'list/watch failed; retrying');
      }
      await this.sleep(delay);
      delay = Math.min(delay * 2, maxDelay);
    }
  }

  private async list(): Promise<void> {
    const { apiVersion, kind, labelSelector, namespace } = this.options.target;
    const list = await this.api.list<WatchedObject>(
      apiVersion,
      kind,
      namespace,
      undefined,
      undefined,
      undefined,
      undefined,
      labelSelector,
    );
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    const items = list.items.map(item => ({ ...item, apiVersion, kind }));
    if (this.options.replayInitialList) this.replay(items);
    this.listed = true;
    this.log.debug({ items: items.length, resourceVersion: this.resourceVersion }, 'listed');
  }

  /** Informer-style diff of a fresh list against what the watch last knew. */
  private replay(items: WatchedObject[]): void {
    const seen = new Set<string>();
    for (const item of items) {
      const key = keyOf(item);
      seen.add(key);
      const before = this.known.get(key);
      this.known.set(key, item);
      if (!before) this.emit('add', item);
      else if (before.metadata.resourceVersion !== item.metadata.resourceVersion) this.emit('update', item);
    }
    for (const [key, object] of [...this.known]) {
      if (seen.has(key)) continue;
      this.known.delete(key);
      this.emit('delete', object);
    }
  }

  /** Opens one watch; resolves once the API server accepted it, with a promise for its end. */
  private async openWatch(strict: boolean): Promise<{ ended: Promise<WatchEnd> }> {
    let resolveEnd: (end: WatchEnd) => void = () => {};
    const ended = new Promise<WatchEnd>(resolve => (resolveEnd = resolve));
    let end: WatchEnd | undefined;
    let settled = false;
    let failure: unknown;
    const mine: { controller?: AbortController } = {};
    const finish = (err: unknown) => {
      settled = true;
      if (mine.controller && this.controller === mine.controller) this.controller = undefined;
      if (end) return resolveEnd(end);
      if (this.stopped || !err || isAbort(err)) return resolveEnd('closed');
      if ((err as { statusCode?: number }).statusCode === 410) return resolveEnd('gone');
      failure = err;
      if (!strict) this.log.warn({ err: errorText(err) }, 'watch ended with an error');
      resolveEnd('error');
    };
    const onLine = (type: string, object: unknown) => {
      const outcome = this.onWatchEvent(type, object);
      if (outcome && !end) {
        end = outcome;
        (mine.controller ?? this.controller)?.abort();
      }
    };
    const params = {
      resourceVersion: this.resourceVersion || undefined,
      allowWatchBookmarks: true,
      labelSelector: this.options.target.labelSelector,
    };
    const controller = await this.watch.watch(this.path, params, onLine, finish);
    mine.controller = controller;
    // An ERROR line may have been read before the controller was known.
    if (end) controller.abort();
    if (strict && failure !== undefined) throw new Error(`watch ${this.path}: ${errorText(failure)}`);
    if (this.stopped) controller.abort();
    else if (!settled) this.controller = controller;
    return { ended };
  }

  /** Handles one watch line; returns how the watch must end, if it must. */
  private onWatchEvent(type: string, raw: unknown): WatchEnd | undefined {
    const object = raw as WatchedObject | undefined;
    if (type === 'ERROR') {
      const status = raw as { code?: number; message?: string } | undefined;
      this.log.info({ code: status?.code, message: status?.message }, 'watch error event');
      return status?.code === 410 ? 'gone' : 'error';
    }
    const rv = object?.metadata?.resourceVersion;
    if (typeof rv === 'string' && rv !== '') this.resourceVersion = rv;
    if (type === 'BOOKMARK' || !object) return undefined;
    const verb = VERBS[type];
    if (!verb) return undefined;
    const { apiVersion, kind } = this.options.target;
    const full: WatchedObject = {
      ...object,
      apiVersion: object.apiVersion || apiVersion,
      kind: object.kind || kind,
    };
    if (this.options.replayInitialList) {
      if (verb === 'delete') this.known.delete(keyOf(full));
      else this.known.set(keyOf(full), full);
    }
    this.emit(verb, full);
    return undefined;
  }

  private emit(verb: ObjectEventVerb, object: WatchedObject): void {
    try {
      this.options.onEvent(verb, object);
    } catch (err) {
      this.log.error({ err: errorText(err), verb, name: object.metadata.name }, 'event handler threw');
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise(resolve => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}

function keyOf(object: WatchedObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'ABORT_ERR');
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code =
      (err as { statusCode?: number; code?: number }).statusCode ?? (err as { code?: number }).code;
    return code !== undefined ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}
