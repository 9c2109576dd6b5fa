// The EtcdSnapshotSchedule planner: when a run is due, what it creates, what retention deletes, and
// what status says. Pure, so every case is a table row with its own `now`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdSnapshot, SnapshotPhase } from '../../shared/api/etcd-snapshot.ts';
import type {
  EtcdSnapshotSchedule,
  EtcdSnapshotScheduleSpec,
  EtcdSnapshotScheduleStatus,
} from '../../shared/api/etcd-snapshot-schedule.ts';
import { findCondition } from '../../shared/conditions.ts';
import { ownerOf, snapshotTarget } from '../../shared/s3/location.ts';
import { planRetentionResult, planSchedule } from '../../shared/plan/schedule/plan.ts';
import { isOwnedBy, owningSchedule, runSnapshotName } from '../../shared/plan/schedule/run.ts';
import { parseCadence } from '../../shared/plan/schedule/cadence.ts';
import { FAILED_KEPT, type SchedulePlan, type ScheduleState } from '../../shared/plan/schedule/types.ts';
import { scheduleTimingsFromEnv } from '../../shared/runtime/timings.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const CREATED = new Date('2026-11-22T08:00:30Z');
const T = (iso: string) => new Date(iso);
const TIMINGS = { startingDeadlineMs: 5 * 60_000 };
const DEST = {
  s3: {
    endpoint: 'http://minio.backup.svc:9000',
    bucket: 'etcd',
    key: 'prod/',
    credentialsSecretRef: { name: 'backup-creds' },
  },
};

function schedule(
  spec: Partial<EtcdSnapshotScheduleSpec> = {},
  status?: EtcdSnapshotScheduleStatus,
  deleting = false,
): EtcdSnapshotSchedule {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshotSchedule',
    metadata: {
      name: 'nightly',
      namespace: 'prod',
      uid: 'sched-uid',
      generation: 2,
      resourceVersion: '10',
      creationTimestamp: CREATED,
      ...(deleting && { deletionTimestamp: CREATED }),
    },
    spec: {
      clusterRef: { name: 'demo' },
      schedule: '0 3 * * *',
      destination: DEST,
      retention: { keepLast: 7 },
      suspend: false,
      ...spec,
    },
    ...(status && { status }),
  };
}

const CLUSTER = etcdCluster({ metadata: { uid: 'cluster-uid' } });

/** A snapshot of the schedule for the run at `run`, created then, in `phase`. */
function snap(
  run: string,
  phase?: SnapshotPhase,
  opts: { deleting?: boolean; reason?: string; unverified?: boolean; noEtag?: boolean } = {},
): EtcdSnapshot {
  const time = T(run);
  const done = new Date(time.getTime() + 20_000).toISOString().replace('.000', '');
  const made = made_(run, time, phase, opts, done);
  if (phase !== 'Complete') return made;
  // Complete: verified (unless told otherwise), with the object recorded at its own key.
  const uri = snapshotTarget(DEST.s3, ownerOf(made)).uri;
  made.status = {
    ...made.status,
    artifact: { uri, sizeBytes: 4128, ...(!opts.noEtag && { etag: `"etag-${run}"` }) },
    conditions: opts.unverified
      ? []
      : [
          {
            type: 'Verified',
            status: 'True',
            reason: 'ReadBackVerified',
            message: 'ok',
            lastTransitionTime: done,
          },
        ],
  };
  return made;
}

function made_(
  run: string,
  time: Date,
  phase: SnapshotPhase | undefined,
  opts: { deleting?: boolean; reason?: string },
  done: string,
): EtcdSnapshot {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: {
      name: runSnapshotName('nightly', time),
      namespace: 'prod',
      uid: `uid-${run}`,
      creationTimestamp: time,
      annotations: { 'etcdfn.io/scheduled-time': run },
      ownerReferences: [
        { apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdSnapshotSchedule', name: 'nightly', uid: 'sched-uid' },
      ],
      ...(opts.deleting && { deletionTimestamp: time }),
    },
    spec: { clusterRef: { name: 'demo' }, destination: DEST },
    ...(phase && {
      status: {
        phase,
        ...((phase === 'Complete' || phase === 'Failed') && { completionTime: done }),
        ...(phase === 'Failed' && {
          conditions: [
            {
              type: 'Ready',
              status: 'False' as const,
              reason: opts.reason ?? 'UploadRefused',
              message: 'S3 refused',
              lastTransitionTime: done,
            },
          ],
        }),
      },
    }),
  };
}

function plan(
  now: string,
  s: EtcdSnapshotSchedule = schedule(),
  snapshots: EtcdSnapshot[] = [],
  extra: Partial<ScheduleState> = {},
): SchedulePlan {
  return planSchedule({ now: T(now), schedule: s, cluster: CLUSTER, snapshots, timings: TIMINGS, ...extra });
}

const ready = (p: SchedulePlan) => findCondition(p.status.conditions, 'Ready');
/** The schedule as it is after the plan's status was written. */
const after = (s: EtcdSnapshotSchedule, p: SchedulePlan): EtcdSnapshotSchedule => ({
  ...s,
  status: p.status,
});

