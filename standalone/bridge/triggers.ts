// Trigger routing exactly as Knative's Broker filter evaluates it (knative/eventing
// pkg/eventfilter/{attributes,subscriptionsapi}): `filters` (CloudEvents Subscriptions API dialect:
// exact, prefix, suffix, all, any, not) when present, else the legacy `filter.attributes` exact match,
// else everything. Filters are tri-state (pass/fail/no-filter) and an event is delivered unless the
// result is fail. CESQL is not implemented and is refused when the manifests are loaded.
import { join } from 'node:path';
import type { Logger } from 'pino';
import { log as rootLog } from '../../shared/log.ts';
import { parseDeliverySpec, readManifests, type DeliverySpec } from './sources.ts';

export type FilterResult = 'pass' | 'fail' | 'none';

export interface SubscriptionsApiFilter {
  exact?: Record<string, string>;
  prefix?: Record<string, string>;
  suffix?: Record<string, string>;
  all?: SubscriptionsApiFilter[];
  any?: SubscriptionsApiFilter[];
  not?: SubscriptionsApiFilter;
  cesql?: string;
}

export interface TriggerSpec {
  name: string;
  namespace: string;
  broker: string;
  /** spec.subscriber.ref.name, or spec.subscriber.uri when there is no ref. */
  subscriber: string;
  filters?: SubscriptionsApiFilter[];
  /** Legacy spec.filter.attributes; an empty value matches any value of a present attribute. */
  attributes?: Record<string, string>;
  /** The Trigger's own delivery spec; when unset the Broker's applies. */
  delivery?: DeliverySpec;
}

/** A CloudEvent's context attributes and extensions, by lower-case name. */
export type EventAttributes = Record<string, unknown>;

/** The context attributes Knative's LookupAttribute always finds (possibly empty). */
const CONTEXT_ATTRIBUTES = new Set([
  'specversion',
  'type',
  'source',
  'subject',
  'id',
  'time',
  'dataschema',
  'schemaurl',
  'datacontenttype',
  'datamediatype',
]);

/** Knative's attributes.LookupAttribute: context attributes always exist, extensions only if set. */
export function lookupAttribute(event: EventAttributes, name: string): string | undefined {
  if (CONTEXT_ATTRIBUTES.has(name)) {
    if (name === 'datamediatype') {
      const type = event.datacontenttype;
      return typeof type === 'string' ? (type.split(';')[0] ?? '').trim() : '';
    }
    const value = event[name === 'schemaurl' ? 'dataschema' : name];
    return value === undefined || value === null ? '' : stringOf(value);
  }
  const value = event[name];
  return value === undefined || value === null ? undefined : stringOf(value);
}

function stringOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}

type Materialized = (event: EventAttributes) => FilterResult;

/** Every attribute must be present and satisfy the test (Knative's exact/prefix/suffix filters). */
function attributeFilter(attrs: Record<string, string>, test: (actual: string, want: string) => boolean) {
  for (const [key, value] of Object.entries(attrs)) {
    // NewExactFilter & co. refuse empty attributes or values; MaterializeFiltersList then skips them.
    if (key === '' || value === '' || typeof value !== 'string') return undefined;
  }
  return (event: EventAttributes): FilterResult => {
    for (const [key, want] of Object.entries(attrs)) {
      const actual = lookupAttribute(event, key);
      if (actual === undefined || !test(actual, want)) return 'fail';
    }
    return 'pass';
  };
}

function materialize(filter: SubscriptionsApiFilter): Materialized | undefined {
  if (nonEmpty(filter.exact)) return attributeFilter(filter.exact, (a, w) => a === w);
  if (nonEmpty(filter.prefix)) return attributeFilter(filter.prefix, (a, w) => a.startsWith(w));
  if (nonEmpty(filter.suffix)) return attributeFilter(filter.suffix, (a, w) => a.endsWith(w));
  if (filter.all && filter.all.length > 0) return allOf(materializeList(filter.all));
  if (filter.any && filter.any.length > 0) return anyOf(materializeList(filter.any));
  if (filter.not) {
    const inner = materialize(filter.not);
    return event => {
      const result = inner ? inner(event) : 'none';
      return result === 'fail' ? 'pass' : result === 'pass' ? 'fail' : 'none';
    };
  }
  if (filter.cesql) throw new Error('CESQL trigger filters are not supported by the event bridge');
  return undefined;
}

