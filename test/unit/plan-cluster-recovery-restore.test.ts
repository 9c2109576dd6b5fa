// Quorum-loss recovery by restore (spec.recovery.policy RestoreLatestSnapshot), the pure decisions:
// which snapshot is "the newest verified one of this cluster", when the grace is over, the record
// that starts the in-place restore (once per etcd cluster), what is said when nothing can be restored,
// and that the in-place steps then go on without a quorum (members deleted, finalize-member lets them
// go without asking etcd).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster, EtcdClusterStatus, InPlaceRestoreStatus } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { MEMBER_FINALIZER } from '../../shared/names.ts';
import { planCluster } from '../../shared/plan/cluster/plan.ts';
import { quorumLoss, recoveryWaits } from '../../shared/plan/recovery/quorum-loss.ts';
import type { ClusterState, EtcdView } from '../../shared/plan/cluster/types.ts';
import { needsEtcd, planFinalize } from '../../shared/plan/member/finalize.ts';
import { pendingRequest } from '../../shared/plan/restore/in-place-status.ts';
import {
  latestVerifiedSnapshot,
  resolveRecovery,
} from '../../shared/plan/recovery/restore-latest-snapshot.ts';
import { cluster, etcdOf, locked, member, membership, NOW, state } from '../support/cluster-world.ts';
import type { RecoverySnapshot } from '../../shared/plan/recovery/types.ts';

const ID = 'c0ffee0000000001';
const KEYS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];
const s3 = {
  endpoint: 'http://s3.local:9000',
  bucket: 'b',
  key: 'demo/',
  credentialsSecretRef: { name: 'creds' },
};
const ago = (seconds: number) =>
  new Date(NOW.getTime() - seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
const policy = { recovery: { policy: 'RestoreLatestSnapshot' as const } };

function snap(
  name: string,
  opts: {
    cluster?: string;
    namespace?: string;
    completed?: string;
    created?: string;
    revision?: number;
    phase?: string;
    verified?: 'True' | 'False' | 'none';
    deleting?: boolean;
  } = {},
): EtcdSnapshot {
  const phase = opts.phase ?? 'Complete';
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: {
      name,
      namespace: opts.namespace ?? 'prod',
      creationTimestamp: new Date(opts.created ?? ago(3600)),
      ...(opts.deleting && { deletionTimestamp: NOW }),
    },
    spec: { clusterRef: { name: opts.cluster ?? 'demo' }, destination: { s3 } },
    status: {
      phase,
      completionTime: opts.completed ?? ago(600),
      artifact: {
        uri: `s3://b/demo/${name}.db`,
        checksum: `sha256:${'ab'.repeat(32)}`,
        revision: opts.revision ?? 300,
      },
      conditions:
        opts.verified === 'none'
          ? []
          : [
              {
                type: 'Verified',
                status: opts.verified ?? 'True',
                reason: 'ReadBackVerified',
                message: '',
                lastTransitionTime: ago(600),
              },
            ],
    },
  } as EtcdSnapshot;
}

const born = (c: EtcdCluster): EtcdCluster => ({
  ...c,
  metadata: { ...c.metadata, creationTimestamp: new Date(ago(7200)) },
});

describe('latestVerifiedSnapshot: the newest verified snapshot of this cluster', () => {
  const c = born(cluster(policy));
  const rows: [string, EtcdSnapshot[], string | undefined][] = [
    ['none at all', [], undefined],
    [
      'the newest by completion time',
      [snap('old', { completed: ago(900) }), snap('new', { completed: ago(60) })],
      'new',
    ],
    [
      'time, not revision: after an earlier restore revisions restart',
      [
        snap('before-restore', { completed: ago(900), revision: 9000 }),
        snap('after', { completed: ago(60), revision: 400 }),
      ],
      'after',
    ],
    ['same time: the higher revision', [snap('a', { revision: 5 }), snap('b', { revision: 7 })], 'b'],
    [
      'another cluster’s snapshot is not this one’s',
      [snap('other', { cluster: 'prod2', completed: ago(1) }), snap('mine')],
      'mine',
    ],
    ['another namespace', [snap('elsewhere', { namespace: 'dev', completed: ago(1) }), snap('mine')], 'mine'],
    ['not verified', [snap('unverified', { verified: 'False', completed: ago(1) }), snap('mine')], 'mine'],
    [
      'no Verified condition',
      [snap('legacy', { verified: 'none', completed: ago(1) }), snap('mine')],
      'mine',
    ],
    ['not Complete', [snap('failed', { phase: 'Failed', completed: ago(1) }), snap('mine')], 'mine'],
    ['being deleted', [snap('going', { deleting: true, completed: ago(1) }), snap('mine')], 'mine'],
    [
      'made before the cluster (an earlier cluster of the same name)',
      [snap('ancestor', { created: ago(9000), completed: ago(8999) })],
      undefined,
    ],
  ];
  for (const [what, snapshots, expected] of rows) {
    it(`${what} → ${expected ?? 'none'}`, () => {
      assert.equal(latestVerifiedSnapshot(c, snapshots)?.metadata.name, expected);
    });
  }
});

