// Snapshots to a PVC: the plan while the attempt's Job runs and once it finished, what a Job's report
// means (jobOutcome), the status that follows (planOutcome), the Job itself, and the report format.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdSnapshot, EtcdSnapshotStatus } from '../../shared/api/etcd-snapshot.ts';
import { snapshotJob, snapshotJobName } from '../../shared/builders/snapshot-job.ts';
import { findCondition } from '../../shared/conditions.ts';
import {
  filePruneStep,
  jobOutcome,
  UNSCHEDULED_GRACE_MS,
  unscheduledSince,
} from '../../shared/plan/snapshot/job.ts';
import { planSnapshot } from '../../shared/plan/snapshot/plan.ts';
import { planOutcome } from '../../shared/plan/snapshot/outcome.ts';
import {
  deleteMessage,
  failedMessage,
  parseStepReport,
  savedMessage,
} from '../../shared/snapshot-file/result.ts';
import type { SnapshotState, SnapshotTimings } from '../../shared/plan/snapshot/types.ts';
import type { AttemptJob } from '../../shared/plan/snapshot/types.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const CREATED = new Date('2026-11-22T10:00:00Z');
const NOW = new Date('2026-11-22T10:02:00Z');
const STARTED = '2026-11-22T10:01:00Z';
const UID = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
const SHA = 'ab'.repeat(32);
const TIMINGS: SnapshotTimings = {
  attemptTimeoutMs: 540_000,
  staleAfterMs: 600_000,
  retryDelayMs: 30_000,
  deadlineMs: 3_600_000,
};

function snapshot(status?: EtcdSnapshotStatus, name = 'nightly'): EtcdSnapshot {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: { name, namespace: 'prod', uid: UID, resourceVersion: '7', creationTimestamp: CREATED },
    spec: {
      clusterRef: { name: 'demo' },
      destination: { pvc: { claimName: 'backups', subPath: 'etcd/daily' } },
    },
    ...(status && { status }),
  };
}

const cluster = etcdCluster({
  metadata: { uid: 'c' },
  spec: { replicas: 1 },
  status: { phase: 'Running', members: [{ name: 'demo-0', leader: true }] },
});

const started: EtcdSnapshotStatus = { phase: 'Started', startTime: STARTED };
const state = (over: Partial<SnapshotState>): SnapshotState => ({
  now: NOW,
  snapshot: snapshot(started),
  cluster,
  readyPods: ['demo-0'],
  claimFound: true,
  timings: TIMINGS,
  ...over,
});
const JOB = snapshotJobName(snapshot(), STARTED);
const finished = (over: Partial<Extract<AttemptJob, { state: 'finished' }>>): AttemptJob => ({
  name: JOB,
  state: 'finished',
  succeeded: true,
  ...over,
});
const saved = {
  path: 'etcd/daily/nightly-0f1e2d3c.db',
  member: 'demo-0',
  revision: 400,
  sizeBytes: 2_097_184,
  sha256: SHA,
  totalKey: 230,
  dbRevision: 412,
};

