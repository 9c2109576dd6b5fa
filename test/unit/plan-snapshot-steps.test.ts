// planSnapshot's steps as run-snapshot and a person see them, word for word: the step and its reason
// (the invocation's summary), whether status is written, the Ready condition and the Events; the
// edges of the stale, retry and deadline times; whether a claim is a retake (a retake first deletes
// what the crashed attempt left, and only that); and the timings read from the environment. Written
// against the mutants StrykerJS left alive in shared/plan/snapshot/plan.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdSnapshot, EtcdSnapshotStatus } from '../../shared/api/etcd-snapshot.ts';
import type { SnapshotLocation } from '../../shared/api/common.ts';
import { findCondition } from '../../shared/conditions.ts';
import { planSnapshot } from '../../shared/plan/snapshot/plan.ts';
import type { SnapshotPlan, SnapshotState, SnapshotTimings } from '../../shared/plan/snapshot/types.ts';
import type { AttemptJob } from '../../shared/plan/snapshot/types.ts';
import { snapshotTimingsFromEnv } from '../../shared/runtime/timings.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const MIN = 60_000;
const CREATED = new Date('2026-11-22T10:00:00Z');
const NOW = new Date('2026-11-22T10:02:00Z');
const at = (ms: number) => new Date(CREATED.getTime() + ms);
const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
const URI = 's3://etcd/prod/prod/demo/before-upgrade-snap-uid.db';
const TIMINGS: SnapshotTimings = {
  attemptTimeoutMs: 9 * MIN,
  staleAfterMs: 10 * MIN,
  retryDelayMs: 30_000,
  deadlineMs: 60 * MIN,
};
const S3: SnapshotLocation = {
  s3: {
    endpoint: 'http://minio.backup.svc:9000',
    bucket: 'etcd',
    key: 'prod/',
    credentialsSecretRef: { name: 'backup-creds' },
  },
};
const PVC: SnapshotLocation = { pvc: { claimName: 'backups' } };

function snapshot(
  status?: EtcdSnapshotStatus,
  destination: SnapshotLocation = S3,
  metadata: Partial<EtcdSnapshot['metadata']> = {},
  deletionPolicy?: 'Delete',
): EtcdSnapshot {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: {
      name: 'before-upgrade',
      namespace: 'prod',
      uid: 'snap-uid',
      creationTimestamp: CREATED,
      ...metadata,
    },
    spec: { clusterRef: { name: 'demo' }, destination, ...(deletionPolicy && { deletionPolicy }) },
    ...(status && { status }),
  };
}

const CLUSTER = etcdCluster({
  metadata: { uid: 'c-uid' },
  spec: { replicas: 1 },
  status: { phase: 'Running', members: [{ name: 'demo-0', role: 'voter', ready: true, leader: true }] },
});

function state(over: Partial<SnapshotState> = {}): SnapshotState {
  return {
    now: NOW,
    snapshot: snapshot(),
    cluster: CLUSTER,
    readyPods: ['demo-0'],
    secretKeys: ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'],
    claimFound: true,
    timings: TIMINGS,
    ...over,
  };
}

/** What a person's tools see of a plan: the step, the write, the phase, the Ready condition, the Events. */
const seen = (plan: SnapshotPlan) => {
  const r = findCondition(plan.status.conditions, 'Ready');
  return {
    step: plan.step,
    statusChanged: plan.statusChanged,
    phase: plan.status.phase,
    ready: r && [r.status, r.reason, r.message],
    events: plan.events,
  };
};
/** A step that writes nothing: the status must come back as it was. */
const still = (s: SnapshotState, step: SnapshotPlan['step']) => {
  const plan = planSnapshot(s);
  assert.deepEqual(plan.step, step);
  assert.equal(plan.statusChanged, false, 'no status write');
  assert.deepEqual(plan.status, s.snapshot.status ?? {}, 'status as it was');
  assert.deepEqual(plan.events, [], 'no Event');
};
const readyCondition = (reason: string, message: string) => ({
  type: 'Ready',
  status: 'False' as const,
  reason,
  message,
  lastTransitionTime: iso(CREATED),
});

