// The member's short record of its etcd container's exits in the current Pod (status.restarts),
// so that "crash-looping" means what it says: CRASH_LOOP_RESTARTS exits with the same exit code
// within CRASH_LOOP_WINDOW_MS. A Pod's status only ever shows the last exit, so each exit is noted
// as it is seen (every restart changes the Pod's status, which brings an event); the record holds
// the newest few, starts again with a new Pod, and changes only when a new exit is seen, so a
// steady member writes nothing. An exit whose event was lost is missing from the record: the loop
// is then called one exit later, never earlier. Pure.
import type { V1ContainerStateTerminated, V1Pod } from '@kubernetes/client-node';
import type { MemberRestarts } from '../../api/etcd-member.ts';
import { ETCD_CONTAINER } from '../../builders/pod.ts';

/** Exits with the same code within the window after which a Pod is reported as crash-looping. */
export const CRASH_LOOP_RESTARTS = 5;
/** The window those exits must fall in (the "5 restarts in 10 minutes"). */
export const CRASH_LOOP_WINDOW_MS = 10 * 60 * 1000;

/** The record after seeing `pod`: the previous one, extended, restarted, or undefined (no exit yet). */
export function recordRestarts(
  previous: MemberRestarts | undefined,
  pod: V1Pod | undefined,
): MemberRestarts | undefined {
  const uid = pod?.metadata?.uid;
  const status = pod?.status?.containerStatuses?.find(c => c.name === ETCD_CONTAINER);
  if (!pod || !uid || !status) return previous;
  const kept = previous?.podUID === uid ? previous : undefined;
  const exit = lastExit(status.state?.terminated, status.lastState?.terminated);
  if (!exit) return kept;
  if (kept?.exits.some(e => e.at === exit.at)) {
    return kept.restartCount === status.restartCount ? kept : { ...kept, restartCount: status.restartCount };
  }
  const exits = [...(kept?.exits ?? []), exit].slice(-CRASH_LOOP_RESTARTS);
  return { podUID: uid, restartCount: status.restartCount, exits };
}

function lastExit(
  ...seen: (V1ContainerStateTerminated | undefined)[]
): { at: string; exitCode: number } | undefined {
  const t = seen.find(x => x?.finishedAt !== undefined);
  if (!t?.finishedAt) return undefined;
  return { at: new Date(t.finishedAt).toISOString(), exitCode: t.exitCode };
}

/**
 * Whether the record shows a crash loop: the newest CRASH_LOOP_RESTARTS exits all failed (non-zero)
 * with the same code, the first of them at most CRASH_LOOP_WINDOW_MS before the last.
 */
export function isCrashLoop(record: MemberRestarts | undefined): boolean {
  const exits = record?.exits.slice(-CRASH_LOOP_RESTARTS) ?? [];
  if (exits.length < CRASH_LOOP_RESTARTS) return false;
  const code = exits[0].exitCode;
  if (code === 0 || exits.some(e => e.exitCode !== code)) return false;
  const span = Date.parse(exits.at(-1)!.at) - Date.parse(exits[0].at);
  return span <= CRASH_LOOP_WINDOW_MS;
}
