// Reads what the event bridge must reproduce from the Knative manifests themselves (knative/), so the
// bridge and a real cluster cannot drift: the ApiServerSources (mode, resources, selectors,
// namespaces), the PingSource (schedule, payload) and the Broker's delivery settings.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

export type SourceMode = 'Reference' | 'Resource';

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface SourceResource {
  apiVersion: string;
  kind: string;
  /** The selector as the API server's `labelSelector` query parameter; undefined = everything. */
  labelSelector?: string;
}

/** Which namespaces a source watches: all of them, some by label, some by name, or only its own. */
export type NamespaceScope =
  | { kind: 'all' }
  | { kind: 'selector'; labelSelector: string }
  | { kind: 'names'; namespaces: string[] }
  | { kind: 'own'; namespace: string };

/** Set by the API server on every namespace: a selector on it names namespaces outright. */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

export interface ApiServerSourceSpec {
  name: string;
  namespace: string;
  mode: SourceMode;
  resources: SourceResource[];
  namespaces: NamespaceScope;
}

export interface PingSourceSpec {
  name: string;
  namespace: string;
  schedule: string;
  timezone?: string;
  contentType?: string;
  data?: string;
  dataBase64?: string;
}

export type BackoffPolicy = 'exponential' | 'linear';

/** Knative's DeliverySpec, with durations already in milliseconds. */
export interface DeliverySpec {
  retry: number;
  backoffPolicy: BackoffPolicy;
  backoffDelayMs: number;
  /** Per-request timeout; undefined = none. */
  timeoutMs?: number;
  /** Knative's `format`: JSON = structured mode, binary = binary mode (the default). */
  format?: 'binary' | 'structured';
}

export interface KnativeSources {
  apiServerSources: ApiServerSourceSpec[];
  pingSources: PingSourceSpec[];
}

type Doc = { apiVersion?: unknown; kind?: unknown; metadata?: Record<string, unknown>; spec?: unknown };

/** Every YAML document of a manifest file (empty documents skipped). Throws on a YAML error. */
export function readManifests(file: string): Doc[] {
  const text = readFileSync(file, 'utf8');
  return parseManifests(text, file);
}

export function parseManifests(text: string, origin = 'manifest'): Doc[] {
  const docs = parseAllDocuments(text);
  const out: Doc[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${origin}: ${doc.errors[0]?.message}`);
    const value: unknown = doc.toJS();
    if (value && typeof value === 'object') out.push(value);
  }
  return out;
}

export function loadSources(knativeDir: string): KnativeSources {
  return parseSources(readManifests(join(knativeDir, 'sources.yaml')));
}

export function parseSources(docs: Doc[]): KnativeSources {
  const result: KnativeSources = { apiServerSources: [], pingSources: [] };
  for (const doc of docs) {
    if (doc.kind === 'ApiServerSource') result.apiServerSources.push(parseApiServerSource(doc));
    else if (doc.kind === 'PingSource') result.pingSources.push(parsePingSource(doc));
  }
  return result;
}

function nameOf(doc: Doc): { name: string; namespace: string } {
  const name = doc.metadata?.name;
  if (typeof name !== 'string' || name === '') throw new Error(`${String(doc.kind)} without metadata.name`);
  const namespace = doc.metadata?.namespace;
  return { name, namespace: typeof namespace === 'string' && namespace !== '' ? namespace : 'default' };
}

function parseApiServerSource(doc: Doc): ApiServerSourceSpec {
  const { name, namespace } = nameOf(doc);
  const spec = (doc.spec ?? {}) as Record<string, unknown>;
  const where = `ApiServerSource ${namespace}/${name}`;
  const mode = spec.mode ?? 'Reference';
  if (mode !== 'Reference' && mode !== 'Resource') {
    throw new Error(`${where}: spec.mode must be Reference or Resource, not ${JSON.stringify(mode)}`);
  }
  if (spec.owner !== undefined) throw new Error(`${where}: spec.owner is not supported by the event bridge`);
  if (spec.filters !== undefined)
    throw new Error(`${where}: spec.filters is not supported by the event bridge`);
  const resources = spec.resources;
  if (!Array.isArray(resources) || resources.length === 0)
    throw new Error(`${where}: spec.resources is empty`);
  return {
    name,
    namespace,
    mode,
    resources: resources.map((r, i) => parseResource(r, `${where} resources[${i}]`)),
    namespaces: namespaceScope(spec.namespaceSelector, namespace, where),
  };
}

function parseResource(raw: unknown, where: string): SourceResource {
  const r = (raw ?? {}) as Record<string, unknown>;
  if (typeof r.apiVersion !== 'string' || typeof r.kind !== 'string') {
    throw new Error(`${where}: apiVersion and kind are required`);
  }
  const resource: SourceResource = { apiVersion: r.apiVersion, kind: r.kind };
  if (r.selector !== undefined && r.selector !== null) {
    const selector = labelSelectorToString(r.selector, where);
    if (selector !== '') resource.labelSelector = selector;
  }
  return resource;
}

function namespaceScope(raw: unknown, own: string, where: string): NamespaceScope {
  // Unset: the source's own namespace. {}: every namespace. Otherwise: namespaces matching the selector.
  if (raw === undefined || raw === null) return { kind: 'own', namespace: own };
  const selector = labelSelectorToString(raw, `${where} namespaceSelector`);
  // Namespaces by name (a namespaced install): watched as named, no list of namespaces needed
  // (which would take a ClusterRole).
  const { matchLabels, matchExpressions } = raw as LabelSelector;
  const only = matchExpressions?.length === 1 ? matchExpressions[0] : undefined;
  if (!matchLabels && only?.key === NAMESPACE_NAME_LABEL && only.operator === 'In' && only.values?.length)
    return { kind: 'names', namespaces: [...only.values] };
  return selector === '' ? { kind: 'all' } : { kind: 'selector', labelSelector: selector };
}

/**
 * A metav1.LabelSelector as the string the API server takes (metav1.LabelSelectorAsSelector):
 * `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, comma-separated; an empty selector is ''.
 */
export function labelSelectorToString(selector: LabelSelector, where = 'selector'): string {
  const parts: { key: string; text: string }[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    parts.push({ key, text: `${key}=${String(value)}` });
  }
  for (const req of selector.matchExpressions ?? []) {
    parts.push({ key: req.key, text: requirementToString(req, where) });
  }
  // LabelSelectorAsSelector sorts requirements by key.
  return parts
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map(p => p.text)
    .join(',');
}

function requirementToString(req: LabelSelectorRequirement, where: string): string {
  const values = [...(req.values ?? [])].sort();
  switch (req.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) throw new Error(`${where}: operator ${req.operator} needs values`);
      return `${req.key} ${req.operator === 'In' ? 'in' : 'notin'} (${values.join(',')})`;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) throw new Error(`${where}: operator ${req.operator} takes no values`);
      return req.operator === 'Exists' ? req.key : `!${req.key}`;
    default:
      throw new Error(`${where}: unknown selector operator ${JSON.stringify(req.operator)}`);
  }
}

