// What a dead-lettered CloudEvent says, for people: Knative's Broker sends an event here after its
// Trigger's last retry failed, with the extensions knativeerrordest (the subscriber), knativeerrorcode
// (its last HTTP status) and knativeerrordata (base64 of its reply, possibly cut). Pure: the function
// turns the result into one log line and one Kubernetes Event on the object the event named.
//
// Anyone who can reach the function can post it anything, so what it writes is bounded: an Event
// only about an etcdfn object (EtcdCluster, EtcdMember, EtcdSnapshot, EtcdSnapshotSchedule) with a
// well-formed name and namespace, written by the adapter only once it has read that object (so it
// exists, and the Event carries its uid); every caller-chosen part of the text is cut short and
// reduced to printable characters, the whole message to MAX_LETTER characters.
import { API_VERSION, RESOURCES } from '../../shared/api/group.ts';
import type { EventContent, InvolvedObject } from '../../shared/builders/k8s-event.ts';

export const FUNCTION_NAME = 'dead-letter';
const MAX_REPLY = 300;
/** The longest part of the message taken from one attribute (subscriber, type). */
const MAX_PART = 120;
/** The whole message; below the 1 KiB the events API accepts. */
export const MAX_LETTER = 800;
/** A DNS-1123 subdomain (object names) and label (namespaces). */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const ETCDFN_KINDS = new Set<string>(RESOURCES.map(r => r.kind));

/** CloudEvent attributes and extensions, by lower-case name, from either HTTP encoding. */
export type Attributes = Record<string, string>;

export interface DeadLetter {
  /** The object the event named (ApiServerSource's kind/name/namespace/apiversion extensions). */
  involved?: InvolvedObject;
  content: EventContent;
  /** Fields for the log line (never the event's data). */
  fields: Record<string, string>;
}

/** Attributes from binary mode (ce-* headers) or structured mode (a JSON body). */
export function attributesOf(headers: Record<string, unknown>, body: unknown): Attributes {
  const out: Attributes = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase().startsWith('ce-') && typeof value === 'string')
      out[name.slice(3).toLowerCase()] = value;
  }
  const contentType = typeof headers['content-type'] === 'string' ? headers['content-type'] : '';
  if (contentType.startsWith('application/cloudevents+json') && body && typeof body === 'object') {
    for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
      if (name !== 'data' && name !== 'data_base64' && typeof value === 'string')
        out[name.toLowerCase()] = value;
    }
  }
  return out;
}

export function describeDeadLetter(attrs: Attributes): DeadLetter {
  const dest = attrs.knativeerrordest ? clip(attrs.knativeerrordest, MAX_PART) : 'its subscriber';
  const status = /^\d{3}$/.test(attrs.knativeerrorcode ?? '') ? attrs.knativeerrorcode : undefined;
  const code = status ? ` (last answer: HTTP ${status})` : '';
  const reply = decodeReply(attrs.knativeerrordata);
  const type = attrs.type ? clip(attrs.type, MAX_PART) : undefined;
  const fields: Record<string, string> = {
    id: clip(attrs.id ?? '', MAX_PART),
    type: type ?? '',
    source: clip(attrs.source ?? '', MAX_PART),
    destination: dest,
    code: status ?? '',
  };
  const involved = etcdfnObject(attrs);
  const about = involved
    ? `${involved.kind} ${involved.namespace}/${involved.name}`
    : attrs.kind && attrs.name
      ? `${clip(attrs.kind, 64)} ${attrs.namespace ? `${clip(attrs.namespace, 64)}/` : ''}${clip(attrs.name, MAX_PART)}`
      : 'no object';
  fields.object = about;
  if (reply) fields.reply = reply;
  const message = clip(
    `A ${type ?? 'CloudEvent'} event about ${about} was not delivered to ${dest}${code} after every ` +
      `retry${reply ? `: ${reply}` : ''}. Nothing is lost for good: the periodic tick re-reads every object.`,
    MAX_LETTER,
  );
  const content: EventContent = { type: 'Warning', reason: 'EventDeliveryFailed', message };
  return involved ? { involved, content, fields } : { content, fields };
}

/**
 * The object the event named, when it is one of etcdfn's own kinds with a well-formed name and
 * namespace; undefined for anything else (a Pod, a Secret, another group, a malformed name). The
 * uid is filled in by the adapter from the object it reads.
 */
export function etcdfnObject(attrs: Attributes): InvolvedObject | undefined {
  const { kind, name, namespace, apiversion } = attrs;
  if (apiversion !== API_VERSION || !kind || !ETCDFN_KINDS.has(kind)) return undefined;
  if (!name || !SUBDOMAIN.test(name) || !namespace || !LABEL.test(namespace)) return undefined;
  return { apiVersion: API_VERSION, kind, name, namespace, uid: '' };
}

/** Printable, on one line, at most `max` characters. */
function clip(text: string, max: number): string {
  const line = text
    .replace(/[^\x20-\x7e\u00a0-\uffff]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** knativeerrordata is base64 of the subscriber's reply; shown as text, cut short. */
function decodeReply(data: string | undefined): string {
  if (!data) return '';
  const text = Buffer.from(data, 'base64').toString('utf8').replace(/\s+/g, ' ').trim();
  const printable = /^[\x20-\x7e\u00a0-\uffff]*$/.test(text) ? text : '(binary reply)';
  return printable.length > MAX_REPLY ? `${printable.slice(0, MAX_REPLY - 1)}…` : printable;
}