describe('planSnapshot: destination.pvc while Started', () => {
  it('the Job is running → nothing (the Job has its own deadline)', () => {
    const plan = planSnapshot(state({ job: { name: JOB, state: 'running' } }));
    assert.equal(plan.step.kind, 'nothing');
    assert.equal(plan.statusChanged, false);
  });

  const UNBOUND = '0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims.';
  const unscheduled = (sinceMs: number, message = UNBOUND): AttemptJob => ({
    name: JOB,
    state: 'running',
    unscheduled: { since: new Date(NOW.getTime() - sinceMs).toISOString(), message },
  });
  it('its Pod unscheduled for less than the grace → nothing yet', () => {
    const plan = planSnapshot(state({ job: unscheduled(UNSCHEDULED_GRACE_MS - 1) }));
    assert.equal(plan.step.kind, 'nothing');
  });
  it('its Pod unscheduled past the grace, for a claim → record-job ClaimNotMountable, Failed, naming the claim', () => {
    const plan = planSnapshot(state({ job: unscheduled(UNSCHEDULED_GRACE_MS) }));
    assert.equal(plan.step.kind, 'record-job');
    if (plan.step.kind !== 'record-job') return;
    assert.equal(plan.step.job, JOB);
    assert.deepEqual(plan.step.outcome, {
      kind: 'volume-refused',
      reason: 'ClaimNotMountable',
      message: `the Pod of Job ${JOB} was not scheduled for 60 s: ${UNBOUND}; PersistentVolumeClaim backups must be Bound and mountable next to the members (kubectl describe pvc backups)`,
    });
    const after = planOutcome(snapshot(started), plan.step.outcome, NOW);
    assert.equal(after.status.phase, 'Failed');
    const ready = findCondition(after.status.conditions, 'Ready');
    assert.equal(ready?.reason, 'ClaimNotMountable');
    assert.match(ready?.message ?? '', /; then create a new EtcdSnapshot$/);
  });
  it("its Pod unscheduled for another reason → JobPodUnschedulable with the scheduler's words", () => {
    const plan = planSnapshot(
      state({ job: unscheduled(120_000, '0/1 nodes are available: 1 Insufficient cpu.') }),
    );
    assert.equal(plan.step.kind, 'record-job');
    if (plan.step.kind !== 'record-job') return;
    assert.equal(plan.step.outcome.kind, 'volume-refused');
    if (plan.step.outcome.kind !== 'volume-refused') return;
    assert.equal(plan.step.outcome.reason, 'JobPodUnschedulable');
    assert.equal(
      plan.step.outcome.message,
      `the Pod of Job ${JOB} was not scheduled for 120 s: 0/1 nodes are available: 1 Insufficient cpu.`,
    );
  });
  it('what the scheduler says about a Pod: only PodScheduled False counts, since its transition', () => {
    const at = '2026-11-22T10:00:30Z';
    const cond = (status: string, extra: Record<string, string> = {}) => ({
      metadata: { creationTimestamp: CREATED },
      status: { conditions: [{ type: 'PodScheduled', status, ...extra }] },
    });
    assert.equal(unscheduledSince(cond('True')), undefined);
    assert.equal(unscheduledSince({ status: {} }), undefined);
    assert.deepEqual(unscheduledSince(cond('False', { lastTransitionTime: at, message: 'm' })), {
      since: '2026-11-22T10:00:30.000Z',
      message: 'm',
    });
    assert.deepEqual(unscheduledSince(cond('False')), {
      since: CREATED.toISOString(),
      message: 'not scheduled',
    });
    assert.equal(unscheduledSince({ status: cond('False').status }), undefined);
  });

  it('the Job was not observed → nothing', () => {
    assert.equal(planSnapshot(state({})).step.kind, 'nothing');
  });

  it('the Job is missing (a crash after the claim) → start-job from the ready members, status unchanged', () => {
    const plan = planSnapshot(state({ job: { name: JOB, state: 'absent' } }));
    assert.equal(plan.step.kind, 'start-job');
    if (plan.step.kind === 'start-job')
      assert.deepEqual(
        plan.step.sources.map(s => s.member),
        ['demo-0'],
      );
    assert.equal(plan.statusChanged, false);
  });

  it('the Job finished → record-job with the outcome its report gives, even past the deadline', () => {
    const late = new Date(CREATED.getTime() + TIMINGS.deadlineMs + 60_000);
    const plan = planSnapshot(state({ now: late, job: finished({ report: savedMessage(saved) }) }));
    assert.equal(plan.step.kind, 'record-job');
    if (plan.step.kind !== 'record-job') return;
    assert.equal(plan.step.job, JOB);
    assert.equal(plan.step.outcome.kind, 'verified');
  });

  it('a verified report → Complete, Verified True, the artifact at pvc://<claim>/<path>', () => {
    const outcome = jobOutcome(snapshot(started), finished({ report: savedMessage(saved) }) as never);
    const plan = planOutcome(snapshot(started), outcome, NOW);
    assert.equal(plan.status.phase, 'Complete');
    assert.deepEqual(plan.status.artifact, {
      uri: 'pvc://backups/etcd/daily/nightly-0f1e2d3c.db',
      sizeBytes: saved.sizeBytes,
      checksum: `sha256:${SHA}`,
      revision: 412,
    });
    const verified = findCondition(plan.status.conditions, 'Verified');
    assert.equal(verified?.status, 'True');
    assert.match(
      verified?.message ?? '',
      /read 2097184 bytes back from the volume: size and sha256:(ab)+ match/,
    );
    assert.match(verified?.message ?? '', /integrity hash .* matches/);
    assert.match(verified?.message ?? '', /its database holds 230 keys at revision 412/);
  });
});