describe('planSchedule: when a run is due', () => {
  it('not due: nothing created; status says the next run, in UTC', () => {
    const p = plan('2026-11-22T10:02:00Z');
    assert.equal(p.create, undefined);
    assert.equal(p.status.nextScheduleTime, '2026-11-23T03:00:00Z');
    assert.equal(p.status.lastScheduleTime, undefined);
    assert.equal(ready(p)?.status, 'True');
    assert.equal(ready(p)?.reason, 'Scheduled');
    assert.match(ready(p)!.message, /"0 3 \* \* \*" \(UTC\): the next run is at 2026-11-23T03:00:00Z/);
    assert.equal(p.status.observedGeneration, 2);
    assert.ok(p.statusChanged);
  });

  it('steady state: the same answer a minute later writes nothing', () => {
    const s = schedule();
    const first = plan('2026-11-22T10:02:00Z', s);
    const again = plan('2026-11-22T10:03:00Z', after(s, first));
    assert.equal(again.statusChanged, false);
    assert.equal(again.create, undefined);
    assert.deepEqual(again.events, []);
  });

  it('due: creates the run’s snapshot, named after the schedule and the run time, owned and labelled', () => {
    const s = schedule({ schedule: '*/5 * * * *' });
    const p = plan('2026-11-22T10:05:20Z', s);
    assert.ok(p.create);
    assert.equal(p.create.metadata.name, 'nightly-202611221005');
    assert.equal(p.create.metadata.namespace, 'prod');
    assert.deepEqual(p.create.metadata.ownerReferences, [
      {
        apiVersion: 'etcdfn.io/v1alpha1',
        kind: 'EtcdSnapshotSchedule',
        name: 'nightly',
        uid: 'sched-uid',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.equal(p.create.metadata.labels?.['etcdfn.io/cluster'], 'demo');
    assert.equal(p.create.metadata.labels?.['etcdfn.io/schedule'], 'nightly');
    assert.equal(p.create.metadata.annotations?.['etcdfn.io/scheduled-time'], '2026-11-22T10:05:00Z');
    assert.deepEqual(p.create.spec, { clusterRef: { name: 'demo' }, destination: DEST });
    // The claim: status names the run before the snapshot exists.
    assert.equal(p.status.lastScheduleTime, '2026-11-22T10:05:00Z');
    assert.deepEqual(p.status.active, ['nightly-202611221005']);
    assert.equal(p.status.nextScheduleTime, '2026-11-22T10:10:00Z');
    assert.ok(p.statusChanged);
    assert.deepEqual(
      p.events.map(e => e.reason),
      ['SnapshotScheduled'],
    );
    assert.ok(isOwnedBy(p.create, 'sched-uid'));
    assert.equal(owningSchedule(p.create), 'nightly');
  });

  it('a run at exactly `now` is due; a run before the schedule existed is not', () => {
    const s = schedule({ schedule: '*/5 * * * *' });
    assert.equal(plan('2026-11-22T10:05:00Z', s).create?.metadata.name, 'nightly-202611221005');
    // Created 08:00:30: the run at 08:00 is older than the schedule.
    assert.equal(plan('2026-11-22T08:01:00Z', schedule({ schedule: '0 * * * *' })).create, undefined);
  });

  it('duplicate and parallel invocations decide on the same name; an existing snapshot is not created again', () => {
    const s = schedule({ schedule: '*/5 * * * *' });
    const a = plan('2026-11-22T10:05:20Z', s);
    const b = plan('2026-11-22T10:05:40Z', s);
    assert.equal(a.create?.metadata.name, b.create?.metadata.name);
    // The snapshot exists but status lags (the status write was lost): no second create, and status catches up.
    const existing = snap('2026-11-22T10:05:00Z');
    const c = plan('2026-11-22T10:06:00Z', s, [existing]);
    assert.equal(c.create, undefined);
    assert.equal(c.status.lastScheduleTime, '2026-11-22T10:05:00Z');
    assert.deepEqual(c.status.active, ['nightly-202611221005']);
    // And once status has it, nothing more happens.
    const d = plan('2026-11-22T10:07:00Z', after(s, c), [existing]);
    assert.equal(d.create, undefined);
    assert.equal(d.statusChanged, false);
  });

  it('a claim whose snapshot was never created (crash in between) is created on the next invocation, within the deadline', () => {
    const s = schedule({ schedule: '*/5 * * * *' });
    const claimed = after(s, plan('2026-11-22T10:05:20Z', s));
    const retry = plan('2026-11-22T10:06:00Z', claimed);
    assert.equal(retry.create?.metadata.name, 'nightly-202611221005');
    assert.equal(retry.statusChanged, false);
    // Too late: not created any more.
    const late = plan('2026-11-22T10:11:00Z', claimed);
    assert.notEqual(late.create?.metadata.name, 'nightly-202611221005');
  });
});

describe('planSchedule: missed runs are never caught up beyond the most recent', () => {
  it('after an outage, only the most recent run is taken when it is within the starting deadline', () => {
    const s = schedule({ schedule: '* * * * *' }, { lastScheduleTime: '2026-11-22T08:02:00Z' });
    const p = plan('2026-11-22T10:02:30Z', s);
    assert.equal(p.create?.metadata.name, 'nightly-202611221002');
    assert.equal(p.status.lastScheduleTime, '2026-11-22T10:02:00Z');
    // Two hours of minutes were missed; exactly one snapshot is created.
    assert.deepEqual(
      p.events.map(e => e.reason),
      ['SnapshotScheduled'],
    );
  });

  it('a daily run seen 3 days late takes today’s run only', () => {
    const s = schedule({}, { lastScheduleTime: '2026-11-19T03:00:00Z' });
    s.metadata.creationTimestamp = T('2026-11-01T00:00:00Z');
    assert.equal(plan('2026-11-22T03:02:00Z', s).create?.metadata.name, 'nightly-202611220300');
  });

  it('a run later than the starting deadline is skipped and recorded, with the next run', () => {
    const s = schedule({ schedule: '0 * * * *' }, { lastScheduleTime: '2026-11-22T09:00:00Z' });
    const p = plan('2026-11-22T10:07:00Z', s);
    assert.equal(p.create, undefined);
    assert.equal(p.status.lastScheduleTime, '2026-11-22T09:00:00Z');
    assert.equal(ready(p)?.status, 'False');
    assert.equal(ready(p)?.reason, 'MissedRun');
    assert.match(
      ready(p)!.message,
      /the run at 2026-11-22T10:00:00Z was skipped: nothing started it within 5 minutes/,
    );
    assert.match(ready(p)!.message, /the next run is at 2026-11-22T11:00:00Z/);
    assert.deepEqual(
      p.events.map(e => e.reason),
      ['RunMissed'],
    );
    // Recorded once: the next tick writes nothing and records no second Event.
    const again = plan('2026-11-22T10:08:00Z', after(s, p));
    assert.equal(again.statusChanged, false);
    assert.deepEqual(again.events, []);
    // The next run is taken as usual and Ready again.
    const next = plan('2026-11-22T11:00:10Z', after(s, p));
    assert.equal(next.create?.metadata.name, 'nightly-202611221100');
    assert.equal(ready(next)?.status, 'True');
  });

  it('the starting deadline comes from ETCDFN_SCHEDULE_STARTING_DEADLINE_SECONDS (default 300 s)', () => {
    assert.equal(scheduleTimingsFromEnv({}).startingDeadlineMs, 300_000);
    assert.equal(
      scheduleTimingsFromEnv({ ETCDFN_SCHEDULE_STARTING_DEADLINE_SECONDS: '3600' }).startingDeadlineMs,
      3_600_000,
    );
    assert.equal(
      scheduleTimingsFromEnv({ ETCDFN_SCHEDULE_STARTING_DEADLINE_SECONDS: 'x' }).startingDeadlineMs,
      300_000,
    );
  });
});

describe('planSchedule: runs never overlap', () => {
  const s = schedule({ schedule: '*/5 * * * *' }, { lastScheduleTime: '2026-11-22T10:00:00Z' });
  const running = snap('2026-11-22T10:00:00Z', 'Started');

  it('a run due while the previous snapshot is unfinished waits for it', () => {
    const p = plan('2026-11-22T10:05:10Z', s, [running]);
    assert.equal(p.create, undefined);
    assert.equal(ready(p)?.reason, 'PreviousRunActive');
    assert.match(ready(p)!.message, /waits for EtcdSnapshot nightly-202611221000 to finish/);
    assert.deepEqual(p.status.active, ['nightly-202611221000']);
  });
  it('and is taken once it finishes within the deadline', () => {
    const p = plan('2026-11-22T10:07:00Z', s, [snap('2026-11-22T10:00:00Z', 'Complete')]);
    assert.equal(p.create?.metadata.name, 'nightly-202611221005');
  });
  it('or skipped, saying why, when the deadline passes first', () => {
    const p = plan('2026-11-22T10:09:30Z', schedule({ schedule: '*/10 * * * *' }, s.status), [running]);
    // */10: the run at 10:00 is the one running; nothing is due.
    assert.equal(p.create, undefined);
    const q = plan('2026-11-22T10:05:10Z', schedule({ schedule: '*/5 * * * *' }, s.status), [running], {
      timings: { startingDeadlineMs: 5_000 },
    });
    assert.equal(q.create, undefined);
    assert.equal(ready(q)?.reason, 'MissedRun');
    assert.match(ready(q)!.message, /EtcdSnapshot nightly-202611221000 was still unfinished/);
  });
});

describe('planSchedule: time zones and cron forms', () => {
  it('spec.timeZone: 03:00 in Europe/Berlin (UTC+1 in November) is 02:00Z; the name is in UTC', () => {
    const s = schedule({ timeZone: 'Europe/Berlin' });
    const p = plan('2026-11-23T02:00:10Z', s);
    assert.equal(p.create?.metadata.name, 'nightly-202611230200');
    assert.equal(p.status.nextScheduleTime, '2026-11-24T02:00:00Z');
    assert.match(ready(p)!.message, /took the run at 2026-11-23T02:00:00Z/);
    // 03:00 UTC is not a run in Berlin.
    assert.equal(plan('2026-11-23T03:00:10Z', after(s, p)).create, undefined);
  });

  it('America/New_York (UTC-5 in November)', () => {
    const p = plan('2026-11-22T10:02:00Z', schedule({ timeZone: 'America/New_York' }));
    assert.equal(p.status.nextScheduleTime, '2026-11-23T08:00:00Z');
    assert.match(ready(p)!.message, /"0 3 \* \* \*" in America\/New_York/);
  });

  it('DST: 02:30 in Berlin on the spring-forward day runs at 03:00 local, once; on the fall-back day once', () => {
    const spring = parseCadence('30 2 * * *', 'Europe/Berlin');
    assert.ok(typeof spring !== 'string');
    assert.equal(spring.next(T('2026-03-28T12:00:00Z'))?.toISOString(), '2026-03-29T01:00:00.000Z');
    assert.equal(spring.next(T('2026-03-29T01:00:00Z'))?.toISOString(), '2026-03-30T00:30:00.000Z');
    assert.equal(spring.next(T('2026-10-24T12:00:00Z'))?.toISOString(), '2026-10-25T00:30:00.000Z');
    assert.equal(spring.next(T('2026-10-25T00:30:00Z'))?.toISOString(), '2026-10-26T01:30:00.000Z');
  });

  it('macros, @every (counted from the epoch, UTC) and cron extensions', () => {
    const cases: [string, string, string][] = [
      ['@hourly', '2026-11-22T10:02:00Z', '2026-11-22T11:00:00Z'],
      ['@daily', '2026-11-22T10:02:00Z', '2026-11-23T00:00:00Z'],
      ['@weekly', '2026-11-22T10:02:00Z', '2026-11-29T00:00:00Z'],
      ['@every 6h', '2026-11-22T10:02:00Z', '2026-11-22T12:00:00Z'],
      ['@every 1h30m', '2026-11-22T10:02:00Z', '2026-11-22T10:30:00Z'],
      ['@every 7m', '2026-11-22T10:02:00Z', '2026-11-22T10:08:00Z'],
      ['0 0 1 * *', '2026-11-22T10:02:00Z', '2026-12-01T00:00:00Z'],
      ['0 0 * * MON', '2026-11-22T10:02:00Z', '2026-11-23T00:00:00Z'],
    ];
    for (const [cron, now, next] of cases) {
      const p = plan(now, schedule({ schedule: cron }));
      assert.equal(p.status.nextScheduleTime, next, cron);
    }
    // Cron extensions croner has and Knative's PingSource refuses (L, W, #) are refused here too.
    assert.equal(
      ready(plan('2026-11-22T10:02:00Z', schedule({ schedule: '0 0 L * *' })))?.reason,
      'InvalidSchedule',
    );
    assert.equal(
      plan('2026-11-22T12:00:30Z', schedule({ schedule: '@every 6h' })).create?.metadata.name,
      'nightly-202611221200',
    );
  });

  it('schedules that pass the CRD’s shape check but cannot run say so, and create nothing', () => {
    const cases: [Partial<EtcdSnapshotScheduleSpec>, RegExp][] = [
      [{ schedule: '99 * * * *' }, /schedule "99 \* \* \* \*" cannot be used: .*minute/],
      [{ schedule: '@every 0m' }, /interval of zero; use at least "@every 1m"/],
      [{ timeZone: 'Mars/Olympus_Mons' }, /timeZone "Mars\/Olympus_Mons" is not a known IANA time zone/],
    ];
    for (const [spec, message] of cases) {
      const p = plan('2026-11-22T03:00:10Z', schedule(spec));
      assert.equal(p.create, undefined);
      assert.equal(ready(p)?.status, 'False');
      assert.equal(ready(p)?.reason, 'InvalidSchedule');
      assert.match(ready(p)!.message, message);
      assert.match(ready(p)!.message, /no snapshots are taken until it is fixed/);
      assert.equal(p.status.nextScheduleTime, undefined);
    }
  });

  it('a cron that names no date (Feb 31) never runs and says so', () => {
    const p = plan('2026-11-22T10:02:00Z', schedule({ schedule: '0 0 31 2 *' }));
    assert.equal(p.create, undefined);
    assert.equal(p.status.nextScheduleTime, undefined);
    assert.match(ready(p)!.message, /names no future time/);
  });
});

describe('planSchedule: suspend', () => {
  it('suspended: nothing is created, status says so and how to resume; no next run', () => {
    const s = schedule(
      { schedule: '*/5 * * * *', suspend: true },
      { nextScheduleTime: '2026-11-22T10:05:00Z' },
    );
    const p = plan('2026-11-22T10:05:10Z', s);
    assert.equal(p.create, undefined);
    assert.equal(ready(p)?.status, 'False');
    assert.equal(ready(p)?.reason, 'Suspended');
    assert.match(ready(p)!.message, /set it to false to resume/);
    assert.equal(findCondition(p.status.conditions, 'Suspended')?.status, 'True');
    assert.equal(p.status.nextScheduleTime, undefined);
  });

  it('resumed: runs that fell due while suspended are not caught up; the next one is taken', () => {
    const s = schedule(
      { schedule: '*/5 * * * *', suspend: true },
      { lastScheduleTime: '2026-11-22T09:00:00Z' },
    );
    const suspended = after(s, plan('2026-11-22T09:02:00Z', s));
    const resumedSpec = { ...suspended, spec: { ...suspended.spec, suspend: false } };
    const resumed = plan('2026-11-22T10:05:20Z', resumedSpec);
    assert.equal(resumed.create, undefined, 'the run at 10:05 fell due while suspended');
    assert.equal(findCondition(resumed.status.conditions, 'Suspended')?.status, 'False');
    assert.equal(ready(resumed)?.reason, 'Scheduled');
    const next = plan('2026-11-22T10:10:05Z', after(resumedSpec, resumed));
    assert.equal(next.create?.metadata.name, 'nightly-202611221010');
  });

  it('retention still applies while suspended', () => {
    const s = schedule({ suspend: true, retention: { keepLast: 1 } });
    const p = plan('2026-11-22T10:02:00Z', s, [
      snap('2026-11-20T03:00:00Z', 'Complete'),
      snap('2026-11-21T03:00:00Z', 'Complete'),
    ]);
    assert.deepEqual(
      p.deletions.map(d => d.name),
      ['nightly-202611200300'],
    );
  });
});

describe('planSchedule: the cluster', () => {
  it('missing: nothing is created, and status names the cluster and the namespace', () => {
    const p = plan('2026-11-22T03:00:10Z', schedule(), [], { cluster: undefined });
    assert.equal(p.create, undefined);
    assert.equal(ready(p)?.status, 'False');
    assert.equal(ready(p)?.reason, 'ClusterNotFound');
    assert.match(
      ready(p)!.message,
      /EtcdCluster demo not found in namespace prod; no snapshots are taken until it exists/,
    );
    assert.match(ready(p)!.message, /the next run is at 2026-11-23T03:00:00Z/);
  });
  it('being deleted: nothing is created', () => {
    const deleting = { ...CLUSTER, metadata: { ...CLUSTER.metadata, deletionTimestamp: CREATED } };
    const p = plan('2026-11-22T03:00:10Z', schedule(), [], { cluster: deleting });
    assert.equal(p.create, undefined);
    assert.equal(ready(p)?.reason, 'ClusterDeleted');
  });
  it('a schedule being deleted does nothing (its snapshots go with it)', () => {
    const p = plan('2026-11-22T03:00:10Z', schedule({}, undefined, true), [
      snap('2026-11-01T03:00:00Z', 'Complete'),
    ]);
    assert.equal(p.create, undefined);
    assert.deepEqual(p.deletions, []);
    assert.equal(p.statusChanged, false);
  });
});

describe('planSchedule: retention', () => {
  const days = (n: number, phase: SnapshotPhase) =>
    Array.from({ length: n }, (_, i) => snap(`2026-11-${String(10 + i).padStart(2, '0')}T03:00:00Z`, phase));

  it('deletes the oldest Complete snapshots beyond keepLast (by run time, whatever the list order), with their S3 object', () => {
    const nine = days(9, 'Complete').reverse();
    const p = plan('2026-11-22T10:02:00Z', schedule(), nine);
    assert.deepEqual(
      p.deletions.map(d => [d.name, d.s3Object]),
      [
        ['nightly-202611110300', true],
        ['nightly-202611100300', true],
      ],
    );
    assert.match(p.deletions[0].why, /beyond retention.keepLast 7/);
  });

  it('keepLast defaults to 7; nothing to delete at or below it', () => {
    assert.equal(
      plan('2026-11-22T10:02:00Z', schedule({ retention: {} }), days(8, 'Complete')).deletions.length,
      1,
    );
    assert.deepEqual(plan('2026-11-22T10:02:00Z', schedule(), days(7, 'Complete')).deletions, []);
  });

  it('never deletes an unfinished snapshot, however old', () => {
    const old = [
      snap('2026-11-01T03:00:00Z', 'Pending'),
      snap('2026-11-02T03:00:00Z', 'Started'),
      snap('2026-11-03T03:00:00Z'),
    ];
    const p = plan('2026-11-22T10:02:00Z', schedule({ retention: { keepLast: 1 } }), [
      ...old,
      ...days(3, 'Complete'),
    ]);
    assert.deepEqual(
      p.deletions.map(d => d.name),
      ['nightly-202611110300', 'nightly-202611100300'],
    );
    assert.deepEqual(p.status.active, old.map(s => s.metadata.name).sort());
  });

  it('Failed: deleted once a later run succeeded (no object to delete)', () => {
    const p = plan('2026-11-22T10:02:00Z', schedule(), [
      snap('2026-11-20T03:00:00Z', 'Failed'),
      snap('2026-11-21T03:00:00Z', 'Complete'),
    ]);
    assert.deepEqual(
      p.deletions.map(d => [d.name, d.s3Object]),
      [['nightly-202611200300', false]],
    );
    assert.match(p.deletions[0].why, /a later run \(EtcdSnapshot nightly-202611210300\) succeeded/);
  });

  it(`Failed since the last success: the newest ${FAILED_KEPT} stay so a person can read why, older ones go`, () => {
    const p = plan('2026-11-22T10:02:00Z', schedule(), [
      snap('2026-11-09T03:00:00Z', 'Complete'),
      ...days(5, 'Failed'),
    ]);
    assert.deepEqual(
      p.deletions.map(d => d.name),
      ['nightly-202611110300', 'nightly-202611100300'],
    );
    // With no success at all, the failures are kept too (up to the bound).
    assert.deepEqual(plan('2026-11-22T10:02:00Z', schedule(), days(2, 'Failed')).deletions, []);
  });

  it('snapshots already being deleted are neither counted nor deleted again', () => {
    const gone = snap('2026-11-09T03:00:00Z', 'Complete', { deleting: true });
    const p = plan('2026-11-22T10:02:00Z', schedule({ retention: { keepLast: 2 } }), [
      gone,
      ...days(2, 'Complete'),
    ]);
    assert.deepEqual(p.deletions, []);
  });

  it('status: lastSuccessfulTime from the newest Complete; Retention says what is kept', () => {
    const p = plan('2026-11-22T10:02:00Z', schedule(), days(2, 'Complete'));
    assert.equal(p.status.lastSuccessfulTime, '2026-11-11T03:00:20Z');
    assert.equal(p.status.lastScheduleTime, '2026-11-11T03:00:00Z');
    const retention = findCondition(p.status.conditions, 'Retention');
    assert.equal(retention?.status, 'True');
    assert.match(
      retention.message,
      /keeping the newest 7 Complete snapshots, and up to 3 Failed ones since the last success/,
    );
  });

  it('a deletion that failed is recorded in Retention, and cleared once it works', () => {
    const s = schedule();
    const failed = planRetentionResult(
      s,
      'S3 refused to delete s3://etcd/prod/x.db: AccessDenied',
      T('2026-11-22T10:00:00Z'),
    );
    assert.ok(failed.statusChanged);
    const c = findCondition(failed.status.conditions, 'Retention');
    assert.equal(c?.status, 'False');
    assert.equal(c?.reason, 'DeleteFailed');
    assert.match(c.message, /AccessDenied/);
    const same = planRetentionResult({ ...s, status: failed.status }, c.message, T('2026-11-22T10:01:00Z'));
    assert.equal(same.statusChanged, false);
    const cleared = planRetentionResult(
      { ...s, status: failed.status },
      undefined,
      T('2026-11-22T10:02:00Z'),
    );
    assert.equal(findCondition(cleared.status.conditions, 'Retention')?.status, 'True');
  });

  it('the last run Failed: Ready stays True but says which snapshot failed and why', () => {
    const p = plan('2026-11-22T10:02:00Z', schedule(), [
      snap('2026-11-21T03:00:00Z', 'Complete'),
      snap('2026-11-22T03:00:00Z', 'Failed', { reason: 'CredentialsInvalid' }),
    ]);
    assert.equal(ready(p)?.status, 'True');
    assert.match(
      ready(p)!.message,
      /the last run, EtcdSnapshot nightly-202611220300, Failed \(CredentialsInvalid\)/,
    );
  });
});

describe('snapshot names', () => {
  it('<schedule>-<yyyymmddhhmm> in UTC', () => {
    assert.equal(runSnapshotName('nightly', T('2026-01-02T03:04:59Z')), 'nightly-202601020304');
  });
  it('a schedule name too long for the suffix says so', () => {
    const long = schedule({ schedule: '* * * * *' });
    long.metadata.name = 'n'.repeat(241);
    const p = plan('2026-11-22T10:02:10Z', long);
    assert.equal(p.create, undefined);
    assert.equal(ready(p)?.reason, 'InvalidSchedule');
    assert.match(ready(p)!.message, /recreate it with a shorter name/);
  });
  it('the schedule label is left out when the name is longer than a label value may be', () => {
    const s = schedule({ schedule: '* * * * *' });
    s.metadata.name = 'n'.repeat(70);
    const p = plan('2026-11-22T10:02:10Z', s);
    assert.equal(p.create?.metadata.labels?.['etcdfn.io/schedule'], undefined);
    assert.equal(p.create?.metadata.labels?.['etcdfn.io/cluster'], 'demo');
  });
});

describe('planSchedule: only verified snapshots are successes', () => {
  const days = (n: number, opts: { unverified?: boolean; noEtag?: boolean } = {}) =>
    Array.from({ length: n }, (_, i) =>
      snap(`2026-11-${String(10 + i).padStart(2, '0')}T03:00:00Z`, 'Complete', opts),
    );

  it('retention passes the recorded ETag of each object it deletes', () => {
    const p = plan('2026-11-22T10:02:00Z', schedule(), days(8));
    assert.deepEqual(
      p.deletions.map(d => [d.name, d.s3Object, d.etag]),
      [['nightly-202611100300', true, '"etag-2026-11-10T03:00:00Z"']],
    );
  });

  it('a snapshot with no recorded ETag loses its EtcdSnapshot but its object is never deleted', () => {
    const p = plan('2026-11-22T10:02:00Z', schedule(), days(8, { noEtag: true }));
    assert.deepEqual(
      p.deletions.map(d => [d.name, d.s3Object, d.etag]),
      [['nightly-202611100300', false, undefined]],
    );
  });

  it('Complete without Verified True (made before verification) is neither a success nor pruned', () => {
    const legacy = days(9, { unverified: true });
    const p = plan('2026-11-22T10:02:00Z', schedule(), legacy);
    assert.deepEqual(p.deletions, []);
    assert.equal(p.status.lastSuccessfulTime, undefined);
  });

  it('keepLast 1: the newest verified snapshot stays, even with newer unverified and Failed ones', () => {
    const s = schedule({ retention: { keepLast: 1 } });
    const verified = days(3);
    const newerUnverified = snap('2026-11-20T03:00:00Z', 'Complete', { unverified: true });
    const newerFailed = snap('2026-11-21T03:00:00Z', 'Failed', { reason: 'VerificationFailed' });
    const p = plan('2026-11-22T10:02:00Z', s, [...verified, newerUnverified, newerFailed]);
    const deleted = p.deletions.map(d => d.name);
    assert.ok(
      !deleted.includes('nightly-202611120300'),
      `the newest verified is kept: ${deleted.join(', ')}`,
    );
    assert.deepEqual(deleted.sort(), ['nightly-202611100300', 'nightly-202611110300']);
    assert.equal(p.status.lastSuccessfulTime, '2026-11-12T03:00:20Z');
  });
});

describe('planSchedule: edges of the run decision', () => {
  it('a starting deadline that is zero, negative or not finite falls back to 300 s', () => {
    for (const value of ['0', '-5', 'Infinity']) {
      assert.equal(
        scheduleTimingsFromEnv({ ETCDFN_SCHEDULE_STARTING_DEADLINE_SECONDS: value }).startingDeadlineMs,
        300_000,
        value,
      );
    }
  });

  it('@every: several digits, surrounding spaces; anything before or after the form is refused', () => {
    const next: [string, string][] = [
      ['@every 12h', '2026-11-22T12:00:00Z'],
      [' @every 6h ', '2026-11-22T12:00:00Z'],
    ];
    for (const [cron, at] of next) {
      assert.equal(
        plan('2026-11-22T10:02:00Z', schedule({ schedule: cron })).status.nextScheduleTime,
        at,
        cron,
      );
    }
    for (const cron of ['x@every 5m', '@every 5m30s']) {
      const p = plan('2026-11-22T10:02:00Z', schedule({ schedule: cron }));
      assert.equal(ready(p)?.reason, 'InvalidSchedule', cron);
      assert.equal(p.status.nextScheduleTime, undefined, cron);
    }
  });

  it('the run a snapshot was made for is its annotation, not when it was created; without one, its creation', () => {
    const late = snap('2026-11-22T10:05:00Z', 'Complete');
    late.metadata.creationTimestamp = T('2026-11-22T10:06:10Z');
    assert.equal(
      plan('2026-11-22T10:07:00Z', schedule(), [late]).status.lastScheduleTime,
      '2026-11-22T10:05:00Z',
    );
    const bare = snap('2026-11-22T10:05:00Z', 'Complete');
    delete bare.metadata.annotations;
    bare.metadata.creationTimestamp = T('2026-11-22T10:06:10Z');
    assert.equal(
      plan('2026-11-22T10:07:00Z', schedule(), [bare]).status.lastScheduleTime,
      '2026-11-22T10:06:10Z',
    );
  });

  it('retention orders by the run, not by when the EtcdSnapshot was created', () => {
    const older = snap('2026-11-22T10:00:00Z', 'Complete');
    older.metadata.creationTimestamp = T('2026-11-22T10:09:00Z');
    const newer = snap('2026-11-22T10:05:00Z', 'Complete');
    const p = plan('2026-11-22T10:12:00Z', schedule({ retention: { keepLast: 1 } }), [older, newer]);
    assert.deepEqual(
      p.deletions.map(d => d.name),
      ['nightly-202611221000'],
    );
  });

  it('a schedule created exactly at a run time does not take that run', () => {
    const s = schedule({ schedule: '0 * * * *' });
    s.metadata.creationTimestamp = T('2026-11-22T08:00:00Z');
    assert.equal(plan('2026-11-22T08:01:00Z', s).create, undefined);
  });

  it('a run already taken and finished is not taken again', () => {
    const s = schedule({ schedule: '*/5 * * * *' }, { lastScheduleTime: '2026-11-22T10:05:00Z' });
    const p = plan('2026-11-22T10:07:00Z', s, [snap('2026-11-22T10:05:00Z', 'Complete')]);
    assert.equal(p.create, undefined);
    assert.deepEqual(p.events, []);
    assert.equal(ready(p)?.reason, 'Scheduled');
  });

  it('a run seen exactly at the starting deadline is still taken', () => {
    const s = schedule({ schedule: '0 * * * *' }, { lastScheduleTime: '2026-11-22T09:00:00Z' });
    const p = plan('2026-11-22T10:05:00Z', s);
    assert.equal(p.create?.metadata.name, 'nightly-202611221000');
    assert.equal(ready(p)?.reason, 'Scheduled');
  });

  it('the name may be 240 characters: its snapshots’ names are then 253', () => {
    const s = schedule({ schedule: '* * * * *' });
    s.metadata.name = 'n'.repeat(240);
    const p = plan('2026-11-22T10:02:10Z', s);
    assert.equal(p.create?.metadata.name?.length, 253);
    assert.equal(ready(p)?.reason, 'Scheduled');
  });

  it('the schedule label is kept for a name of exactly 63 characters', () => {
    const s = schedule({ schedule: '* * * * *' });
    s.metadata.name = 'n'.repeat(63);
    const p = plan('2026-11-22T10:02:10Z', s);
    assert.equal(p.create?.metadata.labels?.['etcdfn.io/schedule'], 'n'.repeat(63));
    assert.equal(p.create?.apiVersion, 'etcdfn.io/v1alpha1');
    assert.equal(p.create?.kind, 'EtcdSnapshot');
  });
});

describe('planSchedule: a cron refused, and a success without a time', () => {
  it('the schedule is read without its surrounding spaces: the refusal quotes it trimmed', () => {
    const p = plan('2026-11-22T10:02:00Z', schedule({ schedule: ' 1 2 3 ' }));
    assert.equal(ready(p)?.reason, 'InvalidSchedule');
    assert.match(ready(p)!.message, /^schedule " 1 2 3 " cannot be used: .*\('1 2 3'\)/);
  });

  it('a verified snapshot whose status lost its completionTime is no success time (not 1970)', () => {
    const s = snap('2026-11-22T03:00:00Z', 'Complete');
    delete s.status!.completionTime;
    const p = plan('2026-11-22T10:02:00Z', schedule(), [s]);
    assert.equal(p.status.lastSuccessfulTime, undefined);
    assert.equal(p.status.lastScheduleTime, '2026-11-22T03:00:00Z');
  });
});

describe('planSchedule: a claim whose snapshot was never created', () => {
  const hourly = (status: EtcdSnapshotScheduleStatus) => schedule({ schedule: '0 * * * *' }, status);
  const claim = { lastScheduleTime: '2026-11-22T10:00:00Z', active: ['nightly-202611221000'] };

  it('is created even when older snapshots of the schedule exist', () => {
    const p = plan('2026-11-22T10:02:00Z', hourly(claim), [snap('2026-11-22T09:00:00Z', 'Complete')]);
    assert.equal(p.create?.metadata.name, 'nightly-202611221000');
    assert.deepEqual(p.events, []);
  });

  it('is created when seen exactly at the starting deadline', () => {
    const p = plan('2026-11-22T10:05:00Z', hourly(claim));
    assert.equal(p.create?.metadata.name, 'nightly-202611221000');
  });

  it('a name in status.active without lastScheduleTime naming its run is not a claim: the run is taken anew', () => {
    const p = plan('2026-11-22T10:02:00Z', hourly({ ...claim, lastScheduleTime: '2026-11-22T09:00:00Z' }));
    assert.equal(p.create?.metadata.name, 'nightly-202611221000');
    assert.equal(p.status.lastScheduleTime, '2026-11-22T10:00:00Z');
    assert.deepEqual(
      p.events.map(e => e.reason),
      ['SnapshotScheduled'],
    );
  });
});

describe('planSchedule: what a person reads', () => {
  it('a schedule being deleted: its status is left as it is, nothing recorded, the summary says why', () => {
    const status = { lastScheduleTime: '2026-11-22T03:00:00Z' };
    const p = plan('2026-11-22T03:00:10Z', schedule({}, status, true));
    assert.deepEqual(p.status, status);
    assert.deepEqual(p.events, []);
    assert.equal(p.summary, 'EtcdSnapshotSchedule prod/nightly is being deleted');
  });

  it('suspended: the Suspended condition says spec.suspend is true', () => {
    const c = findCondition(
      plan('2026-11-22T10:02:00Z', schedule({ suspend: true })).status.conditions,
      'Suspended',
    );
    assert.deepEqual([c?.status, c?.reason, c?.message], ['True', 'Suspended', 'spec.suspend is true']);
  });

  it('the cluster being deleted: Ready False, saying so', () => {
    const deleting = { ...CLUSTER, metadata: { ...CLUSTER.metadata, deletionTimestamp: CREATED } };
    const p = plan('2026-11-22T03:00:10Z', schedule(), [], { cluster: deleting });
    assert.equal(ready(p)?.status, 'False');
    assert.equal(ready(p)?.message, 'EtcdCluster demo is being deleted; no snapshots are taken');
  });

  it('a missed run: a Warning Event with the words of the Ready condition', () => {
    const s = schedule({ schedule: '0 * * * *' }, { lastScheduleTime: '2026-11-22T09:00:00Z' });
    const p = plan('2026-11-22T10:07:00Z', s);
    assert.deepEqual(p.events, [{ type: 'Warning', reason: 'RunMissed', message: ready(p)?.message }]);
  });

  it('a missed run is recorded once, even when the status changes for another reason', () => {
    const s = schedule({ schedule: '0 * * * *' }, { lastScheduleTime: '2026-11-22T09:00:00Z' });
    const missed = after(s, plan('2026-11-22T10:07:00Z', s));
    missed.metadata.generation = 3;
    const again = plan('2026-11-22T10:08:00Z', missed);
    assert.ok(again.statusChanged);
    assert.equal(again.status.observedGeneration, 3);
    assert.equal(ready(again)?.reason, 'MissedRun');
    assert.deepEqual(again.events, []);
  });

  it('a run waiting for the previous one: Ready True, saying how long it may wait', () => {
    const s = schedule({ schedule: '*/5 * * * *' }, { lastScheduleTime: '2026-11-22T10:00:00Z' });
    const p = plan('2026-11-22T10:05:10Z', s, [snap('2026-11-22T10:00:00Z', 'Started')]);
    assert.equal(ready(p)?.status, 'True');
    assert.equal(
      ready(p)?.message,
      'the run at 2026-11-22T10:05:00Z waits for EtcdSnapshot nightly-202611221000 to finish (runs never overlap; it is skipped if that takes more than 5 minutes)',
    );
  });

  it('a run taken: a Normal Event naming the snapshot and the run', () => {
    const p = plan('2026-11-22T10:05:20Z', schedule({ schedule: '*/5 * * * *' }));
    assert.deepEqual(p.events, [
      {
        type: 'Normal',
        reason: 'SnapshotScheduled',
        message: 'created EtcdSnapshot nightly-202611221005 for the run at 2026-11-22T10:05:00Z',
      },
    ]);
  });

  it('the last run succeeded: Ready names only the next run', () => {
    const p = plan('2026-11-22T10:02:00Z', schedule(), [snap('2026-11-22T03:00:00Z', 'Complete')]);
    assert.equal(ready(p)?.message, '"0 3 * * *" (UTC): the next run is at 2026-11-23T03:00:00Z');
  });

  it('a finished run leaves status.active: the field is removed', () => {
    const s = schedule({}, { lastScheduleTime: '2026-11-22T03:00:00Z', active: ['nightly-202611220300'] });
    const p = plan('2026-11-22T10:02:00Z', s, [snap('2026-11-22T03:00:00Z', 'Complete')]);
    assert.ok(!('active' in p.status), JSON.stringify(p.status));
    assert.ok(p.statusChanged);
  });

  it('the summary names every deletion, comma-separated', () => {
    const nine = Array.from({ length: 9 }, (_, i) =>
      snap(`2026-11-${String(10 + i).padStart(2, '0')}T03:00:00Z`, 'Complete'),
    );
    const p = plan('2026-11-22T10:02:00Z', schedule(), nine);
    assert.match(p.summary, /; delete nightly-202611110300, nightly-202611100300$/);
  });
});

describe('planSchedule: retention, exactly', () => {
  const days = (n: number, phase: SnapshotPhase = 'Complete') =>
    Array.from({ length: n }, (_, i) => snap(`2026-11-${String(10 + i).padStart(2, '0')}T03:00:00Z`, phase));

  it('each deletion names the EtcdSnapshot by name and uid, why, and the object only with its ETag', () => {
    assert.deepEqual(plan('2026-11-22T10:02:00Z', schedule(), days(8)).deletions, [
      {
        name: 'nightly-202611100300',
        uid: 'uid-2026-11-10T03:00:00Z',
        s3Object: true,
        etag: '"etag-2026-11-10T03:00:00Z"',
        why: 'beyond retention.keepLast 7',
      },
    ]);
    const noEtag = days(8).map(s => {
      delete s.status!.artifact!.etag;
      return s;
    });
    assert.deepEqual(plan('2026-11-22T10:02:00Z', schedule(), noEtag).deletions, [
      {
        name: 'nightly-202611100300',
        uid: 'uid-2026-11-10T03:00:00Z',
        s3Object: false,
        why: 'beyond retention.keepLast 7',
      },
    ]);
    const p = plan('2026-11-22T10:02:00Z', schedule(), [
      snap('2026-11-20T03:00:00Z', 'Failed'),
      snap('2026-11-21T03:00:00Z', 'Complete'),
    ]);
    assert.deepEqual(p.deletions, [
      {
        name: 'nightly-202611200300',
        uid: 'uid-2026-11-20T03:00:00Z',
        s3Object: false,
        why: 'Failed, and a later run (EtcdSnapshot nightly-202611210300) succeeded',
      },
    ]);
  });

  it('spec.retention left out: keepLast 7', () => {
    const p = plan('2026-11-22T10:02:00Z', schedule({ retention: undefined }), days(8));
    assert.deepEqual(
      p.deletions.map(d => d.name),
      ['nightly-202611100300'],
    );
    const result = planRetentionResult(
      schedule({ retention: undefined }),
      undefined,
      T('2026-11-22T10:00:00Z'),
    );
    assert.match(
      findCondition(result.status.conditions, 'Retention')?.message ?? '',
      /keeping the newest 7 /,
    );
  });

  it('Retention after the deletions names the schedule’s own keepLast', () => {
    const result = planRetentionResult(
      schedule({ retention: { keepLast: 2 } }),
      undefined,
      T('2026-11-22T10:00:00Z'),
    );
    assert.equal(
      findCondition(result.status.conditions, 'Retention')?.message,
      'keeping the newest 2 Complete snapshots, and up to 3 Failed ones since the last success',
    );
  });
});

describe('planSchedule: retention deletes only objects its snapshots wrote and recorded', () => {
  /** Eight verified snapshots; the oldest is changed by `change` and is the one retention removes. */
  const oldest = (change: (s: EtcdSnapshot) => void) => {
    const all = Array.from({ length: 8 }, (_, i) =>
      snap(`2026-11-${String(10 + i).padStart(2, '0')}T03:00:00Z`, 'Complete'),
    );
    change(all[0]);
    const [d, ...rest] = plan('2026-11-22T10:02:00Z', schedule(), all).deletions;
    assert.equal(rest.length, 0);
    return d;
  };
  const rows: [string, (s: EtcdSnapshot) => void][] = [
    [
      'recorded at another key than its own',
      s => {
        s.status!.artifact!.uri = 's3://etcd/prod/prod/demo/someone-else.db';
      },
    ],
    [
      'recorded in another bucket',
      s => {
        s.status!.artifact!.uri = s.status!.artifact!.uri.replace('s3://etcd/', 's3://other/');
      },
    ],
    [
      'with an empty ETag',
      s => {
        s.status!.artifact!.etag = '';
      },
    ],
    [
      'with no artifact recorded',
      s => {
        delete s.status!.artifact;
      },
    ],
    [
      'stored on a PVC (with an ETag-like value recorded)',
      s => {
        s.spec.destination = { pvc: { claimName: 'backups' } };
        s.status!.artifact = { uri: 'pvc://backups/prod/demo/x.db', etag: '"e"' };
      },
    ],
  ];
  for (const [what, change] of rows) {
    it(`a snapshot ${what}: its EtcdSnapshot goes, no object is deleted`, () => {
      const d = oldest(change);
      assert.equal(d.name, 'nightly-202611100300');
      assert.equal(d.s3Object, false);
      assert.equal(d.etag, undefined);
      assert.equal(d.pvcFileSha256, undefined);
    });
  }

  /** On a PVC: recorded at its own path `<subPath>/<name>-<uid8>.db` with a SHA-256 checksum. */
  const onPvc = (s: EtcdSnapshot, uri?: string, checksum = `sha256:${'ab'.repeat(32)}`) => {
    s.spec.destination = { pvc: { claimName: 'backups', subPath: 'etcd/' } };
    const own = `pvc://backups/etcd/${s.metadata.name}-${(s.metadata.uid ?? '').slice(0, 8)}.db`;
    s.status!.artifact = { uri: uri ?? own, sizeBytes: 4128, checksum };
  };
  it('a snapshot on a PVC at its own path: its file is removed (by a Job) with the recorded SHA-256', () => {
    const d = oldest(s => onPvc(s));
    assert.equal(d.name, 'nightly-202611100300');
    assert.equal(d.s3Object, false);
    assert.equal(d.pvcFileSha256, 'ab'.repeat(32));
  });
  const pvcRows: [string, (s: EtcdSnapshot) => void][] = [
    ['recorded at another path', s => onPvc(s, 'pvc://backups/etcd/someone-else.db')],
    [
      'recorded on another claim',
      s => onPvc(s, `pvc://other/etcd/${s.metadata.name}-${(s.metadata.uid ?? '').slice(0, 8)}.db`),
    ],
    ['with no SHA-256 recorded', s => onPvc(s, undefined, '')],
    ['with a checksum that is not SHA-256', s => onPvc(s, undefined, 'md5:0123')],
  ];
  for (const [what, change] of pvcRows) {
    it(`a snapshot on a PVC ${what}: its EtcdSnapshot goes, its file is never touched`, () => {
      const d = oldest(change);
      assert.equal(d.name, 'nightly-202611100300');
      assert.equal(d.s3Object, false);
      assert.equal(d.pvcFileSha256, undefined);
    });
  }
});

describe('which snapshots belong to a schedule', () => {
  const ref = (kind: string, uid: string, name = 'nightly', apiVersion = 'etcdfn.io/v1alpha1') => ({
    apiVersion,
    kind,
    name,
    uid,
  });
  const owned = (refs?: ReturnType<typeof ref>[]) => {
    const s = snap('2026-11-22T03:00:00Z', 'Complete');
    if (refs) s.metadata.ownerReferences = refs;
    else delete s.metadata.ownerReferences;
    return s;
  };
  it('isOwnedBy: only an EtcdSnapshotSchedule owner with this uid', () => {
    const rows: [string, EtcdSnapshot, string | undefined, boolean][] = [
      ['this schedule', owned([ref('EtcdSnapshotSchedule', 'sched-uid')]), 'sched-uid', true],
      [
        'this schedule, second of two owners',
        owned([ref('EtcdCluster', 'cluster-uid', 'demo'), ref('EtcdSnapshotSchedule', 'sched-uid')]),
        'sched-uid',
        true,
      ],
      ['another schedule', owned([ref('EtcdSnapshotSchedule', 'other-uid', 'hourly')]), 'sched-uid', false],
      ['another kind with this uid', owned([ref('EtcdCluster', 'sched-uid', 'demo')]), 'sched-uid', false],
      ['no owner', owned(), 'sched-uid', false],
      ['a schedule without a uid', owned([ref('EtcdSnapshotSchedule', 'sched-uid')]), undefined, false],
    ];
    for (const [what, s, uid, expected] of rows) assert.equal(isOwnedBy(s, uid), expected, what);
  });
  it('owningSchedule: the name of an etcdfn EtcdSnapshotSchedule owner, if any', () => {
    const rows: [string, EtcdSnapshot, string | undefined][] = [
      ['no owner', owned(), undefined],
      ['only a cluster', owned([ref('EtcdCluster', 'cluster-uid', 'demo')]), undefined],
      [
        'a schedule of another API group',
        owned([ref('EtcdSnapshotSchedule', 'sched-uid', 'x', 'other.io/v1')]),
        undefined,
      ],
      [
        'a cluster, then the schedule',
        owned([ref('EtcdCluster', 'cluster-uid', 'demo'), ref('EtcdSnapshotSchedule', 'sched-uid')]),
        'nightly',
      ],
    ];
    for (const [what, s, expected] of rows) assert.equal(owningSchedule(s), expected, what);
  });
});
