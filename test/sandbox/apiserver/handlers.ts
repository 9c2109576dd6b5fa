// Resource requests: map method + path onto the engine's verbs and answer as the real server does.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import type { ServerContext } from './context.ts';
import { deleteCollection, deleteObject } from './deletion.ts';
import { evictionRefusal } from './eviction.ts';
import {
  ApiError,
  badRequest,
  conflict,
  methodNotAllowed,
  notFound,
  qualifiedResource,
  resourceNotFound,
  unsupportedMediaType,
} from './errors.ts';
import { patchObject } from './patch-op.ts';
import { decodeProtobuf, PROTOBUF } from './protobuf.ts';
import { apiVersionOf } from './registry.ts';
import { objectJson, sendJson, sendObject } from './respond.ts';
import type { RequestInfo } from './router.ts';
import { getScale, patchScale, updateScale } from './scale.ts';
import type { IncludeObject } from './table.ts';
import { toTable, wantsTable } from './table.ts';
import type {
  DeleteOptions,
  FieldValidation,
  KObject,
  PropagationPolicy,
  ResourceDef,
  WriteOptions,
} from './types.ts';
import { clone, isObject } from './util.ts';
import { serveWatch } from './watch.ts';

export interface ResourceRequest {
  info: RequestInfo;
  query: URLSearchParams;
  body: string;
  /** the body as received (protobuf) */
  raw: Buffer;
  req: IncomingMessage;
  res: ServerResponse;
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0].trim().toLowerCase();
}

/** Decode a POST/PUT body: JSON (the default), YAML, or the protobuf of kubectl's typed commands. */
function decodeBody(r: ResourceRequest, def: ResourceDef): unknown {
  const type = mediaType(r.req.headers['content-type']);
  if (type === PROTOBUF) return decodeProtobuf(r.raw);
  if (type === 'application/cbor') throw unsupportedMediaType(['application/json', 'application/yaml']);
  try {
    if (type === 'application/yaml') return parseYaml(r.body);
    return JSON.parse(r.body);
  } catch (e) {
    throw badRequest(
      `the object provided is unrecognized (must be of type ${def.kind}): couldn't get version/kind; json parse error: ${(e as Error).message}`,
    );
  }
}

function writeOptions(query: URLSearchParams): WriteOptions {
  const dryRun = query.getAll('dryRun').includes('All');
  const fv = query.get('fieldValidation');
  const fieldValidation: FieldValidation | undefined =
    fv === 'Strict' || fv === 'Warn' || fv === 'Ignore' ? fv : undefined;
  if (fv && !fieldValidation) {
    throw badRequest(`fieldValidation parameter unsupported: ${fv}. Valid values are: Strict, Warn, Ignore`);
  }
  return { dryRun, fieldValidation, fieldManager: query.get('fieldManager') ?? undefined, warnings: [] };
}

function deleteOptions(query: URLSearchParams, raw: string): DeleteOptions {
  let body: Record<string, unknown> = {};
  if (raw.trim()) {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (isObject(parsed)) body = parsed;
    } catch (e) {
      throw badRequest(`error decoding DeleteOptions: ${(e as Error).message}`);
    }
  }
  const grace = query.get('gracePeriodSeconds') ?? body.gracePeriodSeconds;
  const policy = (query.get('propagationPolicy') ?? body.propagationPolicy) as PropagationPolicy | undefined;
  if (policy && !['Background', 'Foreground', 'Orphan'].includes(policy)) {
    throw new ApiError(
      422,
      'Invalid',
      `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${policy}"`,
    );
  }
  const orphanParam = query.get('orphanDependents');
  const orphan = orphanParam === null ? body.orphanDependents : orphanParam === 'true';
  return {
    gracePeriodSeconds: grace === undefined || grace === null ? undefined : Number(grace),
    propagationPolicy: policy,
    orphanDependents: typeof orphan === 'boolean' ? orphan : undefined,
    preconditions: isObject(body.preconditions) ? body.preconditions : undefined,
    dryRun:
      query.getAll('dryRun').includes('All') || (Array.isArray(body.dryRun) && body.dryRun.includes('All')),
  };
}

