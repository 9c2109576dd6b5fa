// What a dead-lettered CloudEvent says, for people: Knative's Broker sends an event here after its
// Trigger's last retry failed, with the extensions knativeerrordest (the subscriber), knativeerrorcode
// (its last HTTP status) and knativeerrordata (base64 of its reply, possibly cut). Pure: the function
// turns the result into one log line and one Kubernetes Event on the object the event named.
import type { EventContent, InvolvedObject } from '../../shared/builders/k8s-event.ts';

export const FUNCTION_NAME = 'dead-letter';
const MAX_REPLY = 300;

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
  const dest = attrs.knativeerrordest ?? 'its subscriber';
  const code = attrs.knativeerrorcode ? ` (last answer: HTTP ${attrs.knativeerrorcode})` : '';
  const reply = decodeReply(attrs.knativeerrordata);
  const fields: Record<string, string> = {
    id: attrs.id ?? '',
    type: attrs.type ?? '',
    source: attrs.source ?? '',
    destination: dest,
    code: attrs.knativeerrorcode ?? '',
  };
  const { kind, name, namespace, apiversion } = attrs;
  const about = kind && name ? `${kind} ${namespace ? `${namespace}/` : ''}${name}` : 'no object';
  fields.object = about;
  if (reply) fields.reply = reply;
  const message =
    `A ${attrs.type ?? 'CloudEvent'} event about ${about} was not delivered to ${dest}${code} after every ` +
    `retry${reply ? `: ${reply}` : ''}. Nothing is lost for good: the periodic tick re-reads every object.`;
  const content: EventContent = { type: 'Warning', reason: 'EventDeliveryFailed', message };
  if (!(kind && name && namespace && apiversion)) return { content, fields };
  return { involved: { apiVersion: apiversion, kind, name, namespace, uid: '' }, content, fields };
}

/** knativeerrordata is base64 of the subscriber's reply; shown as text, cut short. */
function decodeReply(data: string | undefined): string {
  if (!data) return '';
  const text = Buffer.from(data, 'base64').toString('utf8').replace(/\s+/g, ' ').trim();
  const printable = /^[\x20-\x7e\u00a0-\uffff]*$/.test(text) ? text : '(binary reply)';
  return printable.length > MAX_REPLY ? `${printable.slice(0, MAX_REPLY - 1)}…` : printable;
}