describe('resolveRecovery', () => {
  const c = born(cluster(policy));
  it('nothing verified: none, with the count of this cluster’s snapshots looked at', () => {
    assert.deepEqual(
      resolveRecovery(c, { snapshots: [snap('x', { verified: 'False' }), snap('y', { cluster: 'z' })] }),
      {
        kind: 'none',
        considered: 1,
      },
    );
  });
  it('the chosen snapshot’s Secret is missing: blocked, naming the snapshot', () => {
    const r = resolveRecovery(c, { snapshots: [snap('nightly')], secretKeys: null });
    assert.equal(r.kind, 'blocked');
    assert.equal(r.kind === 'blocked' && r.reason, 'SecretNotFound');
    assert.equal(r.kind === 'blocked' && r.snapshot.name, 'nightly');
  });
  it('ready: the recorded object and checksum, the revision and the time', () => {
    const r = resolveRecovery(c, { snapshots: [snap('nightly')], secretKeys: KEYS });
    assert.deepEqual(r, {
      kind: 'ready',
      snapshot: { name: 'nightly', revision: 300, takenAt: ago(600) },
      restore: { source: { s3: { ...s3, key: 'demo/nightly.db' }, sha256: 'ab'.repeat(32) } },
      sourceName: 'EtcdSnapshot nightly (s3://b/demo/nightly.db)',
    });
  });
});

const READY: RecoverySnapshot = {
  kind: 'ready',
  snapshot: { name: 'nightly', revision: 300, takenAt: ago(600) },
  restore: { source: { s3: { ...s3, key: 'demo/nightly.db' }, sha256: 'ab'.repeat(32) } },
  sourceName: 'EtcdSnapshot nightly (s3://b/demo/nightly.db)',
};

const lost = (n: number): EtcdMember => {
  const m = member(n);
  m.status = {
    ...m.status,
    dataLoss: { reason: 'PVCMissing', message: `PVC data-demo-${n} is gone`, detectedAt: ago(60) },
  };
  return m;
};

const quorumLost = (since: number) => ({
  type: 'Available',
  status: 'False' as const,
  reason: 'QuorumLost',
  message: '',
  lastTransitionTime: ago(since),
});

/**
 * demo-0 alive but not ready (no quorum), demo-1 and demo-2 lost their data (or merely down);
 * status recorded QuorumLost `since` seconds ago (undefined: not recorded yet).
 */
function world(
  opts: {
    since?: number;
    spec?: Partial<EtcdCluster['spec']>;
    status?: EtcdClusterStatus;
    dataLost?: boolean;
    etcd?: EtcdView;
    recovery?: RecoverySnapshot | null;
  } = {},
): ClusterState {
  const conditions = opts.since === undefined ? [] : [quorumLost(opts.since)];
  const c = cluster(opts.spec ?? policy, locked(3, { clusterID: ID, conditions, ...opts.status }));
  const members = opts.dataLost === false ? [member(0), member(1), member(2)] : [member(0), lost(1), lost(2)];
  const s = state(c, members, { ready: [], ...(opts.etcd && { etcd: opts.etcd }) });
  s.etcd = opts.etcd ?? { reachable: false, error: 'context deadline exceeded' };
  if (opts.recovery !== null) s.recoverySnapshot = opts.recovery ?? READY;
  return s;
}

const cond = (status: EtcdClusterStatus, type: string) => status.conditions?.find(c => c.type === type);