describe('jobOutcome: a finished Job → the attempt outcome → the status', () => {
  const snap = snapshot(started);
  const rows: [
    string,
    Partial<Extract<AttemptJob, { state: 'finished' }>>,
    string,
    EtcdSnapshotStatus['phase'],
    string,
  ][] = [
    [
      'a file it did not write is there',
      {
        succeeded: false,
        jobReason: 'BackoffLimitExceeded',
        report: failedMessage({
          reason: 'ObjectExists',
          message: 'a file this snapshot did not write is at /snapshots/x',
        }),
      },
      'object-exists',
      'Failed',
      'ObjectExists',
    ],
    [
      'the volume is full',
      { succeeded: false, report: failedMessage({ reason: 'VolumeFull', message: 'no space left' }) },
      'volume-refused',
      'Failed',
      'VolumeFull',
    ],
    [
      'the volume is read-only',
      { succeeded: false, report: failedMessage({ reason: 'VolumeReadOnly', message: 'EROFS' }) },
      'volume-refused',
      'Failed',
      'VolumeReadOnly',
    ],
    [
      'no member served a snapshot',
      { succeeded: false, report: failedMessage({ reason: 'EtcdUnavailable', message: 'demo-0: refused' }) },
      'etcd-unavailable',
      'Pending',
      'AttemptFailed',
    ],
    [
      'the file read back differs',
      {
        succeeded: false,
        report: failedMessage({ reason: 'ChecksumMismatch', message: 'read back as 1 bytes' }),
      },
      'verify-failed',
      'Failed',
      'VerificationFailed',
    ],
    [
      "etcd's hash does not match",
      { succeeded: false, report: failedMessage({ reason: 'IntegrityCheckFailed', message: 'hash' }) },
      'verify-failed',
      'Failed',
      'VerificationFailed',
    ],
    [
      'the Job ran out of time (its Pod killed, no report)',
      { succeeded: false, jobReason: 'DeadlineExceeded' },
      'timed-out',
      'Pending',
      'AttemptFailed',
    ],
    ['the Pod is gone', { succeeded: true }, 'error', 'Pending', 'AttemptFailed'],
    [
      'a crash left a log tail, not a report',
      { succeeded: false, report: 'panic: something\n  at x' },
      'error',
      'Pending',
      'AttemptFailed',
    ],
    [
      'a saved report from a Job that failed',
      { succeeded: false, report: savedMessage(saved) },
      'error',
      'Pending',
      'AttemptFailed',
    ],
  ];
  for (const [name, job, kind, phase, reason] of rows) {
    it(`${name} → ${kind} → ${phase} (${reason})`, () => {
      const outcome = jobOutcome(snap, finished(job) as never);
      assert.equal(outcome.kind, kind);
      const plan = planOutcome(snap, outcome, NOW);
      assert.equal(plan.status.phase, phase);
      assert.equal(findCondition(plan.status.conditions, 'Ready')?.reason, reason);
    });
  }

  it('a verification failure keeps the file and records where it is, Verified False', () => {
    const outcome = jobOutcome(
      snap,
      finished({
        succeeded: false,
        report: failedMessage({ reason: 'ChecksumMismatch', message: 'differs' }),
      }) as never,
    );
    const plan = planOutcome(snap, outcome, NOW);
    assert.equal(plan.status.artifact?.uri, 'pvc://backups/etcd/daily/nightly-0f1e2d3c.db');
    const verified = findCondition(plan.status.conditions, 'Verified');
    assert.equal(verified?.status, 'False');
    assert.equal(verified?.reason, 'ChecksumMismatch');
    assert.match(findCondition(plan.status.conditions, 'Ready')?.message ?? '', /kept at pvc:\/\/backups/);
  });
});