function nonEmpty(map: Record<string, string> | undefined): map is Record<string, string> {
  return map !== undefined && map !== null && Object.keys(map).length > 0;
}

/** Invalid entries are skipped, as Knative's MaterializeFiltersList does. */
function materializeList(filters: SubscriptionsApiFilter[]): Materialized[] {
  return filters.map(materialize).filter((f): f is Materialized => f !== undefined);
}

/** Knative's allFilter: the first fail, else the last result (no-filter when empty). */
function allOf(filters: Materialized[]): Materialized {
  return event => {
    let result: FilterResult = 'none';
    for (const f of filters) {
      result = f(event);
      if (result === 'fail') return 'fail';
    }
    return result;
  };
}

/** Knative's anyFilter: the first pass, else the last result (no-filter when empty). */
function anyOf(filters: Materialized[]): Materialized {
  return event => {
    let result: FilterResult = 'none';
    for (const f of filters) {
      result = f(event);
      if (result === 'pass') return 'pass';
    }
    return result;
  };
}

/** Evaluates one Subscriptions API filter expression. */
export function evaluateFilter(filter: SubscriptionsApiFilter, event: EventAttributes): FilterResult {
  const f = materialize(filter);
  return f ? f(event) : 'none';
}

/** Evaluates a Trigger's filtering against an event: what the Broker's filter handler decides. */
export function evaluateTrigger(
  trigger: Pick<TriggerSpec, 'filters' | 'attributes'>,
  event: EventAttributes,
) {
  if (trigger.filters && trigger.filters.length > 0) return allOf(materializeList(trigger.filters))(event);
  if (trigger.attributes) {
    for (const [key, want] of Object.entries(trigger.attributes)) {
      const actual = lookupAttribute(event, key);
      if (actual === undefined) return 'fail';
      if (want !== '' && actual !== want) return 'fail';
    }
    return 'pass';
  }
  return 'none';
}

/** True when the Broker would deliver the event to the Trigger's subscriber. */
export function triggerMatches(trigger: Pick<TriggerSpec, 'filters' | 'attributes'>, event: EventAttributes) {
  return evaluateTrigger(trigger, event) !== 'fail';
}

/** The attributes of a CloudEvent (a cloudevents CloudEvent or any attribute map) for filtering. */
export function attributesOf(event: object): EventAttributes {
  const out: EventAttributes = {};
  for (const [key, value] of Object.entries(event)) {
    if (key !== 'data' && key !== 'data_base64' && value !== undefined) out[key] = value;
  }
  return out;
}

const ATTRIBUTE_NAME = /^[a-z][a-z0-9]*$/;

/**
 * What Knative's Trigger admission webhook would refuse (pkg/apis/eventing/v1/trigger_validation.go):
 * more than one dialect in one filter, exact/prefix/suffix with more than one attribute, attribute
 * names that are not lower-case alphanumeric. The bridge can evaluate such filters (every attribute
 * must match), but a cluster would not accept the manifest.
 */
export function knativeValidationErrors(trigger: Pick<TriggerSpec, 'filters' | 'attributes'>): string[] {
  const errors: string[] = [];
  for (const key of Object.keys(trigger.attributes ?? {})) {
    if (!ATTRIBUTE_NAME.test(key)) errors.push(`filter.attributes.${key}: invalid attribute name`);
  }
  (trigger.filters ?? []).forEach((f, i) => validateFilter(f, `filters[${i}]`, errors));
  return errors;
}

