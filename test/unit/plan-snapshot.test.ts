import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdSnapshot, EtcdSnapshotStatus } from '../../shared/api/etcd-snapshot.ts';
import type { SnapshotLocation } from '../../shared/api/common.ts';
import { findCondition } from '../../shared/conditions.ts';
import type { ObjectEvent, TickEvent } from '../../shared/events/types.ts';
import { planSnapshot, snapshotSources } from '../../shared/plan/snapshot/plan.ts';
import { planOutcome } from '../../shared/plan/snapshot/outcome.ts';
import { snapshotTarget as s3Target, usePathStyle } from '../../shared/s3/location.ts';
import { snapshotTarget } from '../../functions/run-snapshot/targets.ts';
import type { SnapshotPlan, SnapshotState, SnapshotTimings } from '../../shared/plan/snapshot/types.ts';
import type { TakeOutcome } from '../../shared/plan/snapshot/types.ts';
import { snapshotTimingsFromEnv } from '../../shared/runtime/timings.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const CREATED = new Date('2026-11-22T10:00:00Z');
const NOW = new Date('2026-11-22T10:02:00Z');
const MIN = 60_000;
const at = (ms: number) => new Date(CREATED.getTime() + ms);
const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

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

function snapshot(
  status?: EtcdSnapshotStatus,
  destination: SnapshotLocation = S3,
  deleting = false,
): EtcdSnapshot {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: {
      name: 'before-upgrade',
      namespace: 'prod',
      uid: 'snap-uid',
      resourceVersion: '7',
      creationTimestamp: CREATED,
      ...(deleting && { deletionTimestamp: NOW }),
    },
    spec: { clusterRef: { name: 'demo' }, destination },
    ...(status && { status }),
  };
}

type MemberRow = { name: string; role?: 'voter' | 'learner'; leader?: boolean };

/** Cluster demo (uid c-uid) Running with `members`, each ready, as many replicas as members. */
function runningCluster(
  members: MemberRow[] = THREE,
  spec: Partial<EtcdCluster['spec']> = {},
  deleting = false,
): EtcdCluster {
  return etcdCluster({
    metadata: { uid: 'c-uid', deletionTimestamp: deleting ? NOW : undefined },
    spec: { replicas: members.length, ...spec },
    status: {
      phase: 'Running',
      members: members.map(m => ({
        name: m.name,
        role: m.role ?? 'voter',
        ready: true,
        leader: m.leader ?? false,
      })),
    },
  });
}

const THREE: MemberRow[] = [{ name: 'demo-0', leader: true }, { name: 'demo-1' }, { name: 'demo-2' }];
const KEYS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];

function state(over: Partial<SnapshotState> = {}): SnapshotState {
  return {
    now: NOW,
    snapshot: snapshot(),
    cluster: runningCluster(),
    readyPods: ['demo-0', 'demo-1', 'demo-2'],
    secretKeys: KEYS,
    timings: TIMINGS,
    ...over,
  };
}

const ready = (p: SnapshotPlan) => findCondition(p.status.conditions, 'Ready');

interface Row {
  name: string;
  state: SnapshotState;
  step: SnapshotPlan['step']['kind'];
  phase?: EtcdSnapshotStatus['phase'];
  reason?: string;
  message?: RegExp;
  write: boolean;
  event?: string;
}

const started = (ago: number, extra: EtcdSnapshotStatus = {}, now = NOW): EtcdSnapshotStatus => ({
  phase: 'Started',
  startTime: iso(new Date(now.getTime() - ago)),
  ...extra,
});
const waiting = (reason: string, message: string): EtcdSnapshotStatus => ({
  phase: 'Pending',
  conditions: [{ type: 'Ready', status: 'False', reason, message, lastTransitionTime: iso(CREATED) }],
});
const PVC: SnapshotLocation = { pvc: { claimName: 'backups' } };
const LATE = at(TIMINGS.deadlineMs + MIN);

