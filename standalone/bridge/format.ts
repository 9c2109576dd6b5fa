// The CloudEvents the bridge sends, attribute for attribute as Knative sends them:
// - ApiServerSource (knative/eventing pkg/adapter/apiserver/events/events.go + delegate.go): type
//   dev.knative.apiserver.{ref|resource}.{add|update|delete}; source = the API server URL; subject =
//   a guessed selfLink; a fresh UUID per send; time = send time; data = an ObjectReference
//   (Reference mode) or the whole object (Resource mode); extensions kind, name, namespace, apiversion.
// - PingSource (pkg/apis/sources/v1/ping_lifecycle.go, pkg/adapter/mtping): type
//   dev.knative.sources.ping, source /apis/v1/namespaces/<ns>/pingsources/<name>, data from the spec.
import { randomUUID } from 'node:crypto';
import { CloudEvent, HTTP, type CloudEventV1 } from 'cloudevents';
import { apiServerEventType, PING_EVENT_TYPE, type ObjectEventVerb } from '../../shared/events/types.ts';
import type { PingSourceSpec, SourceMode } from './sources.ts';

/** An object as a watch hands it over (apiVersion and kind filled in). */
export interface WatchedObject {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface SendStamp {
  /** Defaults to a fresh UUID: Knative sets a new one on every send (delegate.go). */
  id?: string;
  /** Defaults to now: Knative's client stamps the send time (ceclient.WithTimeNow). */
  time?: Date;
}

/** Kind names whose plural is the kind itself (apimachinery's unpluralizedSuffixes). */
const UNPLURALIZED_SUFFIXES = ['endpoints'];

/**
 * apimachinery's meta.UnsafeGuessKindToResource: lower-case the kind, then "s" → "+es",
 * "y" → "ies", anything else → "+s" (no x/ch/sh rules: it is a guess, and Knative uses it as such).
 */
export function guessResource(kind: string): string {
  if (kind === '') return '';
  const singular = kind.toLowerCase();
  if (UNPLURALIZED_SUFFIXES.some(s => singular.endsWith(s))) return singular;
  if (singular.endsWith('s')) return `${singular}es`;
  if (singular.endsWith('y')) return `${singular.slice(0, -1)}ies`;
  return `${singular}s`;
}

/**
 * Knative's createSelfLink: `/apis/<apiVersion>/namespaces/<ns>/<guessed plural>/<name>`, even for
 * core types (`/apis/v1/...`) and cluster-scoped objects (empty namespace segment); an apiVersion
 * with a dot but no slash gets "/versionUnknown" appended.
 */
export function selfLinkSubject(ref: { apiVersion: string; kind: string; name: string; namespace: string }) {
  let version = ref.apiVersion;
  if (version.includes('.') && !version.includes('/')) version = `${version}/versionUnknown`;
  return `/apis/${version}/namespaces/${ref.namespace}/${guessResource(ref.kind)}/${ref.name}`;
}

/** corev1.ObjectReference as encoding/json writes it: field order kind, namespace, name, apiVersion. */
export function objectReference(object: WatchedObject): Record<string, string> {
  const ref: Record<string, string> = {};
  const { name, namespace } = object.metadata;
  if (object.kind) ref.kind = object.kind;
  if (namespace) ref.namespace = namespace;
  if (name) ref.name = name;
  if (object.apiVersion) ref.apiVersion = object.apiVersion;
  return ref;
}

export interface ApiServerEventInput extends SendStamp {
  /** The API server's URL (the adapter's rest config host), e.g. https://10.96.0.1:443. */
  source: string;
  mode: SourceMode;
  verb: ObjectEventVerb;
  object: WatchedObject;
}

/** The CloudEvent ApiServerSource sends for one watch event. */
export function apiServerEvent(input: ApiServerEventInput): CloudEvent<unknown> {
  const { object } = input;
  const name = object.metadata.name ?? '';
  const namespace = object.metadata.namespace ?? '';
  const attributes: Record<string, unknown> = {
    specversion: '1.0',
    id: input.id ?? randomUUID(),
    type: apiServerEventType(input.mode, input.verb),
    source: input.source,
    subject: selfLinkSubject({ apiVersion: object.apiVersion, kind: object.kind, name, namespace }),
    time: (input.time ?? new Date()).toISOString(),
    datacontenttype: 'application/json',
    data: input.mode === 'Reference' ? objectReference(object) : object,
    kind: object.kind,
    name,
    apiversion: object.apiVersion,
  };
  // Knative sets namespace even when empty (cluster-scoped); an empty extension cannot travel as a
  // header value that the receivers here accept, so a cluster-scoped object simply has none.
  if (namespace !== '') attributes.namespace = namespace;
  return new CloudEvent(attributes);
}

/** `source` of a PingSource's events. */
export function pingSourceUri(ping: Pick<PingSourceSpec, 'name' | 'namespace'>): string {
  return `/apis/v1/namespaces/${ping.namespace}/pingsources/${ping.name}`;
}

/** The CloudEvent a PingSource sends on each tick. */
export function pingEvent(ping: PingSourceSpec, stamp: SendStamp = {}): CloudEvent<unknown> {
  const attributes: Record<string, unknown> = {
    specversion: '1.0',
    id: stamp.id ?? randomUUID(),
    type: PING_EVENT_TYPE,
    source: pingSourceUri(ping),
    time: (stamp.time ?? new Date()).toISOString(),
  };
  if (ping.contentType) attributes.datacontenttype = ping.contentType;
  if (ping.dataBase64 !== undefined) {
    attributes.data = Buffer.from(ping.dataBase64, 'base64');
  } else if (ping.data !== undefined) {
    // The adapter sends the bytes of spec.data; JSON content is kept as JSON so that structured
    // mode embeds it as an object, as the Go SDK does.
    attributes.data = isJson(ping.contentType) ? parseJsonOr(ping.data) : ping.data;
  }
  return new CloudEvent(attributes);
}

function isJson(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const media = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return media === 'application/json' || media.endsWith('+json') || media === 'text/json';
}

function parseJsonOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Adds what the Broker's ingress stamps on every event it accepts (knativearrivaltime, RFC 3339). */
export function withBrokerArrival(event: CloudEvent<unknown>, at: Date = new Date()): CloudEvent<unknown> {
  return event.cloneWith({ knativearrivaltime: at.toISOString() });
}

export interface HttpRequestMessage {
  headers: Record<string, string>;
  body: string | Buffer;
}

/** The HTTP request for an event: binary mode (ce-* headers, data as body) or structured mode. */
export function toHttpMessage(
  event: CloudEventV1<unknown>,
  format: 'binary' | 'structured',
): HttpRequestMessage {
  const ce = event instanceof CloudEvent ? event : new CloudEvent(event);
  const message = format === 'structured' ? HTTP.structured(ce) : HTTP.binary(ce);
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(message.headers)) {
    if (value !== undefined) headers[key.toLowerCase()] = String(value);
  }
  const body: unknown = message.body;
  if (typeof body === 'string') return { headers, body };
  return { headers, body: body instanceof Uint8Array ? Buffer.from(body) : '' };
}
