// Crash injection for the crash tests: a named point just after a side effect, where the process can
// be made to die as abruptly as a real crash (SIGKILL: no cleanup, no HTTP answer). Off unless
// $ETCDFN_CRASH_DIR is set; then a file named after a point in that directory arms it, and the point
// deletes the file before killing the process, so each armed crash fires once, even across restarts.
import { unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Every crash point in the functions, in the order a cluster's lifecycle passes them. */
export const CRASH_POINTS = [
  // reconcile-cluster (shared/reconcile/cluster.ts, cluster-act.ts)
  'cluster:service-ensured',
  'cluster:status-written',
  'cluster:claimed',
  'cluster:member-created',
  'cluster:operation-cleared',
  'cluster:cluster-id-latched',
  'cluster:pdb-ensured',
  'cluster:learner-added',
  'cluster:member-wired',
  'cluster:promoted',
  'cluster:member-marked-voter',
  'cluster:leader-moved',
  'cluster:member-deleted',
  'cluster:dormant-set',
  'cluster:orphan-removed',
  'cluster:member-upgraded',
  // reconcile-member (shared/reconcile/member.ts)
  'member:status-written',
  'member:pvc-created',
  'member:pod-created',
  'member:pod-labelled',
  'member:pod-deleted',
  // finalize-member (shared/reconcile/finalize.ts)
  'finalize:leader-moved',
  'finalize:removed-from-etcd',
  'finalize:finalizer-removed',
] as const;

/** run-snapshot's crash points (shared/reconcile/snapshot.ts, schedule.ts); crashed through by test/e2e/crash-snapshot.test.ts. */
export const SNAPSHOT_CRASH_POINTS = [
  'snapshot:finalizer-added',
  'snapshot:claimed',
  'snapshot:streaming',
  'snapshot:uploaded',
  'snapshot:result-written',
  'snapshot:object-deleted',
  'schedule:claimed',
  'schedule:snapshot-created',
  'schedule:object-pruned',
  'schedule:file-pruned',
] as const;

/** The in-place restore's own crash points (reconcile-cluster); crashed through by test/e2e/restore-in-place-crash.test.ts. */
export const RESTORE_CRASH_POINTS = [
  'cluster:restore-step-written',
  'cluster:restore-member-deleted',
] as const;

/** The NOSPACE recovery's crash points (shared/reconcile/cluster-space.ts). */
export const SPACE_CRASH_POINTS = ['cluster:space-compacted', 'cluster:member-defragmented'] as const;

/** The ForceNewCluster recovery's crash points (reconcile-cluster); crashed through by test/e2e/recovery-force.test.ts. */
export const FORCE_CRASH_POINTS = ['cluster:force-step-written', 'cluster:force-flag-set'] as const;

/** The defragmentation policy's crash points (shared/reconcile/cluster-defrag.ts); crashed through by test/e2e/crash-space.test.ts. */
export const DEFRAG_CRASH_POINTS = ['cluster:defrag-claimed', 'cluster:defrag-member-done'] as const;

export type CrashPoint =
  | (typeof FORCE_CRASH_POINTS)[number]
  | (typeof DEFRAG_CRASH_POINTS)[number]
  | (typeof SPACE_CRASH_POINTS)[number]
  | (typeof CRASH_POINTS)[number]
  | (typeof SNAPSHOT_CRASH_POINTS)[number]
  | (typeof RESTORE_CRASH_POINTS)[number];

export interface CrashOptions {
  /** The directory of armed points; undefined = crash injection off. */
  dir: string | undefined;
  /** How to die (tests pass their own). */
  kill?: () => void;
  /** Where the last words go (stderr by default: synchronous, so they are not lost). */
  say?: (line: string) => void;
}

const die = () => {
  process.kill(process.pid, 'SIGKILL');
};
const stderr = (line: string) => {
  writeSync(2, `${line}\n`);
};

/**
 * A crash point bound to options. Returns whether it fired (only ever observable with an injected
 * `kill`: the real one does not return).
 */
export function crashPointWith(options: CrashOptions): (name: CrashPoint) => Promise<boolean> {
  return name => {
    if (!options.dir) return Promise.resolve(false);
    try {
      // Deleting the file is the test-and-clear: of two invocations racing here, one fires.
      unlinkSync(join(options.dir, name));
    } catch {
      return Promise.resolve(false);
    }
    (options.say ?? stderr)(
      JSON.stringify({ level: 50, msg: 'crash point: killing the process', point: name }),
    );
    (options.kill ?? die)();
    return Promise.resolve(true);
  };
}

/**
 * Call right after a side effect. A no-op unless $ETCDFN_CRASH_DIR is set and holds a file named
 * `name`: then the file is deleted and the process killed with SIGKILL.
 */
export async function crashPoint(name: CrashPoint): Promise<void> {
  const dir = process.env.ETCDFN_CRASH_DIR;
  if (!dir) return;
  // SIGKILL to oneself takes effect at once; never let the step run on meanwhile.
  if (await crashPointWith({ dir })(name)) await new Promise<never>(() => {});
}