function validateFilter(filter: SubscriptionsApiFilter, path: string, errors: string[]): void {
  const dialects = (['exact', 'prefix', 'suffix', 'all', 'any', 'not', 'cesql'] as const).filter(d => {
    const v = filter[d];
    return Array.isArray(v) ? v.length > 0 : typeof v === 'object' ? Object.keys(v).length > 0 : !!v;
  });
  if (dialects.length > 1) errors.push(`${path}: multiple dialects found (${dialects.join(', ')})`);
  for (const dialect of ['exact', 'prefix', 'suffix'] as const) {
    const map = filter[dialect];
    if (!map) continue;
    const keys = Object.keys(map);
    if (keys.length > 1) {
      errors.push(
        `${path}.${dialect}: Multiple items found, can have only one key-value (${keys.join(', ')})`,
      );
    }
    for (const key of keys) {
      if (!ATTRIBUTE_NAME.test(key)) errors.push(`${path}.${dialect}.${key}: invalid attribute name`);
    }
  }
  filter.all?.forEach((f, i) => validateFilter(f, `${path}.all[${i}]`, errors));
  filter.any?.forEach((f, i) => validateFilter(f, `${path}.any[${i}]`, errors));
  if (filter.not) validateFilter(filter.not, `${path}.not`, errors);
}

export interface LoadTriggersOptions {
  /** Throw, instead of warning, when Knative's webhook would refuse a Trigger. */
  strict?: boolean;
  log?: Logger;
}

export function loadTriggers(knativeDir: string, options: LoadTriggersOptions = {}): TriggerSpec[] {
  const file = join(knativeDir, 'triggers.yaml');
  const triggers = readManifests(file)
    .filter(doc => doc.kind === 'Trigger')
    .map(doc => parseTrigger(doc));
  for (const trigger of triggers) {
    const errors = knativeValidationErrors(trigger);
    if (errors.length === 0) continue;
    const message = `Trigger ${trigger.namespace}/${trigger.name} would be refused by Knative's webhook: ${errors.join('; ')}`;
    if (options.strict) throw new Error(message);
    (options.log ?? rootLog).warn({ file, trigger: trigger.name, errors }, message);
  }
  return triggers;
}

/** Parses one Trigger manifest; refuses what the bridge cannot evaluate (CESQL) right away. */
export function parseTrigger(doc: { metadata?: Record<string, unknown>; spec?: unknown }): TriggerSpec {
  const name = stringField(doc.metadata?.name, '');
  const namespace = stringField(doc.metadata?.namespace, 'default');
  const where = `Trigger ${namespace}/${name}`;
  const spec = (doc.spec ?? {}) as Record<string, unknown>;
  const subscriber = (spec.subscriber ?? {}) as { ref?: { name?: unknown }; uri?: unknown };
  const subscriberName = subscriber.ref?.name ?? subscriber.uri;
  if (name === '' || typeof subscriberName !== 'string') {
    throw new Error(`${where}: metadata.name and spec.subscriber (ref.name or uri) are required`);
  }
  const trigger: TriggerSpec = {
    name,
    namespace,
    broker: stringField(spec.broker, 'default'),
    subscriber: subscriberName,
  };
  if (Array.isArray(spec.filters)) {
    trigger.filters = spec.filters as SubscriptionsApiFilter[];
    refuseCesql(trigger.filters, `${where} spec.filters`);
    // Materialize once now, so a filter the bridge cannot evaluate fails at load, not per event.
    materializeList(trigger.filters);
  }
  const legacy = (spec.filter as { attributes?: unknown } | undefined)?.attributes;
  if (legacy && typeof legacy === 'object') trigger.attributes = legacy as Record<string, string>;
  const delivery = parseDeliverySpec(spec.delivery, where);
  if (delivery) trigger.delivery = delivery;
  return trigger;
}

function refuseCesql(filters: SubscriptionsApiFilter[], where: string): void {
  for (const [i, f] of filters.entries()) {
    if (f.cesql !== undefined) {
      throw new Error(`${where}[${i}]: CESQL filters ("${f.cesql}") are not supported by the event bridge`);
    }
    if (f.all) refuseCesql(f.all, `${where}[${i}].all`);
    if (f.any) refuseCesql(f.any, `${where}[${i}].any`);
    if (f.not) refuseCesql([f.not], `${where}[${i}].not`);
  }
}

function stringField(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}