describe('planSnapshot: steps that leave the status alone', () => {
  it('a Complete or Failed snapshot: nothing, naming its phase', () => {
    for (const phase of ['Complete', 'Failed'] as const)
      still(state({ snapshot: snapshot({ phase }) }), {
        kind: 'nothing',
        reason: `EtcdSnapshot before-upgrade is ${phase}`,
      });
  });

  it('an attempt younger than the stale timeout: nothing, saying since when', () => {
    const startTime = iso(at(MIN));
    still(state({ snapshot: snapshot({ phase: 'Started', startTime }) }), {
      kind: 'nothing',
      reason: `EtcdSnapshot before-upgrade is being taken since ${startTime}`,
    });
    // One millisecond short of stale, still the other invocation's.
    const now = at(MIN + TIMINGS.staleAfterMs - 1);
    assert.equal(
      planSnapshot(state({ now, snapshot: snapshot({ phase: 'Started', startTime }) })).step.kind,
      'nothing',
    );
  });

  it('a failed attempt within the retry delay: nothing, saying when the next one is', () => {
    const startTime = iso(at(MIN + 45_000));
    still(state({ snapshot: snapshot({ phase: 'Pending', startTime }) }), {
      kind: 'nothing',
      reason: `EtcdSnapshot before-upgrade: the attempt of ${startTime} failed; next attempt after 2026-11-22T10:02:15Z`,
    });
  });

  it('deletionPolicy Delete without the finalizer: add it, before anything is stored', () => {
    still(state({ snapshot: snapshot(undefined, S3, {}, 'Delete') }), {
      kind: 'add-finalizer',
      reason:
        'EtcdSnapshot before-upgrade: deletionPolicy Delete: adding etcdfn.io/snapshot-object before anything is stored',
    });
  });
});

describe('planSnapshot: destination.pvc while Started', () => {
  const STARTED = '2026-11-22T10:01:00Z';
  const JOB = 'before-upgrade-20261122100100';
  const pvc = (job?: AttemptJob) =>
    state({ snapshot: snapshot({ phase: 'Started', startTime: STARTED }, PVC), job });

  it('the Job is running, or not observed: nothing, naming it and since when', () => {
    still(pvc({ name: JOB, state: 'running' }), {
      kind: 'nothing',
      reason: `EtcdSnapshot before-upgrade is being taken by Job ${JOB} since ${STARTED}`,
    });
    still(pvc(), {
      kind: 'nothing',
      reason: `EtcdSnapshot before-upgrade is being taken by Job (not observed) since ${STARTED}`,
    });
  });

  it('the Job finished: record its outcome, the status written only then', () => {
    still(pvc({ name: JOB, state: 'finished', succeeded: false, jobReason: 'DeadlineExceeded' }), {
      kind: 'record-job',
      job: JOB,
      outcome: { kind: 'timed-out', message: `Job ${JOB} ran past its deadline and was stopped` },
      reason: `EtcdSnapshot before-upgrade: Job ${JOB} finished`,
    });
  });

  it('the Job is missing: create it, saying which attempt', () => {
    still(pvc({ name: JOB, state: 'absent' }), {
      kind: 'start-job',
      sources: [{ member: 'demo-0', endpoint: 'http://demo-0.demo.prod.svc:2379', leader: true }],
      reason: `EtcdSnapshot before-upgrade: the Job of the attempt started at ${STARTED} is missing; creating it`,
    });
  });
});

