// What a person reads on an EtcdSnapshotSchedule, word for word, where plan-schedule.test.ts checks
// less: the last failed run named with its reason, the Suspended condition after a resume, the
// retention wording for keepLast 1, a name too long for its snapshots, the failures kept since the
// last success, the starting deadline in seconds or one minute. Written against the mutants
// StrykerJS left alive in shared/plan/schedule/plan.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import type {
  EtcdSnapshotSchedule,
  EtcdSnapshotScheduleSpec,
  EtcdSnapshotScheduleStatus,
} from '../../shared/api/etcd-snapshot-schedule.ts';
import type { Condition } from '../../shared/api/common.ts';
import { findCondition } from '../../shared/conditions.ts';
import { planSchedule } from '../../shared/plan/schedule/plan.ts';
import { runSnapshotName } from '../../shared/plan/schedule/run.ts';
import type { SchedulePlan } from '../../shared/plan/schedule/types.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const CREATED = new Date('2026-11-22T08:00:30Z');
const DEST = {
  s3: {
    endpoint: 'http://minio.backup.svc:9000',
    bucket: 'etcd',
    key: 'prod/',
    credentialsSecretRef: { name: 'backup-creds' },
  },
};
const CLUSTER = etcdCluster({ metadata: { uid: 'cluster-uid' } });

function schedule(
  spec: Partial<EtcdSnapshotScheduleSpec> = {},
  status?: EtcdSnapshotScheduleStatus,
  name = 'nightly',
): EtcdSnapshotSchedule {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshotSchedule',
    metadata: { name, namespace: 'prod', uid: 'sched-uid', generation: 2, creationTimestamp: CREATED },
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

/** A Failed snapshot of the run at `run`, with the Ready reason it failed with (or none). */
function failed(run: string, reason?: string): EtcdSnapshot {
  const time = new Date(run);
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
    },
    spec: { clusterRef: { name: 'demo' }, destination: DEST },
    status: {
      phase: 'Failed',
      completionTime: run,
      conditions: reason
        ? [{ type: 'Ready', status: 'False', reason, message: 'no', lastTransitionTime: run }]
        : [],
    },
  };
}

const plan = (now: string, s: EtcdSnapshotSchedule, snapshots: EtcdSnapshot[] = [], deadlineS = 300) =>
  planSchedule({
    now: new Date(now),
    schedule: s,
    cluster: CLUSTER,
    snapshots,
    timings: { startingDeadlineMs: deadlineS * 1000 },
  });
const condition = (p: SchedulePlan, type: string) => {
  const c = findCondition(p.status.conditions, type);
  return c && [c.status, c.reason, c.message];
};

describe('the last run failed', () => {
  const NEXT = '"0 3 * * *" (UTC): the next run is at 2026-11-23T03:00:00Z';
  it('named, with the reason it failed and where to look', () => {
    const p = plan('2026-11-22T10:02:00Z', schedule(), [failed('2026-11-22T03:00:00Z', 'UploadRefused')]);
    assert.deepEqual(condition(p, 'Ready'), [
      'True',
      'Scheduled',
      `${NEXT}; the last run, EtcdSnapshot nightly-202611220300, Failed (UploadRefused): see kubectl describe etcdsnapshot nightly-202611220300`,
    ]);
  });
  it('without a reason recorded: says so', () => {
    const p = plan('2026-11-22T10:02:00Z', schedule(), [failed('2026-11-22T03:00:00Z')]);
    assert.match(condition(p, 'Ready')?.[2] ?? '', /Failed \(no reason\): see kubectl describe/);
  });
});

describe('suspension', () => {
  it('resumed: the Suspended condition says runs were not caught up', () => {
    const suspended: Condition = {
      type: 'Suspended',
      status: 'True',
      reason: 'Suspended',
      message: 'spec.suspend is true',
      lastTransitionTime: '2026-11-22T09:00:00Z',
    };
    const p = plan('2026-11-22T10:02:00Z', schedule({}, { conditions: [suspended] }));
    assert.deepEqual(condition(p, 'Suspended'), [
      'False',
      'Resumed',
      'spec.suspend is false; runs that fell due while suspended were not caught up',
    ]);
  });
  it('never suspended: no Suspended condition at all', () => {
    assert.equal(condition(plan('2026-11-22T10:02:00Z', schedule()), 'Suspended'), undefined);
  });
});

describe('retention wording', () => {
  it('keepLast 1: one Complete snapshot, in the singular', () => {
    const p = plan('2026-11-22T10:02:00Z', schedule({ retention: { keepLast: 1 } }));
    assert.deepEqual(condition(p, 'Retention'), [
      'True',
      'Applied',
      'keeping the newest 1 Complete snapshot, and up to 3 Failed ones since the last success',
    ]);
  });
  it('a fourth failure since the last success goes; the newest three stay', () => {
    const runs = ['2026-11-19', '2026-11-20', '2026-11-21', '2026-11-22'].map(d =>
      failed(`${d}T03:00:00Z`, 'X'),
    );
    const p = plan('2026-11-22T10:02:00Z', schedule(), runs);
    assert.deepEqual(
      p.deletions.map(d => [d.name, d.s3Object, d.why]),
      [['nightly-202611190300', false, 'Failed, beyond the 3 newest failures kept']],
    );
  });
});

describe('a name too long for its snapshots', () => {
  it('is refused, saying how long it is and what to do', () => {
    const name = 'n'.repeat(241);
    const p = plan('2026-11-22T10:02:00Z', schedule({}, undefined, name));
    assert.deepEqual(condition(p, 'Ready'), [
      'False',
      'InvalidSchedule',
      "the schedule's name is 241 characters long; at most 240 leave room for the -<yyyymmddhhmm> of its snapshots' names: recreate it with a shorter name; no snapshots are taken until it is fixed",
    ]);
    assert.equal(p.create, undefined);
  });
});

describe('the starting deadline in words', () => {
  const missed = (deadlineS: number) =>
    condition(plan('2026-11-23T03:10:00Z', schedule(), [], deadlineS), 'Ready')?.[2] ?? '';
  it('in seconds when it is not whole minutes', () => {
    assert.match(missed(90), /nothing started it within 90 s of its time/);
  });
  it('one minute, in the singular', () => {
    assert.match(missed(60), /nothing started it within 1 minute of its time/);
  });
});

describe('the summary an invocation logs, and Retention while deletions are pending', () => {
  it('a deletion due: named in the summary; Retention is not called Applied before it is done', () => {
    const runs = ['2026-11-19', '2026-11-20', '2026-11-21', '2026-11-22'].map(d =>
      failed(`${d}T03:00:00Z`, 'X'),
    );
    const p = plan('2026-11-22T10:02:00Z', schedule(), runs);
    assert.equal(condition(p, 'Retention'), undefined);
    assert.equal(
      p.summary,
      `EtcdSnapshotSchedule prod/nightly: Scheduled: ${condition(p, 'Ready')?.[2]}; delete nightly-202611190300`,
    );
  });
  it('a run due: the snapshot it creates is named in the summary', () => {
    const p = plan('2026-11-23T03:00:30Z', schedule());
    assert.equal(p.create?.metadata.name, 'nightly-202611230300');
    assert.equal(
      p.summary,
      'EtcdSnapshotSchedule prod/nightly: Scheduled: took the run at 2026-11-23T03:00:00Z; the next run is at 2026-11-24T03:00:00Z; create EtcdSnapshot nightly-202611230300',
    );
    assert.deepEqual(p.status.active, ['nightly-202611230300']);
  });
});
