// The kubelet's API client: typed clients from @kubernetes/client-node for writes, plus raw JSON
// list and watch (the typed lists turn timestamps into Dates and drop unknown fields; the kubelet
// keeps objects exactly as the API server sent them).
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { CoreV1Api, PatchStrategy, Watch, setHeaderOptions } from '@kubernetes/client-node';

export class Api {
  readonly core: CoreV1Api;
  private readonly watcher: Watch;

  readonly kc: KubeConfig;
  constructor(kc: KubeConfig) {
    this.kc = kc;
    this.core = kc.makeApiClient(CoreV1Api);
    this.watcher = new Watch(kc);
  }

  /** The API server's base URL (from the current context). */
  get server(): string {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    return cluster.server.replace(/\/+$/, '');
  }

  /** GET a path and parse the JSON answer; rejects with an error carrying `code` on non-2xx. */
  getJson<T>(path: string): Promise<T> {
    return this.sendJson<T>('GET', path);
  }

  /**
   * A raw JSON request (the body sent as given, so strings such as a MicroTime's six fractional
   * digits reach the API server untouched by the typed serializer); rejects with `code` on non-2xx.
   */
  async sendJson<T>(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<T> {
    const url = new URL(this.server + path);
    const opts: https.RequestOptions = {
      method,
      headers: { accept: 'application/json', ...(body !== undefined && { 'content-type': contentType }) },
    };
    await this.kc.applyToHTTPSOptions(opts);
    const lib = url.protocol === 'https:' ? https : http;
    return new Promise<T>((resolve, reject) => {
      const req = lib.request(url, opts, res => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const code = res.statusCode ?? 0;
          if (code >= 200 && code < 300) {
            try {
              resolve(JSON.parse(text) as T);
            } catch (err) {
              reject(err instanceof Error ? err : new Error(`${method} ${path}: invalid JSON`));
            }
            return;
          }
          reject(
            Object.assign(new Error(`${method} ${path}: HTTP ${code}: ${text.slice(0, 300)}`), { code }),
          );
        });
        res.on('error', reject);
      });
      req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path}: timeout`)));
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  /** Starts a watch; `onEvent` gets raw events, `onDone` is called once when the stream ends. */
  watch(
    path: string,
    resourceVersion: string,
    onEvent: (type: string, obj: unknown) => void,
    onDone: (err: unknown) => void,
  ): Promise<AbortController> {
    const params = { resourceVersion, allowWatchBookmarks: true };
    return this.watcher.watch(path, params, (type, obj) => onEvent(type, obj), onDone);
  }
}

/** Options for a JSON merge patch through the typed clients. */
export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** HTTP status of an API error (ApiException.code or our getJson's code), if any. */
export function statusCode(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e.code === 'number') return e.code;
  if (typeof e.statusCode === 'number') return e.statusCode;
  return undefined;
}

export const isNotFound = (err: unknown): boolean => statusCode(err) === 404;
export const isConflict = (err: unknown): boolean => statusCode(err) === 409;

/** A short text for logs: the API's Status message when there is one. */
export function errorText(err: unknown): string {
  const body = (err as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as { message?: string };
      if (parsed.message) return `${statusCode(err)}: ${parsed.message}`;
    } catch {
      // not JSON
    }
  } else if (body && typeof body === 'object' && 'message' in body) {
    return `${statusCode(err)}: ${String(body.message)}`;
  }
  return err instanceof Error ? err.message.split('\n')[0] : String(err);
}