describe('planCluster: quorum lost with spec.recovery.policy RestoreLatestSnapshot', () => {
  it('first seen (status has not said QuorumLost yet): nothing starts; the message says what will happen and when', () => {
    const plan = planCluster(world());
    assert.equal(plan.status.inPlaceRestore, undefined);
    assert.notEqual(plan.action.kind, 'delete-members');
    const available = cond(plan.status, 'Available');
    assert.equal(available?.reason, 'QuorumLost');
    assert.match(
      available?.message ?? '',
      /unless a majority is ready again by 2026-11-22T10:00:30Z, etcdfn restores EtcdSnapshot nightly \(revision 300, taken 2026-11-22T09:50:00Z\) in place and every write made after it is lost/,
    );
    assert.doesNotMatch(available?.message ?? '', /etcdfn changes nothing/);
  });

  it('recorded 10 s ago, a majority’s data lost (grace 30 s): not yet', () => {
    const plan = planCluster(world({ since: 10 }));
    assert.equal(plan.status.inPlaceRestore, undefined);
    assert.match(cond(plan.status, 'Available')?.message ?? '', /by 2026-11-22T10:00:20Z/);
  });

  it('recorded 31 s ago, a majority’s data lost: the newest verified snapshot is restored in place, recorded first', () => {
    const plan = planCluster(world({ since: 31 }));
    assert.deepEqual(
      plan.action,
      { kind: 'none' },
      'the record is the claim; the next event deletes the members',
    );
    const record = plan.status.inPlaceRestore;
    const expected: InPlaceRestoreStatus = {
      requestID: `recovery-${ID}`,
      snapshot: 'nightly',
      step: 'Stopping',
      source: READY.kind === 'ready' ? READY.restore : { source: {} },
      members: ['demo-0', 'demo-1', 'demo-2'],
      previousClusterID: ID,
      startedAt: NOW.toISOString(),
      recovery: {
        policy: 'RestoreLatestSnapshot',
        quorumLostSince: ago(31),
        dataLost: ['demo-1', 'demo-2'],
        revision: 300,
        snapshotTime: ago(600),
      },
    };
    assert.deepEqual(record, expected);
    assert.equal(plan.status.clusterID, ID);
    assert.equal(cond(plan.status, 'Progressing')?.reason, 'RestoringInPlace');
    assert.equal(cond(plan.status, 'Restored')?.reason, 'Stopping');
    assert.deepEqual(
      plan.events.map(e => [e.type, e.reason]),
      [['Warning', 'QuorumLossRecovery']],
    );
    assert.match(
      plan.events[0]?.message ?? '',
      /quorum lost since 2026-11-22T09:59:29Z \(data lost: demo-1, demo-2\); spec.recovery.policy RestoreLatestSnapshot: restoring EtcdSnapshot nightly \(revision 300, taken 2026-11-22T09:50:00Z\) in place \(request recovery-c0ffee0000000001\); every write made after it is lost/,
    );
  });

  it('members merely down (their data kept): the grace is 5 minutes, they may come back', () => {
    assert.equal(planCluster(world({ since: 60, dataLost: false })).status.inPlaceRestore, undefined);
    assert.equal(planCluster(world({ since: 301, dataLost: false })).status.inPlaceRestore?.step, 'Stopping');
  });

  it('ClusterUnreachable before QuorumLost: the time counts from when Available went False', () => {
    const since = { ...quorumLost(40), reason: 'ClusterUnreachable' };
    const first = world({ status: { conditions: [since] } });
    assert.equal(quorumLoss(first)?.since.toISOString(), new Date(ago(40)).toISOString());
    assert.equal(
      planCluster(first).status.inPlaceRestore,
      undefined,
      'a single QuorumLost observation never acts',
    );
  });

  const nothing: [string, () => ClusterState][] = [
    [
      'etcd answers (a linearizable member list needs a quorum)',
      () => world({ since: 600, etcd: etcdOf([0, 1, 2].map(n => membership(n))) }),
    ],
    ['the policy is ReportOnly', () => world({ since: 600, spec: { recovery: { policy: 'ReportOnly' } } })],
    ['no policy (ReportOnly by default)', () => world({ since: 600, spec: {} })],
    ['the snapshots were not looked at', () => world({ since: 600, recovery: null })],
    [
      'this etcd cluster was recovered already',
      () =>
        world({
          since: 600,
          status: {
            inPlaceRestore: {
              requestID: `recovery-${ID}`,
              snapshot: 'nightly',
              step: 'Done',
              source: { source: {} },
              members: [],
              startedAt: ago(900),
            },
          },
        }),
    ],
    [
      'the cluster is paused',
      () => {
        const s = world({ since: 600 });
        s.cluster = cluster(policy, locked(0, { clusterID: ID, conditions: [quorumLost(600)] }));
        return s;
      },
    ],
    [
      'a majority is ready',
      () => {
        const s = world({ since: 600, dataLost: false });
        s.pods = s.pods.map(p => ({ ...p, ready: p.name !== 'demo-2' }));
        return s;
      },
    ],
  ];
  for (const [what, make] of nothing) {
    it(`nothing is restored when ${what}`, () => {
      const plan = planCluster(make());
      assert.equal(plan.status.inPlaceRestore?.step === 'Stopping', false);
      assert.notEqual(plan.action.kind, 'delete-members');
      assert.ok(!plan.events.some(e => e.reason === 'QuorumLossRecovery'));
    });
  }

  it('ReportOnly: the QuorumLost message is the one it always was', () => {
    const plan = planCluster(world({ since: 600, spec: {} }));
    assert.match(
      cond(plan.status, 'Available')?.message ?? '',
      /etcdfn changes nothing while quorum is lost/,
    );
  });

  it('no verified snapshot: RecoveryBlocked says so and what to do, once; nothing changes', () => {
    const s = world({ since: 600, recovery: { kind: 'none', considered: 2 } });
    const plan = planCluster(s);
    assert.equal(plan.status.inPlaceRestore, undefined);
    assert.deepEqual(plan.action, { kind: 'none' });
    const progressing = cond(plan.status, 'Progressing');
    assert.equal(progressing?.reason, 'RecoveryBlocked');
    assert.equal(progressing?.status, 'False');
    assert.match(
      progressing?.message ?? '',
      /no verified EtcdSnapshot of this cluster to restore .*2 EtcdSnapshots of it found\), so etcdfn changes nothing. What you can do: .*spec.bootstrap.restore/,
    );
    assert.match(cond(plan.status, 'Available')?.message ?? '', /no verified EtcdSnapshot of this cluster/);
    assert.deepEqual(
      plan.events.map(e => e.reason),
      ['RecoveryBlocked'],
    );
    s.cluster = { ...s.cluster, status: plan.status };
    const again = planCluster(s);
    assert.deepEqual(again.events, [], 'said once');
    assert.deepEqual(again.status.conditions, plan.status.conditions);
  });

  it('the snapshot cannot be read back (Secret missing): RecoveryBlocked names it and the fix', () => {
    const plan = planCluster(
      world({
        since: 600,
        recovery: {
          kind: 'blocked',
          snapshot: { name: 'nightly', revision: 300 },
          reason: 'SecretNotFound',
          message: 'the S3 credentials Secret prod/creds does not exist; create it',
        },
      }),
    );
    assert.equal(plan.status.inPlaceRestore, undefined);
    assert.equal(cond(plan.status, 'Progressing')?.reason, 'RecoveryBlocked');
    assert.match(
      cond(plan.status, 'Progressing')?.message ?? '',
      /newest verified snapshot, EtcdSnapshot nightly \(revision 300\), cannot be restored: the S3 credentials Secret prod\/creds does not exist/,
    );
  });

  it('an earlier user request stays done: the recovery supersedes it, and it never runs afterwards', () => {
    const done: InPlaceRestoreStatus = {
      requestID: 'r1',
      snapshot: 'older',
      step: 'Done',
      source: { source: {} },
      members: [],
      startedAt: ago(9000),
    };
    const s = world({
      since: 600,
      spec: { ...policy, inPlaceRestore: { requestID: 'r1', snapshotRef: { name: 'older' } } },
      status: { inPlaceRestore: done },
    });
    const plan = planCluster(s);
    assert.equal(plan.status.inPlaceRestore?.recovery?.supersedesRequestID, 'r1');
    assert.equal(pendingRequest({ ...s.cluster, status: plan.status }), undefined);
  });
});

