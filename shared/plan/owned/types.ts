// The vocabulary of the objects a cluster owns beside its members, in etcd-druid's shape: one module
// per kind says what is wanted (desired) and how the object in the API server differs from it
// (drift), and turns that into changes; the act layer applies them as they are, through the one
// generic apply (shared/reconcile/owned-apply.ts), never building them again. The kinds: Services,
// PodDisruptionBudget and NetworkPolicy (reconcile-cluster's ensure-* steps), wake-up and schedule
// PingSources, auto TLS Secrets and cert-manager Certificates, the root credentials Secrets.
// No decision here, and no import of a decider.
import type { KubeObject, ObjectRef } from '../../k8s/objects.ts';

/** One change to one owned object: what the API server is asked to do. */
export type ObjectChange =
  | { kind: 'create'; object: KubeObject }
  /** A JSON merge patch (RFC 7396) of only what drifted. */
  | { kind: 'patch'; ref: ObjectRef; patch: Record<string, unknown> }
  /** The whole object written back under its metadata.resourceVersion (a compare-and-swap). */
  | { kind: 'replace'; object: KubeObject }
  /** `uid`: only this incarnation; a newer object of the same name is left alone. */
  | { kind: 'delete'; ref: ObjectRef; uid?: string };

/** The payload of an ensure-* step: the changes, in order, and what to say once they are made. */
export interface OwnedChanges {
  changes: ObjectChange[];
  summary: string;
}

/** The changes of one kind (or a few): `ObjectChangeOf<'create'>`. */
export type ObjectChangeOf<K extends ObjectChange['kind']> = Extract<ObjectChange, { kind: K }>;