describe('planSnapshot: a claim, first or retaken', () => {
  const source = { member: 'demo-0', endpoint: 'http://demo-0.demo.prod.svc:2379', leader: true };

  it('a first claim: Started, InProgress, a Normal Event, not a retake', () => {
    const message = `taking a snapshot of EtcdCluster demo to ${URI}`;
    const plan = planSnapshot(state());
    const { step, ...rest } = seen(plan);
    assert.equal(step.kind, 'claim');
    assert.equal(step.kind === 'claim' && step.retake, false, 'nothing of ours to delete before writing');
    assert.equal(step.reason, `EtcdSnapshot before-upgrade: ${message}`);
    assert.deepEqual(step.kind === 'claim' && step.sources, [source]);
    assert.deepEqual(rest, {
      statusChanged: true,
      phase: 'Started',
      ready: ['False', 'InProgress', message],
      events: [{ type: 'Normal', reason: 'SnapshotStarted', message }],
    });
  });

  it('an attempt exactly as old as the stale timeout is retaken: a Warning Event, a retake', () => {
    const startTime = iso(at(10 * MIN));
    const plan = planSnapshot(
      state({
        now: at(10 * MIN + TIMINGS.staleAfterMs),
        snapshot: snapshot({ phase: 'Started', startTime }),
      }),
    );
    const message = `the attempt started at ${startTime} did not finish (its invocation stopped); taking the snapshot again to ${URI}`;
    const { step, ...rest } = seen(plan);
    assert.equal(step.kind, 'claim');
    assert.equal(step.kind === 'claim' && step.retake, true, 'the crashed attempt’s object is deleted first');
    assert.equal(step.reason, `EtcdSnapshot before-upgrade: ${message}`);
    assert.deepEqual(rest, {
      statusChanged: true,
      phase: 'Started',
      ready: ['False', 'Retaking', message],
      events: [{ type: 'Warning', reason: 'SnapshotRetaken', message }],
    });
  });

  it('a stale attempt is retaken at once even when the retry delay is longer than the stale timeout', () => {
    const timings = { ...TIMINGS, retryDelayMs: 20 * MIN };
    const startTime = iso(at(MIN));
    const plan = planSnapshot(
      state({ now: at(16 * MIN), timings, snapshot: snapshot({ phase: 'Started', startTime }) }),
    );
    assert.equal(plan.step.kind, 'claim');
    assert.equal(plan.step.kind === 'claim' && plan.step.retake, true);
  });

  it('a failed attempt (Pending) is claimed again as a first claim, not a retake', () => {
    const plan = planSnapshot(
      state({
        now: at(10 * MIN),
        snapshot: snapshot({
          phase: 'Pending',
          startTime: iso(at(MIN)),
          conditions: [readyCondition('AttemptFailed', 'boom')],
        }),
      }),
    );
    assert.equal(plan.step.kind, 'claim');
    assert.equal(plan.step.kind === 'claim' && plan.step.retake, false);
    assert.deepEqual(
      plan.events.map(e => [e.type, e.reason]),
      [['Normal', 'SnapshotStarted']],
    );
  });
});

describe('planSnapshot: the deadline', () => {
  const pending = snapshot({
    phase: 'Pending',
    conditions: [readyCondition('ClusterNotFound', 'EtcdCluster demo not found')],
  });

  it('reached to the millisecond: Failed, with the last reason, a Warning, and what to do', () => {
    const message =
      'not taken within 60 minutes of its creation; last: EtcdCluster demo not found; create a new EtcdSnapshot to try again';
    assert.deepEqual(
      seen(planSnapshot(state({ now: at(TIMINGS.deadlineMs), cluster: undefined, snapshot: pending }))),
      {
        step: { kind: 'fail', reason: `EtcdSnapshot before-upgrade: ${message}` },
        statusChanged: true,
        phase: 'Failed',
        ready: ['False', 'DeadlineExceeded', message],
        events: [{ type: 'Warning', reason: 'SnapshotFailed', message }],
      },
    );
    const before = planSnapshot(
      state({ now: at(TIMINGS.deadlineMs - 1), cluster: undefined, snapshot: pending }),
    );
    assert.equal(before.step.kind, 'wait');
  });

  it('one minute, with nothing said before: "1 minute", and no "last"', () => {
    const plan = planSnapshot(state({ now: at(MIN), timings: { ...TIMINGS, deadlineMs: MIN } }));
    assert.deepEqual(seen(plan).ready, [
      'False',
      'DeadlineExceeded',
      'not taken within 1 minute of its creation; create a new EtcdSnapshot to try again',
    ]);
  });

  it('a stale attempt: says the attempt never finished, not what the claim said', () => {
    const startTime = iso(at(55 * MIN));
    const claimed = snapshot({
      phase: 'Started',
      startTime,
      conditions: [readyCondition('InProgress', `taking a snapshot of EtcdCluster demo to ${URI}`)],
    });
    const plan = planSnapshot(state({ now: at(66 * MIN), snapshot: claimed }));
    assert.deepEqual(seen(plan).ready, [
      'False',
      'DeadlineExceeded',
      `not taken within 60 minutes of its creation: the attempt started at ${startTime} never finished; create a new EtcdSnapshot to try again`,
    ]);
  });

  it('no creation time (null, as Go clients write it, or absent): no deadline, and none promised', () => {
    const message =
      'EtcdCluster demo not found in namespace prod; the snapshot is taken once it exists and has a ready member';
    for (const creationTimestamp of [null as never, undefined]) {
      const plan = planSnapshot(
        state({
          now: at(1000 * MIN),
          cluster: undefined,
          snapshot: snapshot(undefined, S3, { creationTimestamp }),
        }),
      );
      assert.deepEqual(seen(plan), {
        step: { kind: 'wait', reason: `EtcdSnapshot before-upgrade: ${message}` },
        statusChanged: true,
        phase: 'Pending',
        ready: ['False', 'ClusterNotFound', message],
        events: [],
      });
    }
  });
});

