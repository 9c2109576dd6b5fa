// In-place restore, the pure decisions: a request is accepted only when it can work (the snapshot
// resolves, the cluster formed, idle and running), then Stopping → Restoring → Done through
// planCluster, each step a row; finalize-member lets the discarded members go; the Restored
// condition names the step.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus, InPlaceRestoreStatus } from '../../shared/api/etcd-cluster.ts';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { planCluster } from '../../shared/plan/cluster-plan.ts';
import type { ClusterState } from '../../shared/plan/cluster-state.ts';
import { needsEtcd, planFinalize } from '../../shared/plan/finalize-plan.ts';
import { resolveInPlace, restoredToken } from '../../shared/plan/in-place-restore.ts';
import { inPlaceSource } from '../../shared/plan/in-place-restore-status.ts';
import type { RestoreResolution } from '../../shared/plan/restore-source.ts';
import { MEMBER_FINALIZER } from '../../shared/names.ts';
import type { EtcdView } from '../../shared/plan/cluster-state.ts';
import { cluster, etcdOf, locked, member, membership, NOW, state } from './cluster-world.ts';

const s3 = {
  endpoint: 'http://s3.local:9000',
  bucket: 'b',
  key: 'backups/',
  credentialsSecretRef: { name: 'creds' },
};
const KEYS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];
const request = { inPlaceRestore: { requestID: 'r1', snapshotRef: { name: 'nightly' } } };
const source = { source: { s3: { ...s3, key: 'backups/nightly.db' }, sha256: 'ab'.repeat(32) } };
const ready: RestoreResolution = {
  kind: 'ready',
  restore: source,
  sourceName: 'EtcdSnapshot nightly (s3://b/backups/nightly.db)',
};
const ID = 'c0ffee0000000001';

function snapshot(phase: string): EtcdSnapshot {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: { name: 'nightly', namespace: 'prod' },
    spec: { clusterRef: { name: 'demo' }, destination: { s3 } },
    status: {
      phase,
      ...(phase === 'Complete' && {
        artifact: { uri: 's3://b/backups/nightly.db', checksum: `sha256:${'ab'.repeat(32)}`, revision: 9 },
      }),
    },
  } as EtcdSnapshot;
}

const record = (step: InPlaceRestoreStatus['step'], extra: Partial<InPlaceRestoreStatus> = {}) => ({
  requestID: 'r1',
  snapshot: 'nightly',
  step,
  source,
  members: ['demo-0', 'demo-1', 'demo-2'],
  previousClusterID: ID,
  startedAt: NOW.toISOString(),
  ...extra,
});

/** etcd's answer as the restored cluster (another cluster ID). */
const restoredEtcd = (ordinals: number[], leader: number): EtcdView => {
  const view = etcdOf(
    ordinals.map(n => membership(n)),
    leader,
  );
  return view.reachable ? { ...view, clusterId: 'beef' } : view;
};

/** A formed, complete 3-member cluster with the request in spec. */
function running(
  status: EtcdClusterStatus = {},
  resolution: RestoreResolution | undefined = ready,
): ClusterState {
  const c = cluster(request, locked(3, { clusterID: ID, ...status }));
  const s = state(c, [member(0), member(1), member(2)], { etcd: etcdOf([0, 1, 2].map(n => membership(n))) });
  if (resolution) s.inPlaceRestore = resolution;
  return s;
}

const restored = (status: EtcdClusterStatus) => status.conditions?.find(c => c.type === 'Restored');
const progressing = (status: EtcdClusterStatus) => status.conditions?.find(c => c.type === 'Progressing');

describe('resolveInPlace', () => {
  const c = cluster(request);
  const rows: [string, Parameters<typeof resolveInPlace>[1], string][] = [
    ['snapshot missing', { snapshot: null }, 'SnapshotNotFound'],
    ['snapshot running', { snapshot: snapshot('Running'), secretKeys: KEYS }, 'SnapshotNotComplete'],
    ['snapshot failed', { snapshot: snapshot('Failed'), secretKeys: KEYS }, 'SnapshotNotComplete'],
    ['Secret missing', { snapshot: snapshot('Complete'), secretKeys: null }, 'SecretNotFound'],
    [
      'Secret lacks a key',
      { snapshot: snapshot('Complete'), secretKeys: ['AWS_ACCESS_KEY_ID'] },
      'CredentialsMissing',
    ],
  ];
  for (const [what, facts, reason] of rows) {
    it(`${what}: blocked (${reason}), and the message says nothing was changed or what to do`, () => {
      const r = resolveInPlace(c, facts);
      assert.equal(r.kind, 'blocked');
      assert.equal(r.kind === 'blocked' && r.reason, reason);
      assert.match(r.kind === 'blocked' ? r.message : '', /nothing was changed|create it|add it/);
    });
  }
  it('a Complete snapshot resolves to its recorded object and checksum', () => {
    assert.deepEqual(resolveInPlace(c, { snapshot: snapshot('Complete'), secretKeys: KEYS }), ready);
  });
  it('the restored token is new per request', () => {
    const t1 = restoredToken(c, 'r1');
    assert.notEqual(t1, restoredToken(c, 'r2'));
    assert.notEqual(t1, 'prod-demo-uid-1');
  });
});