describe('the snapshot Job', () => {
  const job = snapshotJob(snapshot(started), {
    operatorImage: 'ghcr.io/etcdfn/etcdfn:0.1.0',
    subPath: 'etcd/daily',
    startTime: STARTED,
    sources: [{ member: 'demo-0', endpoint: 'http://demo-0.demo.prod.svc:2379' }],
    activeDeadlineSeconds: 540,
  });

  it('one attempt per Job, owned by the EtcdSnapshot, labelled with its cluster, gone after a TTL', () => {
    assert.equal(job.metadata?.name, JOB);
    assert.equal(job.spec?.backoffLimit, 0);
    assert.equal(job.spec?.activeDeadlineSeconds, 540);
    assert.ok((job.spec?.ttlSecondsAfterFinished ?? 0) > 0);
    assert.equal(job.metadata?.labels?.['etcdfn.io/cluster'], 'demo');
    assert.deepEqual(job.metadata?.ownerReferences?.[0], {
      apiVersion: 'etcdfn.io/v1alpha1',
      kind: 'EtcdSnapshot',
      name: 'nightly',
      uid: UID,
      controller: true,
      blockOwnerDeletion: true,
    });
  });

  it('the Pod mounts the claim, runs the agent as a non-root user on a read-only root, with no API token', () => {
    const pod = job.spec?.template.spec;
    assert.equal(pod?.restartPolicy, 'Never');
    assert.equal(pod?.automountServiceAccountToken, false);
    assert.deepEqual(pod?.volumes, [{ name: 'snapshots', persistentVolumeClaim: { claimName: 'backups' } }]);
    const c = pod?.containers[0];
    assert.deepEqual(c?.command, ['etcdfn-agent']);
    assert.deepEqual(c?.args, [
      'snapshot-save',
      '--mount=/snapshots',
      '--dir=/snapshots/etcd/daily',
      '--file=nightly-0f1e2d3c.db',
      '--recorded-path=etcd/daily/nightly-0f1e2d3c.db',
      `--owner-uid=${UID}`,
      '--termination-log=/dev/termination-log',
      '--source=demo-0=http://demo-0.demo.prod.svc:2379',
    ]);
    assert.equal(c?.securityContext?.readOnlyRootFilesystem, true);
    assert.equal(pod?.securityContext?.runAsNonRoot, true);
    assert.ok((pod?.securityContext?.runAsUser ?? 0) > 0);
  });

  it('a Job name is at most 63 characters and differs per attempt', () => {
    const long = snapshot(started, 'a'.repeat(240));
    const name = snapshotJobName(long, STARTED);
    assert.ok(name.length <= 63, name);
    assert.match(name, /^a+-0f1e2d3c-[0-9a-z]+$/);
    assert.notEqual(snapshotJobName(long, '2026-11-22T10:05:00Z'), name);
  });
});

describe('the snapshot Job of a cluster with client TLS', () => {
  const base = {
    operatorImage: 'ghcr.io/etcdfn/etcdfn:0.1.0',
    subPath: '',
    startTime: STARTED,
    sources: [{ member: 'demo-0', endpoint: 'https://demo-0.demo.prod.svc:2379' }],
    activeDeadlineSeconds: 540,
  };
  const pod = (opts: Parameters<typeof snapshotJob>[1]) =>
    snapshotJob(snapshot(started), opts).spec!.template.spec!;

  it('mounts only ca.crt of the server Secret and the operator client cert and key, and dials with them', () => {
    const spec = pod({ ...base, tls: { serverSecret: 'srv', operatorClientSecret: 'op' } });
    const secrets = (spec.volumes ?? [])
      .filter(v => v.secret)
      .map(v => `${v.secret!.secretName}:${v.secret!.items!.map(i => i.key).join(',')}`);
    assert.deepEqual(secrets, ['srv:ca.crt', 'op:tls.crt,tls.key']);
    const args = spec.containers[0].args ?? [];
    const tlsArgs = args.filter(a => a.startsWith('--tls-'));
    assert.deepEqual(
      tlsArgs.map(a => a.split('=')[0]),
      ['--tls-ca', '--tls-cert', '--tls-key'],
    );
    const mounts = spec.containers[0].volumeMounts ?? [];
    for (const arg of tlsArgs) {
      const file = arg.split('=')[1];
      assert.ok(
        mounts.some(m => file.startsWith(`${m.mountPath}/`)),
        `${file} is on a mounted volume`,
      );
    }
  });

  it('server TLS without mTLS: the CA only; plaintext: no TLS at all', () => {
    const caOnly = pod({ ...base, tls: { serverSecret: 'srv' } });
    assert.deepEqual((caOnly.containers[0].args ?? []).filter(a => a.startsWith('--tls-')).length, 1);
    const plain = pod(base);
    assert.deepEqual(
      plain.volumes?.map(v => v.name),
      ['snapshots'],
    );
  });
});