const rows: Row[] = [
  {
    name: 'being deleted',
    state: state({ snapshot: snapshot(undefined, S3, true) }),
    step: 'nothing',
    write: false,
  },
  {
    name: 'Complete',
    state: state({ snapshot: snapshot({ phase: 'Complete' }) }),
    step: 'nothing',
    write: false,
  },
  {
    name: 'Failed',
    state: state({ snapshot: snapshot({ phase: 'Failed' }) }),
    step: 'nothing',
    write: false,
  },
  {
    name: 'Failed stays Failed even past the deadline with no cluster',
    state: state({ snapshot: snapshot({ phase: 'Failed' }), cluster: undefined, now: LATE }),
    step: 'nothing',
    write: false,
  },
  {
    name: 'new, cluster ready, secret complete → claim',
    state: state(),
    step: 'claim',
    phase: 'Started',
    reason: 'InProgress',
    message:
      /taking a snapshot of EtcdCluster demo to s3:\/\/etcd\/prod\/prod\/demo\/before-upgrade-snap-uid\.db/,
    write: true,
    event: 'SnapshotStarted',
  },
  {
    name: 'a PVC destination whose claim exists → claim, then a Job (no Secret needed)',
    state: state({ snapshot: snapshot(undefined, PVC), claimFound: true, secretKeys: undefined }),
    step: 'claim-job',
    phase: 'Started',
    reason: 'InProgress',
    message: /to pvc:\/\/backups\/before-upgrade-snap-uid\.db/,
    write: true,
    event: 'SnapshotStarted',
  },
  {
    name: 'a PVC destination whose claim does not exist → Failed ClaimNotFound, saying to create it',
    state: state({ snapshot: snapshot(undefined, PVC), claimFound: false }),
    step: 'fail',
    phase: 'Failed',
    reason: 'ClaimNotFound',
    message: /PersistentVolumeClaim backups .*not found in namespace prod; create it/,
    write: true,
    event: 'SnapshotFailed',
  },
  {
    name: 'the Secret is missing → Failed naming it',
    state: state({ secretKeys: undefined }),
    step: 'fail',
    phase: 'Failed',
    reason: 'CredentialsInvalid',
    message:
      /Secret backup-creds .*not found in namespace prod; create it with the keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
    write: true,
    event: 'SnapshotFailed',
  },
  {
    name: 'the Secret lacks the secret key → Failed naming the key',
    state: state({ secretKeys: ['AWS_ACCESS_KEY_ID', 'region'] }),
    step: 'fail',
    phase: 'Failed',
    reason: 'CredentialsInvalid',
    message: /Secret backup-creds lacks AWS_SECRET_ACCESS_KEY \(or they are empty\)/,
    write: true,
  },
  {
    name: 'the Secret has neither key',
    state: state({ secretKeys: [] }),
    step: 'fail',
    reason: 'CredentialsInvalid',
    message: /lacks AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
    write: true,
  },
  {
    name: 'the Secret is checked before the cluster (a person must act either way)',
    state: state({ secretKeys: undefined, cluster: undefined }),
    step: 'fail',
    reason: 'CredentialsInvalid',
    write: true,
  },
  {
    name: 'no cluster → Pending, retried on the tick',
    state: state({ cluster: undefined }),
    step: 'wait',
    phase: 'Pending',
    reason: 'ClusterNotFound',
    message:
      /EtcdCluster demo not found in namespace prod; the snapshot is taken once it exists .*until 2026-11-22T11:00:00Z/,
    write: true,
  },
  {
    name: 'no cluster, already Pending saying so → no write',
    state: state({
      cluster: undefined,
      snapshot: snapshot(
        waiting(
          'ClusterNotFound',
          'EtcdCluster demo not found in namespace prod; the snapshot is taken once it exists and has a ready member (until 2026-11-22T11:00:00Z)',
        ),
      ),
    }),
    step: 'wait',
    phase: 'Pending',
    write: false,
  },
  {
    name: 'no ready Pod → Pending',
    state: state({ readyPods: [] }),
    step: 'wait',
    phase: 'Pending',
    reason: 'NoReadyMember',
    message: /EtcdCluster demo has no ready voting member .*\(cluster phase Running\); retried every minute/,
    write: true,
  },
  {
    name: 'only a learner is ready → Pending',
    state: state({
      cluster: runningCluster([
        { name: 'demo-0', leader: true },
        { name: 'demo-3', role: 'learner' },
      ]),
      readyPods: ['demo-3'],
    }),
    step: 'wait',
    reason: 'NoReadyMember',
    write: true,
  },
  {
    name: 'Pods ready but the cluster lists no members yet → Pending',
    state: state({ cluster: { ...runningCluster(), status: { phase: 'Bootstrapping' } } }),
    step: 'wait',
    reason: 'NoReadyMember',
    message: /cluster phase Bootstrapping/,
    write: true,
  },
  {
    name: 'was Pending for want of a member, a member is ready now → claim',
    state: state({ snapshot: snapshot(waiting('NoReadyMember', 'no ready member')) }),
    step: 'claim',
    phase: 'Started',
    reason: 'InProgress',
    write: true,
  },
  {
    name: 'the cluster is being deleted → Failed',
    state: state({ cluster: runningCluster(THREE, {}, true) }),
    step: 'fail',
    reason: 'ClusterDeleted',
    write: true,
  },
  {
    name: 'a cluster with client mTLS from Secrets → claim (the stream is dialled with its access)',
    state: state({
      cluster: runningCluster(THREE, {
        tls: {
          client: { serverSecretRef: { name: 'demo-server' }, operatorClientSecretRef: { name: 'demo-op' } },
          peer: { secretRef: { name: 'demo-peer' } },
        },
      }),
    }),
    step: 'claim',
    phase: 'Started',
    reason: 'InProgress',
    write: true,
    event: 'SnapshotStarted',
  },
  {
    name: 'a cluster with auth, to S3 → claim (the stream logs in as root)',
    state: state({ cluster: runningCluster(THREE, { auth: { enabled: true } }) }),
    step: 'claim',
    phase: 'Started',
    reason: 'InProgress',
    write: true,
    event: 'SnapshotStarted',
  },
  {
    name: 'a cluster with auth, to a PVC → claim, then a Job (its agent logs in as root)',
    state: state({
      snapshot: snapshot(undefined, PVC),
      claimFound: true,
      secretKeys: undefined,
      cluster: runningCluster(THREE, { auth: { enabled: true } }),
    }),
    step: 'claim-job',
    phase: 'Started',
    reason: 'InProgress',
    message: /to pvc:\/\/backups\/before-upgrade-snap-uid\.db/,
    write: true,
    event: 'SnapshotStarted',
  },
  {
    name: 'Started a minute ago → another invocation has it',
    state: state({ snapshot: snapshot(started(MIN)) }),
    step: 'nothing',
    write: false,
  },
  {
    name: 'Started a minute ago, even with the cluster gone',
    state: state({ snapshot: snapshot(started(MIN)), cluster: undefined }),
    step: 'nothing',
    write: false,
  },
  {
    name: 'Started longer ago than the stale timeout → retake',
    state: state({ snapshot: snapshot(started(TIMINGS.staleAfterMs + 1000)), now: at(30 * MIN) }),
    step: 'claim',
    phase: 'Started',
    reason: 'Retaking',
    message: /did not finish \(its invocation stopped\); taking the snapshot again/,
    write: true,
    event: 'SnapshotRetaken',
  },
  {
    name: 'Started stale, but no member ready now → Pending',
    state: state({
      snapshot: snapshot(started(TIMINGS.staleAfterMs + 1000)),
      now: at(30 * MIN),
      readyPods: [],
    }),
    step: 'wait',
    phase: 'Pending',
    reason: 'NoReadyMember',
    write: true,
  },
  {
    name: 'Started with no startTime (hand-edited) → taken again',
    state: state({ snapshot: snapshot({ phase: 'Started' }) }),
    step: 'claim',
    reason: 'Retaking',
    write: true,
  },
  {
    name: 'a failed attempt 10 s ago → wait for the retry delay',
    state: state({
      snapshot: snapshot({
        ...waiting('AttemptFailed', 'boom'),
        startTime: iso(new Date(NOW.getTime() - 10_000)),
      }),
    }),
    step: 'nothing',
    message: /next attempt after 2026-11-22T10:02:20Z/,
    write: false,
  },
  {
    name: 'a failed attempt longer ago than the retry delay → claim again',
    state: state({
      snapshot: snapshot({
        ...waiting('AttemptFailed', 'boom'),
        startTime: iso(new Date(NOW.getTime() - 31_000)),
      }),
    }),
    step: 'claim',
    reason: 'InProgress',
    write: true,
  },
  {
    name: 'past the deadline, Pending → Failed with the last reason',
    state: state({
      now: LATE,
      cluster: undefined,
      snapshot: snapshot(waiting('ClusterNotFound', 'EtcdCluster demo not found')),
    }),
    step: 'fail',
    phase: 'Failed',
    reason: 'DeadlineExceeded',
    message:
      /not taken within 60 minutes of its creation; last: EtcdCluster demo not found; create a new EtcdSnapshot/,
    write: true,
    event: 'SnapshotFailed',
  },
  {
    name: 'past the deadline with a stale attempt → Failed, the attempt never finished',
    state: state({ now: LATE, snapshot: snapshot(started(TIMINGS.staleAfterMs + 1000)) }),
    step: 'fail',
    reason: 'DeadlineExceeded',
    message: /the attempt started at .* never finished/,
    write: true,
  },
  {
    name: 'past the deadline with a running attempt → left to finish',
    state: state({ now: LATE, snapshot: snapshot(started(MIN, {}, LATE)) }),
    step: 'nothing',
    write: false,
  },
];

