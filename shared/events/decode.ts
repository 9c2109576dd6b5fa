// Decoding of incoming CloudEvents (HTTP binary or structured mode) into OperatorEvents.
// Anything that can never succeed is an EventDecodeError: the function answers it with a 4xx and a
// message saying what is wrong, so the event system does not retry it forever.
import { HTTP, type CloudEventV1 } from 'cloudevents';
import type { KubeObject, ObjectRef } from '../k8s/objects.ts';
import {
  API_SERVER_EVENT_PREFIX,
  PING_EVENT_TYPE,
  type ApiServerSourceMode,
  type EventEnvelope,
  type ObjectEvent,
  type ObjectEventVerb,
  type OperatorEvent,
} from './types.ts';

export class EventDecodeError extends Error {
  readonly status: number;
  constructor(message: string, status = 400) {
    super(message);
    this.name = 'EventDecodeError';
    this.status = status;
  }
}

export interface HttpMessage {
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

const REQUIRED = ['id', 'source', 'type', 'specversion'] as const;
const MODES: Record<string, ApiServerSourceMode> = { ref: 'Reference', resource: 'Resource' };
const VERBS = new Set<ObjectEventVerb>(['add', 'update', 'delete']);

export function decodeEvent(message: HttpMessage): OperatorEvent {
  const event = toCloudEvent(message);
  const envelope: EventEnvelope = { id: event.id, source: event.source, type: event.type };
  if (event.time) envelope.time = String(event.time);
  if (event.type === PING_EVENT_TYPE) return { ...envelope, kind: 'tick', data: event.data };
  if (event.type.startsWith(API_SERVER_EVENT_PREFIX)) return decodeObjectEvent(event, envelope);
  throw new EventDecodeError(
    `unsupported event type "${printable(event.type)}": etcdfn functions take ${API_SERVER_EVENT_PREFIX}{ref,resource}.{add,update,delete} and ${PING_EVENT_TYPE}`,
  );
}

/** A sender's text as it may appear in a message: at most 120 characters, control characters shown as "?". */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length > 120 ? `${clean.slice(0, 120)}…` : clean;
}

function toCloudEvent(message: HttpMessage): CloudEventV1<unknown> {
  const headers = lowerCaseHeaders(message.headers);
  const body = normaliseBody(message.body);
  const structured = (headers['content-type'] ?? '').startsWith('application/cloudevents');
  const attributes: Record<string, unknown> = structured ? parseStructured(body) : binaryAttributes(headers);
  const missing = REQUIRED.filter(name => typeof attributes[name] !== 'string' || attributes[name] === '');
  if (missing.length > 0) {
    const how = structured ? 'in the structured body' : 'as ce-* headers (binary mode)';
    throw new EventDecodeError(`not a CloudEvent: missing ${missing.join(', ')} ${how}`);
  }
  if (attributes.specversion !== '1.0') {
    throw new EventDecodeError(
      `unsupported CloudEvents specversion "${String(attributes.specversion)}"; expected 1.0`,
    );
  }
  try {
    const parsed = HTTP.toEvent({ headers, body });
    if (Array.isArray(parsed))
      throw new EventDecodeError('batched CloudEvents are not supported; send one event per request');
    return parsed;
  } catch (err) {
    if (err instanceof EventDecodeError) throw err;
    throw new EventDecodeError(`malformed CloudEvent: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function lowerCaseHeaders(headers: HttpMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (value !== undefined) out[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function normaliseBody(body: unknown): string | Record<string, unknown> {
  if (body === undefined || body === null) return '';
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  if (typeof body === 'string') return body;
  if (typeof body === 'object') return body as Record<string, unknown>;
  throw new EventDecodeError('malformed CloudEvent: the body is neither JSON nor text');
}

function parseStructured(body: string | Record<string, unknown>): Record<string, unknown> {
  if (typeof body !== 'string') return body;
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // fall through to the error below
  }
  throw new EventDecodeError('malformed CloudEvent: a structured-mode body must be one JSON object');
}

function binaryAttributes(headers: Record<string, string>): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (key.startsWith('ce-')) attributes[key.slice(3)] = value;
  }
  return attributes;
}

function decodeObjectEvent(event: CloudEventV1<unknown>, envelope: EventEnvelope): ObjectEvent {
  // Exactly <mode>.<verb>: a type with more parts (…ref.update.anything) is not one we handle,
  // and accepting it would let a sender mint new values of whatever is derived from the type.
  const parts = event.type.slice(API_SERVER_EVENT_PREFIX.length).split('.');
  const mode = parts.length === 2 ? MODES[parts[0] ?? ''] : undefined;
  const verb = parts[1] as ObjectEventVerb;
  if (!mode || !VERBS.has(verb)) {
    throw new EventDecodeError(
      `unsupported ApiServerSource event type "${printable(event.type)}": etcdfn functions take ${API_SERVER_EVENT_PREFIX}{ref,resource}.{add,update,delete}`,
    );
  }
  const data = parseData(event.data);
  const ref = mode === 'Reference' ? referenceFrom(data) : refFromObject(data);
  checkExtensions(event, ref);
  const decoded: ObjectEvent = { ...envelope, kind: 'object', mode, verb, ref };
  if (mode === 'Resource') decoded.object = data as unknown as KubeObject;
  return decoded;
}

function parseData(data: unknown): Record<string, unknown> {
  let value = data;
  if (Buffer.isBuffer(value)) value = value.toString('utf8');
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new EventDecodeError('malformed ApiServerSource event: data is not JSON');
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new EventDecodeError(
      'malformed ApiServerSource event: data must be a JSON object naming a Kubernetes object',
    );
  }
  return value as Record<string, unknown>;
}

function referenceFrom(data: Record<string, unknown>): ObjectRef {
  return requireRef({
    apiVersion: data.apiVersion,
    kind: data.kind,
    name: data.name,
    namespace: data.namespace ?? '',
  });
}

function refFromObject(data: Record<string, unknown>): ObjectRef {
  const metadata = (data.metadata ?? {}) as Record<string, unknown>;
  return requireRef({
    apiVersion: data.apiVersion,
    kind: data.kind,
    name: metadata.name,
    namespace: metadata.namespace ?? '',
  });
}

function requireRef(ref: Record<keyof ObjectRef, unknown>): ObjectRef {
  const missing = (['apiVersion', 'kind', 'name'] as const).filter(
    k => typeof ref[k] !== 'string' || ref[k] === '',
  );
  if (missing.length > 0 || typeof ref.namespace !== 'string') {
    throw new EventDecodeError(
      `malformed ApiServerSource event: data does not name an object (missing ${missing.join(', ') || 'namespace'})`,
    );
  }
  return ref as ObjectRef;
}

/** Knative copies kind/name/namespace into extensions; if they disagree with data, trust neither. */
function checkExtensions(event: CloudEventV1<unknown>, ref: ObjectRef): void {
  for (const key of ['kind', 'name', 'namespace'] as const) {
    const value = event[key];
    if (typeof value === 'string' && value !== '' && value !== ref[key]) {
      throw new EventDecodeError(
        `inconsistent ApiServerSource event: extension ${key}="${value}" but the data names "${ref[key]}"`,
      );
    }
  }
}