function parsePingSource(doc: Doc): PingSourceSpec {
  const { name, namespace } = nameOf(doc);
  const spec = (doc.spec ?? {}) as Record<string, unknown>;
  const ping: PingSourceSpec = {
    name,
    namespace,
    schedule: typeof spec.schedule === 'string' && spec.schedule !== '' ? spec.schedule : '* * * * *',
  };
  for (const key of ['timezone', 'contentType', 'data', 'dataBase64'] as const) {
    const value = spec[key];
    if (typeof value === 'string') ping[key] = value;
  }
  if (ping.data !== undefined && ping.dataBase64 !== undefined) {
    throw new Error(`PingSource ${namespace}/${name}: data and dataBase64 are mutually exclusive`);
  }
  return ping;
}

/** The Broker's spec.delivery (knative/broker.yaml); Knative's defaults where a field is unset. */
export function loadBrokerDelivery(knativeDir: string): DeliverySpec {
  const broker = readManifests(join(knativeDir, 'broker.yaml')).find(d => d.kind === 'Broker');
  if (!broker) throw new Error(`no Broker in ${join(knativeDir, 'broker.yaml')}`);
  const spec = (broker.spec ?? {}) as Record<string, unknown>;
  return parseDeliverySpec(spec.delivery, `Broker ${String(broker.metadata?.name)}`) ?? NO_RETRIES;
}

/** Knative without a delivery spec: one attempt, no retries. */
export const NO_RETRIES: DeliverySpec = { retry: 0, backoffPolicy: 'exponential', backoffDelayMs: 0 };

export function parseDeliverySpec(raw: unknown, where: string): DeliverySpec | undefined {
  if (raw === undefined || raw === null) return undefined;
  const d = raw as Record<string, unknown>;
  const retry = d.retry ?? 0;
  if (typeof retry !== 'number' || !Number.isInteger(retry) || retry < 0) {
    throw new Error(`${where}: delivery.retry must be a non-negative integer`);
  }
  const policy = d.backoffPolicy ?? 'exponential';
  if (policy !== 'exponential' && policy !== 'linear') {
    throw new Error(`${where}: delivery.backoffPolicy must be exponential or linear`);
  }
  const spec: DeliverySpec = {
    retry,
    backoffPolicy: policy,
    // Knative only backs off when both backoffPolicy and backoffDelay are set.
    backoffDelayMs: typeof d.backoffDelay === 'string' ? parseIsoDuration(d.backoffDelay) : 0,
  };
  if (typeof d.timeout === 'string') spec.timeoutMs = parseIsoDuration(d.timeout);
  if (d.format === 'json') spec.format = 'structured';
  else if (d.format === 'binary') spec.format = 'binary';
  // deadLetterSink is not followed: the bridge logs dead letters and keeps the last few in memory.
  return spec;
}

const ISO_DURATION =
  /^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** An ISO-8601 duration (PT0.2S, PT120S, PT1M30S, P1D) in milliseconds. Years/months/weeks are refused. */
export function parseIsoDuration(text: string): number {
  const match = ISO_DURATION.exec(text);
  if (!match || text === 'P' || text.endsWith('T')) throw new Error(`not an ISO-8601 duration: "${text}"`);
  const [, days, hours, minutes, seconds] = match;
  const n = (v: string | undefined) => (v === undefined ? 0 : Number(v));
  return Math.round(((n(days) * 24 + n(hours)) * 60 + n(minutes)) * 60_000 + n(seconds) * 1000);
}