describe('planSnapshot', () => {
  for (const row of rows) {
    it(row.name, () => {
      const plan = planSnapshot(row.state);
      assert.equal(plan.step.kind, row.step, plan.step.reason);
      assert.equal(plan.statusChanged, row.write, 'status write');
      if (!row.write) assert.deepEqual(plan.status, row.state.snapshot.status ?? {}, 'status unchanged');
      if (row.phase) assert.equal(plan.status.phase, row.phase);
      if (row.reason) assert.equal(ready(plan)?.reason, row.reason);
      if (row.message)
        assert.match(row.step === 'nothing' ? plan.step.reason : (ready(plan)?.message ?? ''), row.message);
      if (row.event)
        assert.deepEqual(
          plan.events.map(e => e.reason),
          [row.event],
        );
      if (row.write && plan.status.phase === 'Failed') {
        assert.equal(plan.status.completionTime, iso(row.state.now));
        assert.equal(ready(plan)?.status, 'False');
      }
      if (row.step === 'claim') {
        assert.equal(plan.status.startTime, iso(row.state.now));
        assert.equal(plan.status.completionTime, undefined);
      }
    });
  }

  it('a claim streams from followers first, the leader last, never a learner or an unready member', () => {
    const c = runningCluster([
      { name: 'demo-0', leader: true },
      { name: 'demo-4' },
      { name: 'demo-2' },
      { name: 'demo-3', role: 'learner' },
      { name: 'demo-5' },
    ]);
    const plan = planSnapshot(state({ cluster: c, readyPods: ['demo-0', 'demo-2', 'demo-3', 'demo-4'] }));
    assert.equal(plan.step.kind, 'claim');
    if (plan.step.kind !== 'claim') return;
    assert.deepEqual(
      plan.step.sources.map(s => `${s.member}${s.leader ? '*' : ''}`),
      ['demo-2', 'demo-4', 'demo-0*'],
    );
    assert.equal(plan.step.sources[0]?.endpoint, 'http://demo-2.demo.prod.svc:2379');
  });

  it('the only ready member being the leader is fine', () => {
    const sources = snapshotSources(runningCluster([{ name: 'demo-0', leader: true }]), ['demo-0']);
    assert.deepEqual(sources, [
      { member: 'demo-0', endpoint: 'http://demo-0.demo.prod.svc:2379', leader: true },
    ]);
  });

  it('a claim targets <key><namespace>/<cluster>/<name>-<uid8>.db with region us-east-1 and path style for a custom endpoint', () => {
    const plan = planSnapshot(state());
    assert.equal(plan.step.kind, 'claim');
    if (plan.step.kind !== 'claim') return;
    assert.deepEqual(plan.step.target, {
      endpoint: 'http://minio.backup.svc:9000',
      bucket: 'etcd',
      key: 'prod/prod/demo/before-upgrade-snap-uid.db',
      region: 'us-east-1',
      forcePathStyle: true,
      secretName: 'backup-creds',
      uri: 's3://etcd/prod/prod/demo/before-upgrade-snap-uid.db',
      ownerUid: 'snap-uid',
    });
  });

  it('a claim clears what a previous attempt left and keeps other conditions', () => {
    const previous: EtcdSnapshotStatus = {
      ...waiting('AttemptFailed', 'boom'),
      startTime: iso(at(0)),
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'AttemptFailed',
          message: 'boom',
          lastTransitionTime: iso(at(0)),
        },
        { type: 'Other', status: 'True', reason: 'X', message: 'kept', lastTransitionTime: iso(at(0)) },
      ],
    };
    const plan = planSnapshot(state({ snapshot: snapshot(previous) }));
    assert.equal(plan.step.kind, 'claim');
    assert.deepEqual(
      plan.status.conditions?.map(c => c.type),
      ['Ready', 'Other'],
    );
    assert.equal(ready(plan)?.lastTransitionTime, iso(at(0)), 'Ready stays False: its transition time stays');
  });
});

