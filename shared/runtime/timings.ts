// How long snapshots and schedules may take, from the function's environment (the chart sets these);
// read here, at the edge, so the plans stay pure and take the figures as part of their state.
import type { ScheduleTimings } from '../plan/schedule/types.ts';
import type { SnapshotTimings } from '../plan/snapshot/types.ts';

export function scheduleTimingsFromEnv(env: NodeJS.ProcessEnv = process.env): ScheduleTimings {
  const value = Number(env.ETCDFN_SCHEDULE_STARTING_DEADLINE_SECONDS);
  return { startingDeadlineMs: (Number.isFinite(value) && value > 0 ? value : 300) * 1000 };
}

export function snapshotTimingsFromEnv(env: NodeJS.ProcessEnv = process.env): SnapshotTimings {
  const seconds = (name: string, fallback: number) => {
    const value = Number(env[name]);
    return (Number.isFinite(value) && value > 0 ? value : fallback) * 1000;
  };
  // The attempt timeout stays below run-snapshot's Knative request timeout (600 s), so an attempt
  // is over, one way or the other, before anyone may call it stale.
  const attemptTimeoutMs = seconds('ETCDFN_SNAPSHOT_ATTEMPT_TIMEOUT_SECONDS', 540);
  return {
    attemptTimeoutMs,
    staleAfterMs: attemptTimeoutMs + seconds('ETCDFN_SNAPSHOT_STALE_GRACE_SECONDS', 60),
    retryDelayMs: seconds('ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS', 30),
    deadlineMs: seconds('ETCDFN_SNAPSHOT_DEADLINE_SECONDS', 3600),
  };
}