function listBody(def: ResourceDef, items: KObject[], rv: string, cont?: string, remaining?: number): string {
  const meta: Record<string, unknown> = { resourceVersion: rv };
  if (cont) meta.continue = cont;
  if (remaining !== undefined) meta.remainingItemCount = remaining;
  const head = `{"kind":"${def.listKind}","apiVersion":"${apiVersionOf(def.group, def.version)}","metadata":${JSON.stringify(meta)},"items":[`;
  return `${head}${items.map(objectJson).join(',')}]}`;
}

function deletedStatus(def: ResourceDef, obj: KObject): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: {
      name: obj.metadata.name,
      group: def.group || undefined,
      kind: def.resource,
      uid: obj.metadata.uid,
    },
  };
}

function sendRead(r: ResourceRequest, def: ResourceDef, obj: KObject): void {
  if (wantsTable(r.req.headers.accept)) {
    const include = (r.query.get('includeObject') as IncludeObject | null) ?? 'Metadata';
    const table = toTable(def, [obj], { include, resourceVersion: obj.metadata.resourceVersion });
    sendJson(r.res, 200, table, { contentType: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
  } else {
    sendObject(r.res, 200, obj);
  }
}

function handleGet(ctx: ServerContext, r: ResourceRequest, def: ResourceDef): void | Promise<void> {
  const { info, query } = r;
  const watch = info.watch || query.get('watch') === 'true' || query.get('watch') === '1';
  if (!info.name) {
    const table = wantsTable(r.req.headers.accept);
    if (watch) return serveWatch(ctx, r.req, r.res, { def, namespace: info.namespace, query, table });
    const limit = Number(query.get('limit') ?? 0);
    const list = ctx.engine.list(def, info.namespace, {
      labelSelector: query.get('labelSelector'),
      fieldSelector: query.get('fieldSelector'),
      limit: Number.isFinite(limit) ? limit : 0,
      continue: query.get('continue'),
    });
    if (table) {
      const include = (query.get('includeObject') as IncludeObject | null) ?? 'Metadata';
      const body = toTable(def, list.items, {
        include,
        resourceVersion: list.resourceVersion,
        continue: list.continue,
        remainingItemCount: list.remainingItemCount,
      });
      return sendJson(r.res, 200, body, { contentType: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    }
    return sendJson(
      r.res,
      200,
      listBody(def, list.items, list.resourceVersion, list.continue, list.remainingItemCount),
    );
  }
  if (watch) {
    return serveWatch(ctx, r.req, r.res, {
      def,
      namespace: info.namespace,
      query,
      table: wantsTable(r.req.headers.accept),
      name: info.name,
    });
  }
  if (info.subresource === 'scale')
    return sendObject(r.res, 200, getScale(ctx.engine, def, info.namespace, info.name));
  return sendRead(r, def, ctx.engine.get(def, info.namespace, info.name));
}

function handleDelete(ctx: ServerContext, r: ResourceRequest, def: ResourceDef): void {
  const { info, query } = r;
  const opts = deleteOptions(query, r.body);
  if (!info.name) {
    const items = deleteCollection(ctx.engine, def, info.namespace, {
      labelSelector: query.get('labelSelector'),
      fieldSelector: query.get('fieldSelector'),
    });
    return sendJson(r.res, 200, listBody(def, items, String(ctx.store.resourceVersion)));
  }
  const result = deleteObject(ctx.engine, def, info.namespace, info.name, opts);
  if (result.deleted && !def.returnDeletedObject)
    return sendJson(r.res, 200, deletedStatus(def, result.object));
  return sendObject(r.res, 200, result.object);
}

function handleBinding(ctx: ServerContext, r: ResourceRequest, def: ResourceDef): void {
  const { info } = r;
  const stored = ctx.engine.getStored(def, info.namespace, info.name!);
  if (!stored) throw notFound(def, info.name!);
  const body = decodeBody(r, def) as { target?: { name?: string } };
  const node = body?.target?.name;
  if (!node) throw new ApiError(422, 'Invalid', 'Binding "" is invalid: target.name: Required value');
  const spec = (stored.spec ?? {}) as { nodeName?: string };
  if (spec.nodeName)
    throw conflict(def, info.name!, `pod ${info.name} is already assigned to node "${spec.nodeName}"`);
  const next = clone(stored);
  (next.spec as { nodeName?: string }).nodeName = node;
  ctx.engine.commitUpdate(def, stored, next);
  sendJson(r.res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
}

function handleEviction(ctx: ServerContext, r: ResourceRequest, def: ResourceDef): void {
  const body = (r.body.trim() ? decodeBody(r, def) : {}) as { deleteOptions?: DeleteOptions };
  const { namespace, name } = r.info;
  const pod = ctx.engine.get(def, namespace, name!);
  const pdbDef = ctx.registry.lookup('policy', 'v1', 'poddisruptionbudgets');
  const pdbs = pdbDef ? ctx.engine.list(pdbDef, namespace).items : [];
  const refusal = evictionRefusal(pod, pdbs, ctx.engine.list(def, namespace).items);
  if (refusal) throw refusal;
  deleteObject(ctx.engine, def, namespace, name!, body?.deleteOptions ?? {});
  sendJson(r.res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
}

async function handleExtraSubresource(
  ctx: ServerContext,
  r: ResourceRequest,
  def: ResourceDef,
): Promise<void> {
  const { info } = r;
  const handler = ctx.subresources.get(`${def.resource}/${info.subresource}`);
  const object = ctx.engine.get(def, info.namespace, info.name!);
  if (handler) {
    await handler(
      {
        method: r.req.method ?? 'GET',
        namespace: info.namespace,
        name: info.name!,
        query: r.query,
        body: r.body,
        object,
        req: r.req,
      },
      r.res,
    );
    return;
  }
  if (info.subresource === 'binding' && r.req.method === 'POST') return handleBinding(ctx, r, def);
  if (info.subresource === 'eviction' && r.req.method === 'POST') return handleEviction(ctx, r, def);
  if (info.subresource === 'log' && r.req.method === 'GET') {
    throw badRequest(`the sandbox has no kubelet serving logs for ${qualifiedResource(def)} "${info.name}"`);
  }
  throw methodNotAllowed();
}

function sendWrite(r: ResourceRequest, code: number, obj: KObject, opts: WriteOptions): void {
  sendObject(r.res, code, obj, opts.warnings);
}

export async function handleResource(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const { info, query, req } = r;
  const def = ctx.registry.lookup(info.group, info.version, info.resource);
  if (!def) throw resourceNotFound();
  if (info.namespace !== undefined && !def.namespaced) throw resourceNotFound();
  const sub = info.subresource;
  if (sub) {
    const known =
      (sub === 'status' && def.statusSubresource) ||
      (sub === 'scale' && !!def.scale) ||
      def.extraSubresources?.includes(sub);
    if (!known || !info.name) throw resourceNotFound();
    if (sub !== 'status' && sub !== 'scale') return handleExtraSubresource(ctx, r, def);
  }
  if (def.namespaced && info.namespace === undefined && info.name) throw resourceNotFound();
  const method = req.method ?? 'GET';
  const engine = ctx.engine;
  switch (method) {
    case 'GET':
      return handleGet(ctx, r, def);
    case 'POST': {
      if (info.name) throw methodNotAllowed();
      if (def.namespaced && info.namespace === undefined) throw methodNotAllowed();
      const opts = writeOptions(query);
      const created = engine.create(def, info.namespace, decodeBody(r, def), opts);
      return sendWrite(r, 201, created, opts);
    }
    case 'PUT': {
      if (!info.name) throw methodNotAllowed();
      const opts = writeOptions(query);
      if (sub === 'scale') {
        return sendObject(
          r.res,
          200,
          updateScale(engine, def, { namespace: info.namespace, name: info.name }, decodeBody(r, def), opts),
        );
      }
      if (sub === 'status') opts.subresource = 'status';
      const result = engine.update(def, info.namespace, info.name, decodeBody(r, def), opts);
      return sendWrite(r, result.created ? 201 : 200, result.object, opts);
    }
    case 'PATCH': {
      if (!info.name) throw methodNotAllowed();
      const opts = writeOptions(query);
      opts.force = query.get('force') === 'true';
      const type = mediaType(req.headers['content-type']);
      if (sub === 'scale') {
        const target = { namespace: info.namespace, name: info.name };
        return sendObject(r.res, 200, patchScale(engine, def, target, { type, raw: r.body }, opts));
      }
      if (sub === 'status') opts.subresource = 'status';
      const result = patchObject(
        engine,
        def,
        { namespace: info.namespace, name: info.name },
        { type, raw: r.body },
        opts,
      );
      return sendWrite(r, result.created ? 201 : 200, result.object, opts);
    }
    case 'DELETE':
      if (sub) throw methodNotAllowed();
      return handleDelete(ctx, r, def);
    default:
      throw methodNotAllowed();
  }
}