describe('S3 locations', () => {
  const owner = { namespace: 'team-a', cluster: 'c', name: 's', uid: '0123456789abcdef' };
  it('key: <prefix><namespace>/<cluster>/<name>-<uid8>.db; the prefix used as given; none means the bucket root', () => {
    const noKey = s3Target({ ...S3.s3!, key: undefined }, owner);
    assert.equal(noKey.key, 'team-a/c/s-01234567.db');
    assert.equal(noKey.uri, 's3://etcd/team-a/c/s-01234567.db');
    assert.equal(noKey.ownerUid, '0123456789abcdef');
    assert.equal(s3Target({ ...S3.s3!, key: 'a/b-' }, owner).key, 'a/b-team-a/c/s-01234567.db');
  });
  it('same-named snapshots of other namespaces, or re-created under their name, never share a key', () => {
    const keys = [
      owner,
      { ...owner, namespace: 'team-b' },
      { ...owner, cluster: 'd' },
      { ...owner, uid: 'fedcba9876543210' },
    ].map(o => s3Target(S3.s3!, o).key);
    assert.equal(new Set(keys).size, keys.length, keys.join(', '));
  });
  it('region from the spec, else us-east-1', () => {
    assert.equal(s3Target({ ...S3.s3!, region: 'eu-west-1' }, owner).region, 'eu-west-1');
    assert.equal(s3Target(S3.s3!, owner).region, 'us-east-1');
  });
  it('path style for custom endpoints, virtual-hosted for AWS, and what the spec says wins', () => {
    assert.equal(usePathStyle({ endpoint: 'http://127.0.0.1:9000' }), true);
    assert.equal(usePathStyle({ endpoint: 'https://s3.eu-west-1.amazonaws.com' }), false);
    assert.equal(
      usePathStyle({ endpoint: 'https://s3.eu-west-1.amazonaws.com', forcePathStyle: true }),
      true,
    );
    assert.equal(usePathStyle({ endpoint: 'http://minio:9000', forcePathStyle: false }), false);
  });
});

