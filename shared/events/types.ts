// What an etcdfn function receives, once the CloudEvent has been checked: either "this object
// changed" (from ApiServerSource, in either of its modes) or "time passed" (the PingSource tick).
import type { KubeObject, ObjectRef } from '../k8s/objects.ts';

export type ObjectEventVerb = 'add' | 'update' | 'delete';
export type ApiServerSourceMode = 'Reference' | 'Resource';

export interface EventEnvelope {
  id: string;
  source: string;
  type: string;
  time?: string;
}

export interface ObjectEvent extends EventEnvelope {
  kind: 'object';
  mode: ApiServerSourceMode;
  verb: ObjectEventVerb;
  /** The object the event names. The payload is a hint: functions always re-read the object. */
  ref: ObjectRef;
  /** The object as the watch saw it (Resource mode only). */
  object?: KubeObject;
}

export interface TickEvent extends EventEnvelope {
  kind: 'tick';
  data: unknown;
}

export type OperatorEvent = ObjectEvent | TickEvent;

export const PING_EVENT_TYPE = 'dev.knative.sources.ping';
export const API_SERVER_EVENT_PREFIX = 'dev.knative.apiserver.';

export function apiServerEventType(mode: ApiServerSourceMode, verb: ObjectEventVerb): string {
  return `${API_SERVER_EVENT_PREFIX}${mode === 'Reference' ? 'ref' : 'resource'}.${verb}`;
}

/**
 * The metric labels of an event: its normalised mode and verb, never the sender's text, so the
 * number of series is fixed (ref|resource × add|update|delete, ping/tick, and none/none for an
 * event refused before it was decoded) whatever a sender puts in ce-type.
 */
export function eventMetricLabels(event: OperatorEvent | undefined): { mode: string; verb: string } {
  if (event === undefined) return { mode: 'none', verb: 'none' };
  if (event.kind === 'tick') return { mode: 'ping', verb: 'tick' };
  return { mode: event.mode === 'Reference' ? 'ref' : 'resource', verb: event.verb };
}
