// Patch bodies: RFC 6902 JSON patch, RFC 7396 merge patch, strategic merge patch (built-in types
// only, as the real server) and server-side apply approximated as a merge-style upsert.

import jsonpatch from 'fast-json-patch';
import mergePatch from 'json-merge-patch';
import { parse as parseYaml } from 'yaml';
import { ApiError, badRequest, unsupportedMediaType } from './errors.ts';
import { strategicMerge } from './strategic-merge.ts';
import type { KObject, ResourceDef } from './types.ts';
import { clone, isObject } from './util.ts';

export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';
export const APPLY_PATCH = 'application/apply-patch+yaml';

export function acceptedPatchTypes(def: ResourceDef): string[] {
  return def.custom
    ? [JSON_PATCH, MERGE_PATCH, APPLY_PATCH]
    : [JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH];
}

/** Refuse a patch type the resource does not take (415, with the real server's list). */
export function checkPatchType(def: ResourceDef, type: string): void {
  if (!acceptedPatchTypes(def).includes(type)) throw unsupportedMediaType(acceptedPatchTypes(def));
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (e) {
    throw badRequest(`error decoding patch: ${(e as Error).message}`);
  }
}

/** Parse the body of an apply patch (YAML or JSON). */
export function parseApplyBody(raw: string): KObject {
  let value: unknown;
  try {
    value = parseYaml(raw);
  } catch (e) {
    throw badRequest(`error decoding YAML: ${(e as Error).message}`);
  }
  if (!isObject(value)) throw badRequest('error decoding YAML: the apply patch must be an object');
  if (!value.apiVersion || !value.kind) {
    throw badRequest(
      `invalid object type: ${JSON.stringify(value.apiVersion ?? '')}, Kind=${JSON.stringify(value.kind ?? '')}`,
    );
  }
  if (!isObject(value.metadata)) value.metadata = {};
  return value as KObject;
}

/** Apply-style merge: maps merge recursively, everything else (lists too) is replaced. */
export function applyMerge(live: unknown, applied: unknown): unknown {
  if (!isObject(live) || !isObject(applied)) return clone(applied);
  const out: Record<string, unknown> = { ...live };
  for (const [k, v] of Object.entries(applied)) {
    if (v === null) delete out[k];
    else out[k] = applyMerge(live[k], v);
  }
  return out;
}

/** Apply one patch to (a copy of) the current object. */
export function applyPatchBody(current: KObject, type: string, raw: string): KObject {
  const base = clone(current);
  let result: unknown;
  if (type === JSON_PATCH) {
    const ops = parseJson(raw);
    if (!Array.isArray(ops))
      throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
    try {
      result = jsonpatch.applyPatch(base, ops as jsonpatch.Operation[], true, true).newDocument;
    } catch (e) {
      throw new ApiError(422, 'Invalid', (e as Error).message.split('\n')[0]);
    }
  } else if (type === MERGE_PATCH) {
    const patch = parseJson(raw);
    if (!isObject(patch)) throw badRequest('the body of a merge patch must be a JSON object');
    result = mergePatch.apply(base, patch);
  } else if (type === STRATEGIC_PATCH) {
    const patch = parseJson(raw);
    if (!isObject(patch)) throw badRequest('the body of a strategic merge patch must be a JSON object');
    result = strategicMerge(base, patch);
  } else if (type === APPLY_PATCH) {
    result = applyMerge(base, parseApplyBody(raw));
  } else {
    throw unsupportedMediaType([JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH]);
  }
  if (!isObject(result)) throw new ApiError(422, 'Invalid', 'the patched object is not an object');
  if (!isObject(result.metadata)) result.metadata = {};
  return result as KObject;
}