describe('planOutcome', () => {
  const claimed = snapshot({
    phase: 'Started',
    startTime: iso(NOW),
    conditions: [
      {
        type: 'Ready',
        status: 'False',
        reason: 'InProgress',
        message: 'taking',
        lastTransitionTime: iso(NOW),
      },
    ],
  });
  const DONE = new Date(NOW.getTime() + 5000);
  const artifact = {
    uri: 's3://etcd/prod/prod/demo/before-upgrade-snap-uid.db',
    sizeBytes: 2_621_440,
    checksum: `sha256:${'ab'.repeat(32)}`,
    revision: 1042,
    etag: '"0123abcd"',
  };
  const verified = (plan: SnapshotPlan) => findCondition(plan.status.conditions, 'Verified');

  it('verified → Complete with the artifact, Ready True, Verified True saying what was checked, and a Normal Event', () => {
    const plan = planOutcome(
      claimed,
      {
        kind: 'verified',
        source: 'demo-1',
        artifact,
        verification: 'read back 2621440 bytes: all checks pass',
      },
      DONE,
    );
    assert.equal(verified(plan)?.status, 'True');
    assert.equal(verified(plan)?.message, 'read back 2621440 bytes: all checks pass');
    assert.equal(plan.status.phase, 'Complete');
    assert.deepEqual(plan.status.artifact, artifact);
    assert.equal(plan.status.completionTime, iso(DONE));
    assert.equal(plan.status.startTime, iso(NOW));
    assert.equal(ready(plan)?.status, 'True');
    assert.equal(ready(plan)?.reason, 'Complete');
    assert.match(
      ready(plan)?.message ?? '',
      /at revision 1042 \(2\.5 MiB\) stored at s3:\/\/etcd\/prod\/prod\/demo\/before-upgrade-snap-uid\.db, taken from member demo-1/,
    );
    assert.deepEqual(
      plan.events.map(e => [e.type, e.reason]),
      [['Normal', 'SnapshotComplete']],
    );
  });

  const refused: [string, string, RegExp][] = [
    [
      'NoSuchBucket',
      'The specified bucket does not exist',
      /create bucket etcd at http:\/\/minio\.backup\.svc:9000 or fix destination\.s3\.bucket/,
    ],
    ['InvalidAccessKeyId', 'unknown key', /check AWS_ACCESS_KEY_ID in Secret backup-creds/],
    ['SignatureDoesNotMatch', 'bad signature', /check AWS_SECRET_ACCESS_KEY in Secret backup-creds/],
    [
      'AccessDenied',
      'denied',
      /give the key in Secret backup-creds s3:PutObject on s3:\/\/etcd\/prod\/prod\/demo\/before-upgrade-snap-uid\.db/,
    ],
    ['SomethingElse', 'odd', /check destination\.s3 and the credentials in Secret backup-creds/],
  ];
  for (const [code, message, hint] of refused) {
    it(`S3 refuses with ${code} → Failed with what to do`, () => {
      const plan = planOutcome(claimed, { kind: 's3-refused', code, message }, DONE);
      assert.equal(plan.status.phase, 'Failed');
      assert.equal(plan.status.completionTime, iso(DONE));
      assert.equal(ready(plan)?.reason, 'UploadRefused');
      assert.match(
        ready(plan)?.message ?? '',
        new RegExp(
          `S3 refused the upload to s3://etcd/prod/prod/demo/before-upgrade-snap-uid\\.db: ${code}: ${message}`,
        ),
      );
      assert.match(ready(plan)?.message ?? '', hint);
      assert.equal(plan.status.artifact, undefined);
      assert.deepEqual(
        plan.events.map(e => [e.type, e.reason]),
        [['Warning', 'SnapshotFailed']],
      );
    });
  }

  it('the Secret lost its keys meanwhile → Failed', () => {
    const plan = planOutcome(
      claimed,
      { kind: 'credentials-invalid', message: 'Secret backup-creds disappeared' },
      DONE,
    );
    assert.equal(plan.status.phase, 'Failed');
    assert.equal(ready(plan)?.reason, 'CredentialsInvalid');
  });

  const retried: Extract<
    TakeOutcome,
    { kind: 'etcd-unavailable' | 's3-unavailable' | 'timed-out' | 'error' }
  >[] = [
    { kind: 'etcd-unavailable', message: 'no member served a snapshot' },
    { kind: 's3-unavailable', message: 'ECONNREFUSED' },
    { kind: 'timed-out', message: 'aborted' },
    { kind: 'error', message: 'get Secret failed: 500' },
  ];
  for (const outcome of retried) {
    it(`${outcome.kind} → back to Pending, keeping startTime, retried after the delay`, () => {
      const plan = planOutcome(claimed, outcome, DONE);
      assert.equal(plan.step.kind, 'wait');
      assert.equal(plan.status.phase, 'Pending');
      assert.equal(plan.status.startTime, iso(NOW));
      assert.equal(plan.status.completionTime, undefined);
      assert.equal(ready(plan)?.reason, 'AttemptFailed');
      assert.match(ready(plan)?.message ?? '', new RegExp(`${outcome.message}; retrying`));
      assert.deepEqual(
        plan.events.map(e => e.reason),
        ['SnapshotAttemptFailed'],
      );
      // The released snapshot, seen again at once (its own update event): nothing, no write.
      const again = planSnapshot(state({ snapshot: snapshot(plan.status), now: DONE }));
      assert.equal(again.step.kind, 'nothing');
      assert.equal(again.statusChanged, false);
      // After the retry delay (the tick): claimed again.
      const later = planSnapshot(
        state({ snapshot: snapshot(plan.status), now: new Date(NOW.getTime() + TIMINGS.retryDelayMs) }),
      );
      assert.equal(later.step.kind, 'claim');
    });
  }
});

