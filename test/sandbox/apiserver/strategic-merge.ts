// Strategic merge patch for the core types kubectl patches. There is no maintained JS library, so
// this covers what kubectl sends: maps merge, lists of named things merge by their key, primitive
// lists with a merge strategy are unions, and the $patch / $retainKeys / $setElementOrder /
// $deleteFromPrimitiveList directives.

import { clone, isObject } from './util.ts';

type Obj = Record<string, unknown>;

const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  imagePullSecrets: 'name',
  ownerReferences: 'uid',
  conditions: 'type',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
  resourceClaims: 'name',
  readinessGates: 'conditionType',
};

/** Lists of strings whose patch strategy is "merge" (a union). */
const PRIMITIVE_MERGE = new Set(['finalizers']);

function mergeKeyFor(path: string[], key: string): string | undefined {
  if (key === 'ports') {
    return path.some(p => p === 'containers' || p === 'initContainers' || p === 'ephemeralContainers')
      ? 'containerPort'
      : 'port';
  }
  return MERGE_KEYS[key];
}

function stripDirectives(value: unknown): unknown {
  if (Array.isArray(value))
    return value
      .filter(v => !(isObject(v) && v.$patch !== undefined && Object.keys(v).length === 1))
      .map(stripDirectives);
  if (!isObject(value)) return value;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('$')) continue;
    out[k] = stripDirectives(v);
  }
  return out;
}

function mergeList(original: unknown, patch: unknown[], mergeKey: string, path: string[]): unknown[] {
  if (patch.some(item => isObject(item) && item.$patch === 'replace')) {
    return patch.filter(item => !(isObject(item) && item.$patch === 'replace')).map(stripDirectives);
  }
  const out: unknown[] = Array.isArray(original) ? clone(original) : [];
  for (const item of patch) {
    if (!isObject(item)) {
      if (!out.includes(item)) out.push(item);
      continue;
    }
    const idx = out.findIndex(o => isObject(o) && o[mergeKey] === item[mergeKey]);
    if (item.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = strategicMerge(out[idx], item, path);
    else out.push(stripDirectives(item));
  }
  return out;
}

function union(current: unknown, add: unknown[]): unknown[] {
  const out = Array.isArray(current) ? [...(current as unknown[])] : [];
  for (const v of add) if (!out.includes(v)) out.push(v);
  return out;
}

/** Apply a strategic merge patch to a JSON value (the original is not modified). */
export function strategicMerge(original: unknown, patch: unknown, path: string[] = []): unknown {
  if (!isObject(patch)) return patch;
  if (patch.$patch === 'replace') return stripDirectives(patch);
  if (patch.$patch === 'delete') return undefined;
  const result: Obj = isObject(original) ? clone(original) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys' || key.startsWith('$setElementOrder/')) continue;
    if (key.startsWith('$deleteFromPrimitiveList/')) {
      const field = key.slice('$deleteFromPrimitiveList/'.length);
      const remove = Array.isArray(value) ? value : [];
      if (Array.isArray(result[field]))
        result[field] = (result[field] as unknown[]).filter(v => !remove.includes(v));
      continue;
    }
    if (value === null) {
      delete result[key];
    } else if (Array.isArray(value)) {
      const mergeKey = mergeKeyFor(path, key);
      if (mergeKey) result[key] = mergeList(result[key], value, mergeKey, [...path, key]);
      else if (PRIMITIVE_MERGE.has(key)) result[key] = union(result[key], value);
      else result[key] = stripDirectives(value);
    } else if (isObject(value)) {
      const merged = strategicMerge(result[key], value, [...path, key]);
      if (merged === undefined) delete result[key];
      else result[key] = merged;
    } else {
      result[key] = value;
    }
  }
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys as string[]);
    for (const key of Object.keys(result)) if (!keep.has(key)) delete result[key];
  }
  return result;
}
