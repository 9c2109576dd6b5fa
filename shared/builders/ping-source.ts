// What every PingSource etcdfn makes has in common (a schedule's own timing, shared/plan/schedule/ping.ts;
// an object's wake-up, shared/plan/wake/wake.ts): the type, the label the standalone bridge watches them
// by, a name that fits a label, and who owns one.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../k8s/objects.ts';
import { isControlledBy } from './owner.ts';

export const PING_SOURCE_API_VERSION = 'sources.knative.dev/v1';
export const PING_SOURCE_KIND = 'PingSource';
/** Carried by every PingSource etcdfn makes: the standalone bridge watches by it. */
export const SCHEDULE_PING_LABEL = 'etcdfn.io/schedule-timing';
const MAX_NAME = 63;

/**
 * Where a PingSource sends its events: the Broker's address as Knative publishes it in the Broker's
 * status (its URL, with the cluster's own domain and https under strict transport encryption; the
 * CA that signs it; the audience its OIDC tokens must carry), shared/reconcile/ping-sink.ts.
 */
export interface PingSink {
  uri: string;
  audience?: string;
  CACerts?: string;
}

export interface PingSource extends KubeObject {
  spec: {
    schedule: string;
    timezone?: string;
    contentType: string;
    data: string;
    sink: PingSink;
  };
}

/** The same destination: URI, audience and CA alike (a change of any is written). */
export const sameSink = (have: Partial<PingSink> | undefined, want: PingSink): boolean =>
  have?.uri === want.uri &&
  (have.audience ?? '') === (want.audience ?? '') &&
  (have.CACerts ?? '') === (want.CACerts ?? '');

/** The spec's sink: only the fields that are set. */
export const sinkSpec = (sink: PingSink): PingSink => ({
  uri: sink.uri,
  ...(sink.audience && { audience: sink.audience }),
  ...(sink.CACerts && { CACerts: sink.CACerts }),
});

/** `<prefix><name><suffix>`, the name shortened with a hash of it when the whole is over 63. */
export function boundedName(prefix: string, name: string, suffix = ''): string {
  const whole = `${prefix}${name}${suffix}`;
  if (whole.length <= MAX_NAME) return whole;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  const room = MAX_NAME - prefix.length - suffix.length - 9;
  return `${prefix}${name.slice(0, room).replace(/[-.]+$/, '')}-${hash}${suffix}`;
}

/** Whether `existing` is controlled by the object with `uid` (no UID owns nothing). */
export const ownedBy = (existing: KubeObject, uid: string | undefined): boolean =>
  isControlledBy(existing, { metadata: { uid } });