describe('snapshot timings', () => {
  it('defaults: an attempt ends before Knative’s 600 s request timeout; stale only after that', () => {
    const t = snapshotTimingsFromEnv({});
    assert.ok(t.attemptTimeoutMs < 600_000);
    assert.ok(t.staleAfterMs >= 600_000);
    assert.equal(t.retryDelayMs, 30_000);
    assert.equal(t.deadlineMs, 3_600_000);
  });
  it('from the environment, ignoring nonsense', () => {
    const t = snapshotTimingsFromEnv({
      ETCDFN_SNAPSHOT_ATTEMPT_TIMEOUT_SECONDS: '20',
      ETCDFN_SNAPSHOT_STALE_GRACE_SECONDS: '5',
      ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS: 'soon',
      ETCDFN_SNAPSHOT_DEADLINE_SECONDS: '-1',
    });
    assert.deepEqual(t, {
      attemptTimeoutMs: 20_000,
      staleAfterMs: 25_000,
      retryDelayMs: 30_000,
      deadlineMs: 3_600_000,
    });
  });
});

describe('run-snapshot targets', () => {
  const event = (
    apiVersion: string,
    kind: string,
    verb: ObjectEvent['verb'],
    mode: ObjectEvent['mode'] = 'Reference',
  ): ObjectEvent => ({
    id: '1',
    source: 's',
    type: `dev.knative.apiserver.${mode === 'Reference' ? 'ref' : 'resource'}.${verb}`,
    kind: 'object',
    mode,
    verb,
    ref: { apiVersion, kind, namespace: 'prod', name: 'x' },
  });
  const tick: TickEvent = {
    id: '2',
    source: 'ping',
    type: 'dev.knative.sources.ping',
    kind: 'tick',
    data: {},
  };
  const snap = { kind: 'snapshot', namespace: 'prod', name: 'x' };

  it('EtcdSnapshot events, both modes, every verb → that snapshot (the read decides)', () => {
    for (const verb of ['add', 'update', 'delete'] as const) {
      for (const mode of ['Reference', 'Resource'] as const) {
        assert.deepEqual(snapshotTarget(event('etcdfn.io/v1alpha1', 'EtcdSnapshot', verb, mode)), snap);
      }
    }
  });
  it('the tick → every schedule and every unfinished snapshot', () => {
    assert.deepEqual(snapshotTarget(tick), { kind: 'resync' });
  });
  it('schedule events, every verb → that schedule; Jobs → the Job (its owner is read); anything else → ignored', () => {
    for (const verb of ['add', 'update', 'delete'] as const) {
      assert.deepEqual(snapshotTarget(event('etcdfn.io/v1alpha1', 'EtcdSnapshotSchedule', verb)), {
        kind: 'schedule',
        namespace: 'prod',
        name: 'x',
      });
    }
    assert.equal(snapshotTarget(event('batch/v1', 'Job', 'update')).kind, 'job');
    assert.equal(snapshotTarget(event('v1', 'Pod', 'update')).kind, 'ignore');
    assert.equal(snapshotTarget(event('other.io/v1', 'EtcdSnapshot', 'add')).kind, 'ignore');
  });
});