describe('planCluster: accepting an in-place restore request', () => {
  it('a formed, idle cluster whose snapshot resolves: the request is recorded (step Stopping) and nothing else', () => {
    const plan = planCluster(running());
    assert.deepEqual(plan.action, { kind: 'none' });
    assert.deepEqual(plan.status.inPlaceRestore, record('Stopping'));
    assert.equal(plan.status.clusterID, ID);
    assert.equal(restored(plan.status)?.status, 'Unknown');
    assert.equal(restored(plan.status)?.reason, 'Stopping');
    assert.match(restored(plan.status)?.message ?? '', /step 1 of 3: stopping demo-0, demo-1, demo-2/);
    assert.equal(progressing(plan.status)?.reason, 'RestoringInPlace');
    assert.deepEqual(
      plan.events.map(e => e.reason),
      ['RestoreStarted'],
    );
  });

  const waits: [string, () => ClusterState, string, string][] = [
    [
      'the snapshot does not resolve',
      () =>
        running({}, { kind: 'blocked', reason: 'SnapshotNotFound', message: 'gone; nothing was changed' }),
      'False',
      'SnapshotNotFound',
    ],
    [
      'a member is being added',
      () => running({ operation: { type: 'add-member', member: 'demo-3', bootstrap: false, startedAt: '' } }),
      'Unknown',
      'Requested',
    ],
    [
      'the cluster is paused',
      () => {
        const s = running();
        s.cluster = cluster(request, locked(0, { clusterID: ID }));
        return s;
      },
      'False',
      'ClusterPaused',
    ],
    [
      'the cluster has not formed',
      () => {
        const s = running();
        s.cluster = cluster(request, locked(3));
        return s;
      },
      'Unknown',
      'WaitingForCluster',
    ],
  ];
  for (const [what, world, status, reason] of waits) {
    it(`not accepted while ${what}: Restored=${status} ${reason}, nothing recorded`, () => {
      const plan = planCluster(world());
      assert.equal(plan.status.inPlaceRestore, undefined);
      assert.notEqual(plan.action.kind, 'delete-members');
      assert.equal(restored(plan.status)?.status, status);
      assert.equal(restored(plan.status)?.reason, reason);
    });
  }

  it('a request already done (its ID recorded) starts nothing again', () => {
    const done = record('Done', { finishedAt: NOW.toISOString() });
    const plan = planCluster(running({ inPlaceRestore: done }, undefined));
    assert.deepEqual(plan.action, { kind: 'none' });
    assert.deepEqual(plan.status.inPlaceRestore, done);
    assert.equal(restored(plan.status)?.status, 'True');
    assert.equal(progressing(plan.status)?.reason, 'Reconciled');
  });

  it('a new request after a done one is accepted with its own ID', () => {
    const s = running({ inPlaceRestore: record('Done', { finishedAt: NOW.toISOString() }) });
    s.cluster.spec.inPlaceRestore = { requestID: 'r2', snapshotRef: { name: 'nightly' } };
    const plan = planCluster(s);
    assert.equal(plan.status.inPlaceRestore?.requestID, 'r2');
    assert.equal(plan.status.inPlaceRestore?.step, 'Stopping');
  });
});

