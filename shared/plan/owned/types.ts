// The vocabulary of the objects a cluster owns beside its members (Services, PodDisruptionBudget,
// NetworkPolicy), in etcd-druid's shape: one module per kind says what is wanted (desired) and how
// the object in the API server differs from it (drift); the plan turns that into changes, and the act
// layer applies them as they are (shared/reconcile/owned-apply.ts), never building them again.
// No decision here, and no import of a decider.
import type { KubeObject, ObjectRef } from '../../k8s/objects.ts';

/** One change to one owned object: what the API server is asked to do. */
export type ObjectChange =
  | { kind: 'create'; object: KubeObject }
  /** A JSON merge patch (RFC 7396) of only what drifted. */
  | { kind: 'patch'; ref: ObjectRef; patch: Record<string, unknown> }
  | { kind: 'delete'; ref: ObjectRef };

/** The payload of an ensure-* step: the changes, in order, and what to say once they are made. */
export interface OwnedChanges {
  changes: ObjectChange[];
  summary: string;
}