describe('planSnapshot: endpoint policy, deletionPolicy and release', () => {
  const withPolicy = (
    policy: 'Retain' | 'Delete',
    extra: Partial<EtcdSnapshot['metadata']> = {},
    status?: EtcdSnapshotStatus,
  ) => {
    const s = snapshot(status);
    return { ...s, metadata: { ...s.metadata, ...extra }, spec: { ...s.spec, deletionPolicy: policy } };
  };

  it('an endpoint the policy refuses → Failed with the policy message, before any claim', () => {
    const plan = planSnapshot(
      state({
        endpoint: {
          allowed: false,
          reason: 'EndpointLinkLocal',
          message: 'destination.s3.endpoint http://169.254.169.254 is a link-local address',
        },
      }),
    );
    assert.equal(plan.step.kind, 'fail');
    assert.equal(plan.status.phase, 'Failed');
    assert.equal(ready(plan)?.reason, 'EndpointLinkLocal');
    assert.match(ready(plan)?.message ?? '', /link-local address; then create a new EtcdSnapshot/);
  });

  it('an allowed endpoint claims as before', () => {
    assert.equal(planSnapshot(state({ endpoint: { allowed: true, allowListed: true } })).step.kind, 'claim');
  });

  it('deletionPolicy Delete without the finalizer → add it first, no status write', () => {
    const plan = planSnapshot(state({ snapshot: withPolicy('Delete') }));
    assert.equal(plan.step.kind, 'add-finalizer');
    assert.equal(plan.statusChanged, false);
  });

  it('deletionPolicy Delete with the finalizer → claims; Retain never adds one', () => {
    const s = withPolicy('Delete', { finalizers: ['etcdfn.io/snapshot-object'] });
    assert.equal(planSnapshot(state({ snapshot: s })).step.kind, 'claim');
    assert.equal(planSnapshot(state({ snapshot: withPolicy('Retain') })).step.kind, 'claim');
  });

  const deleting = { deletionTimestamp: NOW, finalizers: ['etcdfn.io/snapshot-object'] };
  const complete: EtcdSnapshotStatus = {
    phase: 'Complete',
    artifact: { uri: 's3://etcd/prod/prod/demo/before-upgrade-snap-uid.db', etag: '"e1"' },
  };

  it('deleting, Delete, recorded URI at its own key → release deleting that object with the recorded ETag', () => {
    const plan = planSnapshot(state({ snapshot: withPolicy('Delete', deleting, complete) }));
    assert.equal(plan.step.kind, 'release');
    if (plan.step.kind !== 'release') return;
    assert.equal(plan.step.object?.target.uri, 's3://etcd/prod/prod/demo/before-upgrade-snap-uid.db');
    assert.equal(plan.step.object?.etag, '"e1"');
    assert.equal(plan.statusChanged, false);
  });

  it('deleting, Delete, nothing recorded (an attempt that stopped) → release checking the owner only', () => {
    const plan = planSnapshot(
      state({ snapshot: withPolicy('Delete', deleting, { phase: 'Started', startTime: iso(NOW) }) }),
    );
    assert.equal(plan.step.kind, 'release');
    if (plan.step.kind !== 'release') return;
    assert.ok(plan.step.object);
    assert.equal(plan.step.object.etag, undefined);
  });

  it('deleting, Delete, never claimed (e.g. Failed for a missing Secret) → release without asking the store', () => {
    const failed: EtcdSnapshotStatus = { phase: 'Failed' };
    const plan = planSnapshot(state({ snapshot: withPolicy('Delete', deleting, failed) }));
    assert.equal(plan.step.kind, 'release');
    if (plan.step.kind === 'release') assert.equal(plan.step.object, undefined);
  });

  it('deleting, Delete, status records another URI → release without deleting anything', () => {
    const other = { ...complete, artifact: { uri: 's3://etcd/prod/before-upgrade.db', etag: '"e1"' } };
    const plan = planSnapshot(state({ snapshot: withPolicy('Delete', deleting, other) }));
    assert.equal(plan.step.kind, 'release');
    if (plan.step.kind === 'release') assert.equal(plan.step.object, undefined);
  });

  it('deleting, Retain (finalizer somehow there) → release without deleting; no finalizer → nothing', () => {
    const plan = planSnapshot(state({ snapshot: withPolicy('Retain', deleting, complete) }));
    assert.equal(plan.step.kind, 'release');
    if (plan.step.kind === 'release') assert.equal(plan.step.object, undefined);
    const bare = planSnapshot(
      state({ snapshot: withPolicy('Delete', { deletionTimestamp: NOW }, complete) }),
    );
    assert.equal(bare.step.kind, 'nothing');
  });
});