describe('crash windows of the recovery’s one new side effect (the record)', () => {
  it('before the record is written: the next invocation decides the same record from the same world', () => {
    const first = planCluster(world({ since: 31 }));
    const again = planCluster(world({ since: 31 }));
    assert.deepEqual(again.status.inPlaceRestore, first.status.inPlaceRestore);
    assert.deepEqual(again.events, first.events);
  });
  it('after it is written (the Event maybe lost): the next invocation carries on with Stopping, no second record', () => {
    const status = planCluster(world({ since: 31 })).status;
    const s = world({ since: 31, status });
    s.cluster = { ...s.cluster, status };
    const next = planCluster(s);
    assert.equal(next.action.kind, 'delete-members');
    assert.deepEqual(next.status.inPlaceRestore, status.inPlaceRestore);
    assert.ok(!next.events.some(e => e.reason === 'QuorumLossRecovery'));
  });
});

describe('a user request waiting when quorum is lost', () => {
  it('blocked (its snapshot missing): the recovery goes ahead, says the request is dropped, and it never runs afterwards', () => {
    const s = world({
      since: 600,
      spec: { ...policy, inPlaceRestore: { requestID: 'r9', snapshotRef: { name: 'gone' } } },
    });
    s.inPlaceRestore = { kind: 'blocked', reason: 'SnapshotNotFound', message: 'gone; nothing was changed' };
    const plan = planCluster(s);
    assert.equal(plan.status.inPlaceRestore?.requestID, `recovery-${ID}`);
    assert.equal(plan.status.inPlaceRestore?.recovery?.supersedesRequestID, 'r9');
    assert.match(plan.events[0]?.message ?? '', /the pending in-place restore request r9 is dropped/);
    assert.equal(pendingRequest({ ...s.cluster, status: plan.status }), undefined);
  });
  it('ready: the user’s own request is accepted first (it is a restore too)', () => {
    const s = world({
      since: 600,
      spec: { ...policy, inPlaceRestore: { requestID: 'r9', snapshotRef: { name: 'mine' } } },
    });
    s.inPlaceRestore = { kind: 'ready', restore: { source: {} }, sourceName: 'EtcdSnapshot mine' };
    const plan = planCluster(s);
    assert.equal(plan.status.inPlaceRestore?.requestID, 'r9');
    assert.equal(plan.status.inPlaceRestore?.recovery, undefined);
  });
});

