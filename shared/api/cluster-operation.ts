// status.operation: the one step reconcile-cluster claims in status, written compare-and-swap before the
// step runs (design rule 3: claim before acting), so a crash mid-step is carried on by the next
// invocation and two racing invocations never both act. A tagged union: a claim says what it is.

/** A step that changes membership or creates a member: claimed in status before it starts. */
export interface AddMemberOperation {
  type: 'add-member';
  member: string;
  bootstrap: boolean;
  /**
   * Static bootstrap of a new, empty cluster: every initial member's name (`member` is the first).
   * All are created together, each with the whole list as --initial-cluster, and start in parallel.
   */
  initialMembers?: string[];
  startedAt: string;
}

/** The claim in status.operation while one member is defragmented. */
export interface DefragOperation {
  type: 'defrag';
  member: string;
  /** RFC 3339. */
  startedAt: string;
  /** Why the member was due, for the Progressing message (stable while the claim stands). */
  why: string;
  /** The scheduled run (its due time) the claim is for; absent for the threshold policy. */
  run?: string;
  /** A scheduled claim: the member's dbSize when claimed (a defragmentation is what shrinks it). */
  dbSizeBefore?: number;
}

/** What status.operation holds: at most one claimed step, told apart by its `type`. */
export type ClusterOperation = AddMemberOperation | DefragOperation;

/**
 * The plan's steps (ClusterAction kinds, shared/plan/cluster/step.ts) whose status write is a claim:
 * written compare-and-swap before the step runs, and only the winner of that write runs it.
 * `claim` records an AddMemberOperation and `defragment` a DefragOperation in status.operation;
 * `promote` claims with the status alone (two racing promotions would both propose the change, and
 * raft drops the second with an error). `remove-orphan` claims with the status alone too: a run
 * that observed the cluster before another run's add-member claim sees the member being added in
 * etcd with no EtcdMember yet, and must not take it out of etcd; its claim, written against the
 * cluster as it observed it, loses to that add-member claim.
 */
export const CLAIMING_STEPS = ['claim', 'defragment', 'promote', 'remove-orphan'] as const;
