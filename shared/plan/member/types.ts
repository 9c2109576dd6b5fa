// The vocabulary reconcile-member's deciders share beyond step.ts: what it observed about the nodes a
// member depends on. No decision here, and no import of a decider.

/** What reconcile-member observed about the nodes the member depends on. */
export interface MemberNodes {
  /** spec.nodeName of the member's own Pod, when bound */
  podNode?: string;
  /**
   * The nodes the member's PVC can be used on (its PersistentVolume's required node affinity on
   * kubernetes.io/hostname); undefined when the volume is not tied to nodes, or not bound yet.
   */
  volumeNodes?: string[];
  /** Those of the nodes above whose Node object does not exist (a NotFound read). */
  gone: string[];
}
