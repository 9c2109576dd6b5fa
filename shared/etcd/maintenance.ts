// Space and health maintenance: alarms, compaction, defragmentation, a linearizable health read.
// The calls a NOSPACE recovery needs (compact to the current revision, defragment one member at a
// time, then disarm), each with a typed outcome like the rest of the adapter.
import type { CallFailure } from './errors.ts';
import { callEndpoint, callFailure, callFirstAvailable } from './connection.ts';
import type { EtcdConnectionOptions } from './connection.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { toDecimalId, toHexId } from './ids.ts';

/** The alarms etcd raises: the database reached its quota, or members disagree on their data. */
export type AlarmKind = 'NOSPACE' | 'CORRUPT';

export interface Alarm {
  /** The member that raised it (hex). */
  memberId: string;
  alarm: AlarmKind;
}

export type AlarmsResult = { kind: 'ok'; alarms: Alarm[] } | CallFailure;
export type CompactResult = { kind: 'ok'; revision: number; alreadyCompacted: boolean } | CallFailure;
export type DefragmentResult = { kind: 'ok' } | CallFailure;
export type HealthResult = { kind: 'ok'; revision: number } | CallFailure;

/** Defragmentation rewrites the whole database file: give it far longer than an ordinary call. */
export const DEFRAGMENT_TIMEOUT_MS = 120_000;

const ALARM_NAMES: Record<string, AlarmKind | undefined> = { Nospace: 'NOSPACE', Corrupt: 'CORRUPT' };
const PROTO_ALARM: Record<AlarmKind, 'Nospace' | 'Corrupt'> = { NOSPACE: 'Nospace', CORRUPT: 'Corrupt' };

/** Every active alarm of the cluster (alarms are replicated: any member answers for all). */
export async function listAlarms(
  endpoints: readonly string[],
  options: EtcdConnectionOptions = {},
): Promise<AlarmsResult> {
  const result = await callFirstAvailable(endpoints, options, client =>
    client.maintenance.alarm({ action: 'Get', memberID: 0, alarm: 'None' }),
  );
  if (result.kind !== 'ok') return callFailure(result);
  const alarms: Alarm[] = [];
  for (const a of result.value.alarms) {
    const alarm = ALARM_NAMES[a.alarm];
    if (alarm) alarms.push({ memberId: toHexId(a.memberID), alarm });
  }
  return { kind: 'ok', alarms };
}

/**
 * Clears one alarm. etcd raises NOSPACE again on the next write if the database is still over its
 * quota, so compact and defragment first.
 */
export async function disarmAlarm(
  endpoints: readonly string[],
  alarm: Alarm,
  options: EtcdConnectionOptions = {},
): Promise<AlarmsResult> {
  const result = await callFirstAvailable(endpoints, options, client =>
    client.maintenance.alarm({
      action: 'Deactivate',
      memberID: toDecimalId(alarm.memberId),
      alarm: PROTO_ALARM[alarm.alarm],
    }),
  );
  if (result.kind !== 'ok') return callFailure(result);
  return listAlarms(endpoints, options);
}

/**
 * Drops the history before `revision` (default: the current revision), waiting until the member
 * has physically applied it. Compacting to a revision already compacted is not a failure.
 */
export async function compact(
  endpoints: readonly string[],
  revision?: number,
  options: EtcdConnectionOptions = {},
): Promise<CompactResult> {
  let target = revision;
  if (target === undefined) {
    const health = await healthRead(endpoints, options);
    if (health.kind !== 'ok') return health;
    target = health.revision;
  }
  const at = target;
  const result = await callFirstAvailable(endpoints, options, client =>
    client.kv.compact({ revision: String(at), physical: true }),
  );
  if (result.kind === 'ok') return { kind: 'ok', revision: at, alreadyCompacted: false };
  if (/required revision has been compacted/i.test(result.message)) {
    return { kind: 'ok', revision: at, alreadyCompacted: true };
  }
  return callFailure(result);
}

/** Rewrites one member's database file to give back the space compaction freed. */
export async function defragment(
  endpoint: string,
  options: EtcdConnectionOptions = {},
): Promise<DefragmentResult> {
  const result = await callEndpoint(
    endpoint,
    { ...options, timeoutMs: Math.max(options.timeoutMs ?? 0, DEFRAGMENT_TIMEOUT_MS) },
    client => client.maintenance.defragment(),
  );
  return result.kind === 'ok' ? { kind: 'ok' } : callFailure(result);
}

/**
 * A linearizable read through one member, as `etcdctl endpoint health` does it: it succeeds only
 * when that member can reach a quorum. Returns the cluster's current revision.
 */
export async function healthRead(
  endpoints: readonly string[],
  options: EtcdConnectionOptions = {},
): Promise<HealthResult> {
  const result = await callFirstAvailable(endpoints, options, client =>
    client.kv.range({ key: Buffer.from('health'), serializable: false }),
  );
  if (result.kind !== 'ok') return callFailure(result);
  return { kind: 'ok', revision: Number(result.value.header.revision) };
}

/**
 * Waits until `read` (a healthRead of one member) succeeds, asking every half second for at most
 * `timeoutMs`; false when it never did. After a defragmentation, before the next member's.
 */
export async function untilServing(read: () => Promise<HealthResult>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await read()).kind === 'ok') return true;
    if (Date.now() > deadline) return false;
    await sleep(500);
  }
}