describe('planSnapshot: the cluster', () => {
  it('being deleted: Failed, saying so', () => {
    const deleting = { ...CLUSTER, metadata: { ...CLUSTER.metadata, deletionTimestamp: NOW } };
    const message = 'EtcdCluster demo is being deleted';
    assert.deepEqual(seen(planSnapshot(state({ cluster: deleting }))), {
      step: { kind: 'fail', reason: `EtcdSnapshot before-upgrade: ${message}` },
      statusChanged: true,
      phase: 'Failed',
      ready: ['False', 'ClusterDeleted', message],
      events: [{ type: 'Warning', reason: 'SnapshotFailed', message }],
    });
  });

  it('with no status yet: Pending, no ready member, no phase to name', () => {
    const message =
      'EtcdCluster demo has no ready voting member to take the snapshot from; retried every minute (until 2026-11-22T11:00:00Z)';
    for (const status of [undefined, {}]) {
      const plan = planSnapshot(state({ cluster: { ...CLUSTER, status } }));
      assert.deepEqual(seen(plan), {
        step: { kind: 'wait', reason: `EtcdSnapshot before-upgrade: ${message}` },
        statusChanged: true,
        phase: 'Pending',
        ready: ['False', 'NoReadyMember', message],
        events: [],
      });
    }
  });

  it('Pending for one reason, now another: written', () => {
    const plan = planSnapshot(
      state({
        cluster: undefined,
        snapshot: snapshot({
          phase: 'Pending',
          conditions: [readyCondition('NoReadyMember', 'no ready member')],
        }),
      }),
    );
    assert.equal(plan.statusChanged, true);
    assert.equal(plan.status.phase, 'Pending');
    assert.equal(findCondition(plan.status.conditions, 'Ready')?.reason, 'ClusterNotFound');
  });

  it('the same words but no phase Pending yet: written, to say Pending', () => {
    const message =
      'EtcdCluster demo not found in namespace prod; the snapshot is taken once it exists and has a ready member (until 2026-11-22T11:00:00Z)';
    const plan = planSnapshot(
      state({
        cluster: undefined,
        snapshot: snapshot({ conditions: [readyCondition('ClusterNotFound', message)] }),
      }),
    );
    assert.equal(plan.statusChanged, true);
    assert.equal(plan.status.phase, 'Pending');
  });
});

describe('snapshot timings from the environment', () => {
  it('each variable is read: attempt, stale grace, retry delay, deadline', () => {
    assert.deepEqual(
      snapshotTimingsFromEnv({
        ETCDFN_SNAPSHOT_ATTEMPT_TIMEOUT_SECONDS: '100',
        ETCDFN_SNAPSHOT_STALE_GRACE_SECONDS: '10',
        ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS: '45',
        ETCDFN_SNAPSHOT_DEADLINE_SECONDS: '7200',
      }),
      { attemptTimeoutMs: 100_000, staleAfterMs: 110_000, retryDelayMs: 45_000, deadlineMs: 7_200_000 },
    );
  });
  it('zero is no value: the default', () => {
    assert.equal(snapshotTimingsFromEnv({ ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS: '0' }).retryDelayMs, 30_000);
  });
});