describe('planCluster: the in-place restore steps', () => {
  const stopping = (deleting: number[], present = [0, 1, 2]) => {
    const c = cluster(request, locked(3, { clusterID: ID, inPlaceRestore: record('Stopping') }));
    const members = present.map(n => member(n, { deleting: deleting.includes(n) }));
    return state(c, members, { etcd: etcdOf([0, 1, 2].map(n => membership(n))) });
  };

  it('Stopping: every recorded member still standing is deleted in one step', () => {
    const plan = planCluster(stopping([1]));
    assert.deepEqual(plan.action, { kind: 'delete-members', members: ['demo-0', 'demo-2'] });
    assert.equal(plan.status.inPlaceRestore?.step, 'Stopping');
    assert.equal(plan.status.clusterID, ID);
  });

  it('Stopping: members still going → wait, nothing else changes', () => {
    const plan = planCluster(stopping([0, 1, 2]));
    assert.equal(plan.action.kind, 'wait');
    assert.equal(plan.status.inPlaceRestore?.step, 'Stopping');
    assert.equal(plan.status.clusterToken, 'prod-demo-uid-1');
  });

  it('Stopping, every member gone: new token, no cluster ID, step Restoring', () => {
    const plan = planCluster(stopping([], []));
    assert.deepEqual(plan.action, { kind: 'none' });
    assert.equal(plan.status.inPlaceRestore?.step, 'Restoring');
    assert.equal(plan.status.clusterID, undefined);
    assert.equal(plan.status.clusterToken, restoredToken(cluster(), 'r1'));
    assert.equal(plan.status.nextMemberOrdinal, 3, 'names are never reused');
    assert.equal(restored(plan.status)?.reason, 'RestoringSeed');
  });

  it('Restoring, no member: the seed is claimed, restoring the recorded snapshot', () => {
    const c = cluster(request, locked(3, { clusterToken: 'new', inPlaceRestore: record('Restoring') }));
    const s = state(c, []);
    s.restore = inPlaceSource(c);
    assert.deepEqual(s.restore, ready);
    const plan = planCluster(s);
    assert.equal(plan.action.kind, 'claim');
    assert.deepEqual(plan.action.kind === 'claim' && plan.action.operation.member, 'demo-3');
    assert.equal(plan.action.kind === 'claim' && plan.action.operation.bootstrap, true);
    assert.equal(restored(plan.status)?.reason, 'RestoringSeed');
  });

  it('Restoring, the seed formed a cluster: the others join as learners (Rejoining)', () => {
    const c = cluster(
      request,
      locked(3, {
        clusterID: 'beef',
        clusterToken: 'new',
        nextMemberOrdinal: 4,
        inPlaceRestore: record('Restoring'),
      }),
    );
    const s = state(c, [member(3, { bootstrap: true })], {
      etcd: restoredEtcd([3], 3),
      ready: [3],
    });
    const plan = planCluster(s);
    assert.equal(plan.action.kind, 'claim');
    assert.equal(plan.action.kind === 'claim' && plan.action.operation.bootstrap, false);
    assert.equal(restored(plan.status)?.reason, 'Rejoining');
  });

  it('Restoring, the target reached: step Done, Restored=True naming both cluster IDs', () => {
    const c = cluster(
      request,
      locked(3, {
        clusterID: 'beef',
        clusterToken: 'new',
        nextMemberOrdinal: 6,
        inPlaceRestore: record('Restoring'),
      }),
    );
    const members = [
      member(3, { bootstrap: true }),
      member(4, { bootstrap: false }),
      member(5, { bootstrap: false }),
    ];
    const etcd = {
      ...etcdOf(
        [3, 4, 5].map(n => membership(n)),
        3,
      ),
      clusterId: 'beef',
    };
    const s = state(c, members, { etcd, ready: [3, 4, 5] });
    const plan = planCluster(s);
    assert.deepEqual(plan.action, { kind: 'none' });
    assert.equal(plan.status.inPlaceRestore?.step, 'Done');
    assert.equal(plan.status.inPlaceRestore?.finishedAt, NOW.toISOString());
    assert.equal(restored(plan.status)?.status, 'True');
    assert.match(restored(plan.status)?.message ?? '', /etcd cluster beef replaces c0ffee0000000001/);
    assert.deepEqual(
      plan.events.map(e => e.reason),
      ['Restored'],
    );
  });
});

describe('planFinalize during an in-place restore', () => {
  it('a discarded member goes without an etcd removal, even as the only data holder', () => {
    const c = cluster(request, locked(3, { clusterID: ID, inPlaceRestore: record('Stopping') }));
    const action = planFinalize({
      member: {
        ...member(0, { deleting: true }),
        metadata: { ...member(0, { deleting: true }).metadata, finalizers: [MEMBER_FINALIZER] },
      },
      cluster: c,
      others: [member(1, { deleting: true })],
      tried: [],
    });
    assert.deepEqual(action, {
      kind: 'remove-finalizer',
      reason:
        "EtcdCluster demo is being restored in place from EtcdSnapshot nightly: demo-0's data is discarded with the old etcd cluster, no removal needed",
    });
  });

  it('while Stopping, etcd is not asked: the old etcd cluster is being discarded', () => {
    const m = member(0, { deleting: true });
    const finalizing = {
      member: { ...m, metadata: { ...m.metadata, finalizers: [MEMBER_FINALIZER] } },
      others: [member(1), member(2)],
    };
    const stopping = cluster(request, locked(3, { clusterID: ID, inPlaceRestore: record('Stopping') }));
    const restoring = cluster(request, locked(3, { clusterID: ID, inPlaceRestore: record('Restoring') }));
    assert.equal(needsEtcd({ ...finalizing, cluster: stopping }), false);
    assert.equal(needsEtcd({ ...finalizing, cluster: restoring }), true);
  });

  it('a member not on the list is finalized as usual', () => {
    const c = cluster(
      request,
      locked(3, { clusterID: ID, inPlaceRestore: record('Stopping', { members: ['demo-1'] }) }),
    );
    const m = member(0, { deleting: true });
    const action = planFinalize({
      member: { ...m, metadata: { ...m.metadata, finalizers: [MEMBER_FINALIZER] } },
      cluster: c,
      others: [],
      tried: [],
    });
    assert.equal(action.kind, 'keep', 'the only data holder is kept');
  });
});
