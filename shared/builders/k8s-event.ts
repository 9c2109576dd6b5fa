// A core/v1 Event about one object, as `kubectl describe` and `kubectl get events` show it. The
// name is derived from what the Event says (not when), so the same Event said again is an
// AlreadyExists that the writer counts (shared/reconcile/record-event.ts), while a different
// message is a new Event.
import { createHash } from 'node:crypto';
import type { CoreV1Event } from '@kubernetes/client-node';

export const EVENT_COMPONENT = 'etcdfn';
/** The longest message written; the events.k8s.io API refuses notes of 1 KiB and more. */
export const MAX_EVENT_MESSAGE = 1000;
const MAX_NAME = 253;

export interface InvolvedObject {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid: string;
}

export interface EventContent {
  type: 'Normal' | 'Warning';
  /** UpperCamelCase, e.g. MemberAdded. */
  reason: string;
  message: string;
}

export interface EventSource {
  /** source.component and reportingComponent; defaults to etcdfn. */
  component?: string;
  /** reportingInstance, e.g. the function that emitted it; defaults to the component. */
  instance?: string;
}

export function eventName(involved: InvolvedObject, content: EventContent): string {
  const hash = createHash('sha256')
    .update([involved.uid, content.type, content.reason, content.message].join('\u0000'))
    .digest('hex')
    .slice(0, 16);
  const suffix = `.${hash}`;
  return involved.name.slice(0, MAX_NAME - suffix.length) + suffix;
}

export function buildEvent(
  involved: InvolvedObject,
  content: EventContent,
  now: Date,
  source: EventSource = {},
): CoreV1Event {
  const component = source.component ?? EVENT_COMPONENT;
  const message =
    content.message.length > MAX_EVENT_MESSAGE
      ? `${content.message.slice(0, MAX_EVENT_MESSAGE - 1)}…`
      : content.message;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: eventName(involved, content), namespace: involved.namespace },
    involvedObject: { ...involved },
    type: content.type,
    reason: content.reason,
    message,
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
    source: { component },
    reportingComponent: component,
    reportingInstance: source.instance ?? component,
  };
}