describe('after the record: the in-place steps go on without a quorum', () => {
  const recorded = () => planCluster(world({ since: 31 })).status;

  it('Stopping: every member is deleted (no etcd call), data-lost or not', () => {
    const s = world({ status: recorded() });
    s.cluster = { ...s.cluster, status: recorded() };
    const plan = planCluster(s);
    assert.deepEqual(plan.action, { kind: 'delete-members', members: ['demo-0', 'demo-1', 'demo-2'] });
  });

  it('finalize-member lets each go without asking etcd (there is no quorum to ask)', () => {
    const c = { ...cluster(policy), status: recorded() };
    const m = member(0);
    m.metadata.deletionTimestamp = NOW;
    m.metadata.finalizers = [MEMBER_FINALIZER];
    const others = [lost(1), lost(2)];
    assert.equal(needsEtcd({ member: m, cluster: c, others }), false);
    const action = planFinalize({ member: m, cluster: c, others, tried: [], etcdError: 'no quorum' });
    assert.equal(action.kind, 'remove-finalizer');
  });

  it('while the restore runs, quorum loss starts nothing else (the restored cluster is not re-restored)', () => {
    const status = {
      ...recorded(),
      inPlaceRestore: { ...recorded().inPlaceRestore!, step: 'Restoring' as const },
    };
    const s = world({ status: { ...status, clusterID: 'beef' } });
    assert.equal(quorumLoss(s), undefined);
    assert.equal(recoveryWaits(s), false);
    const plan = planCluster(s);
    assert.equal(plan.status.inPlaceRestore?.requestID, `recovery-${ID}`);
    assert.match(
      cond(plan.status, 'Available')?.message ?? '',
      /an in-place restore of EtcdSnapshot nightly is under way \(request recovery-c0ffee0000000001; the Restored condition shows its step\)/,
    );
  });
});

describe('recoveryWaits: a wake-up looks again within a minute', () => {
  it('while the grace runs with a snapshot to restore', () =>
    assert.equal(recoveryWaits(world({ since: 5 })), true));
  it('while the snapshot cannot be read back yet', () =>
    assert.equal(
      recoveryWaits(
        world({
          since: 5,
          recovery: { kind: 'blocked', snapshot: { name: 'x' }, reason: 'R', message: 'm' },
        }),
      ),
      true,
    ));
  it('not without a snapshot, nor without the policy, nor with quorum', () => {
    assert.equal(recoveryWaits(world({ since: 5, recovery: { kind: 'none', considered: 0 } })), false);
    assert.equal(recoveryWaits(world({ since: 5, spec: {} })), false);
    assert.equal(recoveryWaits(world({ since: 5, etcd: etcdOf([0, 1, 2].map(n => membership(n))) })), false);
  });
});