describe('the snapshot Job of a cluster with auth', () => {
  const base = {
    operatorImage: 'ghcr.io/etcdfn/etcdfn:0.1.0',
    subPath: '',
    startTime: STARTED,
    sources: [{ member: 'demo-0', endpoint: 'http://demo-0.demo.prod.svc:2379' }],
    activeDeadlineSeconds: 540,
  };
  const spec = snapshotJob(snapshot(started), { ...base, auth: { rootSecret: 'demo-etcd-root-applied' } })
    .spec!.template.spec!;
  const container = spec.containers[0];

  it("mounts only the applied-root Secret's password key, read-only, and logs in as root from that file", () => {
    const root = (spec.volumes ?? []).filter(v => v.secret?.secretName === 'demo-etcd-root-applied');
    assert.deepEqual(
      root.map(v => v.secret),
      [
        {
          secretName: 'demo-etcd-root-applied',
          defaultMode: 0o440,
          items: [{ key: 'password', path: 'password' }],
        },
      ],
    );
    const mount = (container.volumeMounts ?? []).find(m => m.name === root[0].name);
    assert.equal(mount?.readOnly, true);
    const args = container.args ?? [];
    assert.ok(args.includes('--auth-user=root'));
    assert.ok(args.includes(`--auth-password-file=${mount?.mountPath}/password`), args.join(' '));
  });

  it('the password is in no env var, no argument and no projected env source', () => {
    assert.equal(container.env, undefined);
    assert.equal(container.envFrom, undefined);
    assert.ok(!JSON.stringify(spec).includes('secretKeyRef'));
  });

  it('without auth: no root Secret, no login arguments', () => {
    const plain = snapshotJob(snapshot(started), base).spec!.template.spec!;
    assert.deepEqual(
      plain.volumes?.map(v => v.name),
      ['snapshots'],
    );
    assert.ok(!(plain.containers[0].args ?? []).some(a => a.startsWith('--auth-')));
  });
});

describe('the step report', () => {
  it('round-trips a saved file and a failure', () => {
    assert.deepEqual(parseStepReport(savedMessage(saved)), { kind: 'saved', saved });
    assert.deepEqual(parseStepReport(failedMessage({ reason: 'VolumeFull', message: 'full' })), {
      kind: 'failed',
      reason: 'VolumeFull',
      message: 'full',
    });
  });
  it('anything else is SaveFailed: a malformed checksum, an unknown reason, nothing at all', () => {
    assert.equal(parseStepReport(savedMessage({ ...saved, sha256: 'nope' })).kind, 'failed');
    assert.equal((parseStepReport('Whatever: x') as { reason: string }).reason, 'SaveFailed');
    assert.match((parseStepReport(undefined) as { message: string }).message, /without a message/);
  });
});

describe('filePruneStep: retention of a file on a PVC, from its delete Job', () => {
  const old = snapshot({ phase: 'Complete' });
  const job = (over: Partial<Extract<AttemptJob, { state: 'finished' }>>): AttemptJob => ({
    name: 'nightly-0f1e2d3c-rm',
    state: 'finished',
    succeeded: true,
    ...over,
  });
  const rows: [string, AttemptJob, ReturnType<typeof filePruneStep>][] = [
    ['no Job yet', { name: 'nightly-0f1e2d3c-rm', state: 'absent' }, { kind: 'create-job' }],
    [
      'the Job runs',
      { name: 'nightly-0f1e2d3c-rm', state: 'running' },
      { kind: 'pending', message: 'Job nightly-0f1e2d3c-rm is removing its file from claim backups' },
    ],
    [
      'deleted',
      job({ report: deleteMessage({ kind: 'deleted', message: 'deleted etcd/daily/nightly-0f1e2d3c.db' }) }),
      { kind: 'done', deleted: 'pvc://backups: deleted etcd/daily/nightly-0f1e2d3c.db' },
    ],
    [
      'already gone',
      job({ report: deleteMessage({ kind: 'gone', message: 'x was not there' }) }),
      { kind: 'done' },
    ],
    [
      'kept (not ours, or changed)',
      job({ report: deleteMessage({ kind: 'kept', message: 'x belongs to another EtcdSnapshot' }) }),
      { kind: 'done', kept: 'x belongs to another EtcdSnapshot' },
    ],
    [
      'failed without a report',
      job({ succeeded: false, jobReason: 'DeadlineExceeded', report: 'panic: boom' }),
      {
        kind: 'problem',
        message:
          'Job nightly-0f1e2d3c-rm, removing the file of EtcdSnapshot nightly from claim backups, failed (DeadlineExceeded): panic: boom; delete the Job to try again (the EtcdSnapshot is kept until its file is handled)',
      },
    ],
    [
      'finished, its Pod gone',
      job({}),
      {
        kind: 'problem',
        message:
          'Job nightly-0f1e2d3c-rm, removing the file of EtcdSnapshot nightly from claim backups, left no report; delete the Job to try again (the EtcdSnapshot is kept until its file is handled)',
      },
    ],
  ];
  for (const [what, j, want] of rows) {
    it(`${what} → ${want.kind}`, () => assert.deepEqual(filePruneStep(old, j), want));
  }
});
