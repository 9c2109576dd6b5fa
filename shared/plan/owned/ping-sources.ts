// The PingSources an object owns: a cluster's or a snapshot's wake-up (shared/plan/wake/) and a
// schedule's own timing (shared/plan/schedule/ping.ts). Those modules say which one is desired and
// how the existing one drifted (wakeStep, pingSourceStep: each a PingSourceDrift); here the drift
// becomes the change the generic apply makes (shared/reconcile/owned-apply.ts). A PingSource of the
// name that its owner does not control is a conflict: never written, never deleted.
import type { ObjectRef } from '../../k8s/objects.ts';
import { PING_SOURCE_API_VERSION, PING_SOURCE_KIND, type PingSource } from '../../builders/ping-source.ts';
import type { ObjectChange } from './types.ts';

/** How the existing PingSource (if any) stands against the desired one (if any). */
export type PingSourceDrift =
  | { kind: 'none' }
  | { kind: 'create'; object: PingSource }
  /** The existing one with the desired spec (and labels), written back under its resourceVersion. */
  | { kind: 'update'; object: PingSource }
  | { kind: 'delete'; name: string; uid?: string }
  /** A PingSource of that name the owner does not own: left alone, and said so. */
  | { kind: 'conflict'; message: string };

/** A drift that asks for a write. */
export type PingSourceWrite = Extract<PingSourceDrift, { kind: 'create' | 'update' | 'delete' }>;

export const pingSourceRef = (namespace: string, name: string): ObjectRef => ({
  apiVersion: PING_SOURCE_API_VERSION,
  kind: PING_SOURCE_KIND,
  namespace,
  name,
});

/** The change that carries out `drift` for a PingSource in `namespace`. */
export function pingSourceChange(drift: PingSourceWrite, namespace: string): ObjectChange {
  switch (drift.kind) {
    case 'create':
      return { kind: 'create', object: drift.object };
    case 'update':
      return { kind: 'replace', object: drift.object };
    case 'delete':
      // Only the incarnation that was read: one made again meanwhile is not ours to remove.
      return {
        kind: 'delete',
        ref: pingSourceRef(namespace, drift.name),
        ...(drift.uid && { uid: drift.uid }),
      };
  }
}