describe('planOutcome: verification and refusals', () => {
  const claimed = snapshot({ phase: 'Started', startTime: iso(NOW) });
  const artifact = {
    uri: 's3://etcd/prod/prod/demo/before-upgrade-snap-uid.db',
    sizeBytes: 4128,
    checksum: `sha256:${'cd'.repeat(32)}`,
    revision: 7,
    etag: '"e1"',
  };

  for (const reason of [
    'ChecksumMismatch',
    'IntegrityCheckFailed',
    'ObjectChanged',
    'ReadBackRefused',
  ] as const) {
    it(`verify-failed (${reason}) → Failed, Verified False, artifact kept in status, object kept`, () => {
      const plan = planOutcome(
        claimed,
        { kind: 'verify-failed', source: 'demo-0', artifact, reason, message: 'verification failed: x' },
        NOW,
      );
      assert.equal(plan.status.phase, 'Failed');
      assert.equal(ready(plan)?.reason, 'VerificationFailed');
      assert.match(
        ready(plan)?.message ?? '',
        /the object is kept at s3:\/\/etcd\/prod\/prod\/demo\/before-upgrade-snap-uid\.db/,
      );
      const verified = findCondition(plan.status.conditions, 'Verified');
      assert.equal(verified?.status, 'False');
      assert.equal(verified?.reason, reason);
      assert.deepEqual(plan.status.artifact, artifact);
      assert.deepEqual(
        plan.events.map(e => e.reason),
        ['SnapshotVerificationFailed'],
      );
    });
  }

  it('object-exists → Failed ObjectExists, no artifact', () => {
    const plan = planOutcome(
      claimed,
      {
        kind: 'object-exists',
        message: 's3://b/k holds an object this EtcdSnapshot did not write; it is left as it is',
      },
      NOW,
    );
    assert.equal(plan.status.phase, 'Failed');
    assert.equal(ready(plan)?.reason, 'ObjectExists');
    assert.equal(plan.status.artifact, undefined);
    assert.equal(findCondition(plan.status.conditions, 'Verified'), undefined);
  });

  it('endpoint-refused → Failed with the policy reason', () => {
    const plan = planOutcome(
      claimed,
      { kind: 'endpoint-refused', reason: 'EndpointLoopback', message: 'loopback' },
      NOW,
    );
    assert.equal(plan.status.phase, 'Failed');
    assert.equal(ready(plan)?.reason, 'EndpointLoopback');
  });
});
