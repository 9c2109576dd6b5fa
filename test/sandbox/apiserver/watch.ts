// Watch streams: chunked, newline-delimited events, headers flushed at once. No resourceVersion
// (or "0") starts with synthetic ADDED events for what exists; a resourceVersion resumes from the
// event history (410 Expired when it is too old). Objects entering or leaving a selector arrive as
// ADDED or DELETED, as from the real watch cache.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerContext } from './context.ts';
import { badRequest, gone } from './errors.ts';
import type { Filter } from './operations.ts';
import { objectJson } from './respond.ts';
import type { StoreEvent } from './store.ts';
import type { IncludeObject } from './table.ts';
import { toTable } from './table.ts';
import type { KObject, ResourceDef } from './types.ts';
import { apiVersionOf } from './registry.ts';

export interface WatchParams {
  def: ResourceDef;
  namespace: string | undefined;
  query: URLSearchParams;
  table: boolean;
  /** watch of one object (GET /watch/.../name) */
  name?: string;
}

const BOOKMARK_INTERVAL_MS = 60_000;

export function serveWatch(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  params: WatchParams,
): void {
  const { def, namespace, query, table } = params;
  const { engine, store } = ctx;
  const filter: Filter = engine.parseFilter(def, query.get('labelSelector'), query.get('fieldSelector'));
  if (params.name) filter.fields.push({ field: 'metadata.name', op: '=', value: params.name });
  const rvParam = query.get('resourceVersion') ?? '';
  if (rvParam !== '' && !/^\d+$/.test(rvParam)) throw badRequest(`invalid resource version: ${rvParam}`);
  const sendInitial = query.get('sendInitialEvents') === 'true';
  const bookmarks = query.get('allowWatchBookmarks') === 'true' || query.get('allowWatchBookmarks') === '1';
  const include = (query.get('includeObject') as IncludeObject | null) ?? 'Metadata';
  const timeoutSeconds = Number(query.get('timeoutSeconds') ?? 0);
  const nsFilter = def.namespaced ? namespace : undefined;

  res.writeHead(200, {
    'Content-Type': table ? 'application/json;as=Table;v=v1;g=meta.k8s.io' : 'application/json',
    'Cache-Control': 'no-cache, private',
    'Transfer-Encoding': 'chunked',
  });
  res.flushHeaders();

  let firstTable = true;
  const write = (type: string, stored: KObject): void => {
    const served = engine.served(def, stored);
    let json: string;
    if (table) {
      json = JSON.stringify(toTable(def, [served], { include, withColumns: firstTable }));
      firstTable = false;
    } else {
      json = objectJson(served);
    }
    res.write(`{"type":"${type}","object":${json}}\n`);
  };
  const match = (obj: KObject): boolean =>
    (nsFilter === undefined || obj.metadata.namespace === nsFilter) && engine.matches(def, obj, filter);
  const deliver = (ev: StoreEvent): void => {
    const now = match(ev.object);
    if (ev.type !== 'MODIFIED') {
      if (now) write(ev.type, ev.object);
      return;
    }
    const before = ev.old ? match(ev.old) : false;
    if (now && before) write('MODIFIED', ev.object);
    else if (now) write('ADDED', ev.object);
    else if (before) write('DELETED', ev.object);
  };
  const bookmark = (extra?: Record<string, string>): void => {
    const metadata: Record<string, unknown> = { resourceVersion: String(store.resourceVersion) };
    if (extra) metadata.annotations = extra;
    const obj = { kind: def.kind, apiVersion: apiVersionOf(def.group, def.version), metadata };
    res.write(`${JSON.stringify({ type: 'BOOKMARK', object: obj })}\n`);
  };

  if (rvParam === '' || rvParam === '0' || sendInitial) {
    for (const obj of store.list(def.storageKey, nsFilter)) if (match(obj)) write('ADDED', obj);
    if (sendInitial && bookmarks) bookmark({ 'k8s.io/initial-events-end': 'true' });
  } else {
    const rv = Number(rvParam);
    const events = store.eventsSince(def.storageKey, rv);
    if (!events) {
      const status = gone(`too old resource version: ${rv} (${store.oldestResumableRV})`).toStatus();
      res.end(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);
      return;
    }
    for (const ev of events) deliver(ev);
  }

  const unsubscribe = store.subscribe(def.storageKey, deliver);
  const timers: NodeJS.Timeout[] = [];
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    unsubscribe();
    for (const t of timers) clearTimeout(t);
    ctx.watches.delete(close);
    if (!res.writableEnded) res.end();
  };
  ctx.watches.add(close);
  if (timeoutSeconds > 0) timers.push(setTimeout(close, timeoutSeconds * 1000));
  if (bookmarks) timers.push(setInterval(() => bookmark(), BOOKMARK_INTERVAL_MS));
  req.on('close', close);
  res.on('close', close);
  res.on('error', close);
}
