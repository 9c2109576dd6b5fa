// In-place restore, the pure decisions: a request is accepted only when it can work (the snapshot
// resolves, the cluster formed, idle and running), then Stopping → Restoring → Done through
// planCluster, each step a row; finalize-member lets the discarded members go; the Restored
// condition names the step.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus, InPlaceRestoreStatus } from '../../shared/api/etcd-cluster.ts';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { planCluster } from '../../shared/plan/cluster/plan.ts';
import type { ClusterState } from '../../shared/plan/cluster/types.ts';
import { needsEtcd, planFinalize } from '../../shared/plan/member/finalize.ts';
import { resolveInPlace, restoredToken } from '../../shared/plan/restore/in-place.ts';
import {
  activeRestore,
  inPlaceRestoreCondition,
  inPlaceSource,
  pendingRequest,
} from '../../shared/plan/restore/in-place-status.ts';
import { MEMBER_FINALIZER } from '../../shared/names.ts';
import type { EtcdView } from '../../shared/plan/cluster/types.ts';
import { cluster, etcdOf, locked, member, membership, NOW, state } from '../support/cluster-world.ts';
import type { RestoreResolution } from '../../shared/plan/restore/types.ts';

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

  it('a request whose snapshot has not been looked up yet is not accepted', () => {
    const s = running();
    delete s.inPlaceRestore;
    const plan = planCluster(s);
    assert.equal(plan.status.inPlaceRestore, undefined);
    assert.notEqual(plan.action.kind, 'delete-members');
    assert.equal(restored(plan.status)?.reason, 'Requested');
  });

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

describe('resolveInPlace, word for word', () => {
  const c = cluster(request);
  const rows: [string, EtcdSnapshot | null, string, string][] = [
    [
      'missing',
      null,
      'SnapshotNotFound',
      'EtcdSnapshot prod/nightly does not exist; nothing was changed. Run kubectl etcdfn restore again with a Complete EtcdSnapshot of this namespace',
    ],
    [
      'running',
      snapshot('Running'),
      'SnapshotNotComplete',
      'EtcdSnapshot nightly is Running, not Complete; nothing was changed: the restore starts once it completes',
    ],
    [
      'failed',
      snapshot('Failed'),
      'SnapshotNotComplete',
      'EtcdSnapshot nightly is Failed, not Complete; nothing was changed. Run kubectl etcdfn restore again with another snapshot',
    ],
    [
      'without a status yet',
      { ...snapshot('Running'), status: undefined },
      'SnapshotNotComplete',
      'EtcdSnapshot nightly is Pending, not Complete; nothing was changed: the restore starts once it completes',
    ],
  ];
  for (const [what, snap, reason, message] of rows) {
    it(`a snapshot ${what}`, () => {
      assert.deepEqual(resolveInPlace(c, { snapshot: snap, secretKeys: KEYS }), {
        kind: 'blocked',
        reason,
        message,
      });
    });
  }
  it('Complete with no object recorded: blocked as the bootstrap restore would be', () => {
    const snap = snapshot('Complete');
    delete snap.status!.artifact;
    const r = resolveInPlace(c, { snapshot: snap, secretKeys: KEYS });
    assert.equal(r.kind === 'blocked' && r.reason, 'SnapshotNotComplete');
  });
  it('the Secret not looked up (no S3 source asked): ready', () => {
    assert.equal(resolveInPlace(c, { snapshot: snapshot('Complete') }).kind, 'ready');
  });
  it('the restored token: <namespace>-<name>-<uid>-restore-<request>', () => {
    assert.equal(restoredToken(c, 'r1'), 'prod-demo-uid-1-restore-r1');
  });
});

describe('planCluster: the in-place restore, as a person reads it', () => {
  const stoppingState = (present: number[], deleting: number[] = [], status: EtcdClusterStatus = {}) => {
    const c = cluster(
      { ...request, progressDeadlineSeconds: 900 },
      locked(3, { clusterID: ID, inPlaceRestore: record('Stopping'), ...status }),
    );
    const members = present.map(n => member(n, { deleting: deleting.includes(n) }));
    return state(c, members, { etcd: etcdOf([0, 1, 2].map(n => membership(n))) });
  };

  it('accepted: a Warning Event and Progressing say what is restored and what is discarded', () => {
    const s = running();
    s.members = [...s.members].reverse();
    const plan = planCluster(s);
    const message =
      'restoring EtcdSnapshot nightly (s3://b/backups/nightly.db) in place (request r1): stopping demo-0, demo-1, demo-2; their data is discarded';
    assert.deepEqual(plan.events, [{ type: 'Warning', reason: 'RestoreStarted', message }]);
    assert.equal(progressing(plan.status)?.message, message);
    assert.deepEqual(plan.status.inPlaceRestore?.members, ['demo-0', 'demo-1', 'demo-2']);
    assert.equal(
      restored(plan.status)?.message,
      'restoring EtcdSnapshot nightly (request r1) in place, step 1 of 3: stopping demo-0, demo-1, demo-2; their data is discarded',
    );
  });

  it('not accepted while waiting: Restored says why, word for word', () => {
    const rows: [string, () => ClusterState, string][] = [
      [
        'another step',
        () =>
          running({ operation: { type: 'add-member', member: 'demo-3', bootstrap: false, startedAt: '' } }),
        'the in-place restore of EtcdSnapshot nightly (request r1) starts once the step under way ends',
      ],
      [
        'paused',
        () => {
          const s = running();
          s.cluster = cluster(request, locked(0, { clusterID: ID }));
          return s;
        },
        'the in-place restore of EtcdSnapshot nightly (request r1) waits: the cluster is paused; resume it first',
      ],
      [
        'not formed',
        () => {
          const s = running();
          s.cluster = cluster(request, locked(3));
          return s;
        },
        'the in-place restore of EtcdSnapshot nightly (request r1) waits for the cluster to form',
      ],
      [
        'the snapshot does not resolve',
        () =>
          running({}, { kind: 'blocked', reason: 'SnapshotNotFound', message: 'gone; nothing was changed' }),
        'gone; nothing was changed',
      ],
    ];
    for (const [what, world, message] of rows) {
      const plan = planCluster(world());
      assert.equal(restored(plan.status)?.message, message, what);
      assert.equal(plan.status.inPlaceRestore, undefined, what);
    }
  });

  it('Stopping: only the recorded members are deleted; a member not on the list stays', () => {
    const s = stoppingState([0, 1, 2, 3]);
    const plan = planCluster(s);
    assert.deepEqual(plan.action, { kind: 'delete-members', members: ['demo-0', 'demo-1', 'demo-2'] });
    assert.equal(progressing(plan.status)?.reason, 'RestoringInPlace');
    assert.equal(
      progressing(plan.status)?.message,
      'restoring EtcdSnapshot nightly in place: stopping demo-0, demo-1, demo-2; their data is discarded',
    );
    assert.deepEqual(plan.events, []);
  });

  it('Stopping, members going: waits, naming them', () => {
    const plan = planCluster(stoppingState([0, 2], [0, 2]));
    const message = 'restoring EtcdSnapshot nightly in place: waiting for demo-0, demo-2 to go';
    assert.deepEqual(plan.action, { kind: 'wait', reason: message });
    assert.equal(progressing(plan.status)?.reason, 'RestoringInPlace');
    assert.equal(progressing(plan.status)?.message, message);
    assert.deepEqual(plan.events, []);
  });

  it('Stopping, all gone: a new progress deadline; the old replacement and step are dropped', () => {
    const plan = planCluster(
      stoppingState([], [], {
        operation: { type: 'add-member', member: 'demo-3', bootstrap: false, startedAt: '' },
        replacement: { member: 'demo-1', startedAt: '' } as EtcdClusterStatus['replacement'],
      }),
    );
    assert.equal(plan.status.inPlaceRestore?.step, 'Restoring');
    assert.equal(plan.status.progressDeadline, '2026-11-22T10:15:00Z');
    assert.equal(plan.status.operation, undefined);
    assert.equal(plan.status.replacement, undefined);
    assert.deepEqual(plan.events, []);
    assert.equal(progressing(plan.status)?.reason, 'RestoringInPlace');
    assert.equal(
      progressing(plan.status)?.message,
      'restoring EtcdSnapshot nightly in place: the old members are gone; a new seed member restores the snapshot',
    );
    assert.equal(
      restored(plan.status)?.message,
      'restoring EtcdSnapshot nightly (request r1) in place, step 2 of 3: a new seed member restores the snapshot under a new cluster token',
    );
  });
});

describe('the Restored condition during and after an in-place restore', () => {
  const restoring = (status: EtcdClusterStatus, members = [member(3, { bootstrap: true })]) => {
    const c = cluster(request, locked(3, { clusterToken: 'new', nextMemberOrdinal: 4, ...status }));
    return state(c, members);
  };
  const condition = (s: ClusterState) => {
    const c = inPlaceRestoreCondition(s, s.cluster.status ?? {});
    return c && [c.status, c.reason, c.message];
  };

  it('the seed restoring: named', () => {
    assert.deepEqual(condition(restoring({ inPlaceRestore: record('Restoring') })), [
      'Unknown',
      'RestoringSeed',
      'restoring EtcdSnapshot nightly (request r1) in place, step 2 of 3: the seed member demo-3 restores the snapshot under a new cluster token',
    ]);
  });

  it('a member that is not the seed is not named as the seed', () => {
    assert.match(
      condition(restoring({ inPlaceRestore: record('Restoring') }, [member(4, { bootstrap: false })]))?.[2] ??
        '',
      /step 2 of 3: a new seed member restores/,
    );
  });

  it('the seed’s restore step failed: False, with the step’s reason and words', () => {
    const s = restoring({ inPlaceRestore: record('Restoring') }, [
      member(3, { bootstrap: true }),
      member(4, { bootstrap: false }),
    ]);
    s.pods[0].restoreFailure = { reason: 'FetchFailed', message: 'HTTP 403' };
    s.pods[1].restoreFailure = { reason: 'Other', message: 'not the seed' };
    assert.deepEqual(condition(s), [
      'False',
      'FetchFailed',
      'restoring EtcdSnapshot nightly (request r1) in place, step 2 of 3, failed: HTTP 403; no member runs until it succeeds (it is retried with back-off)',
    ]);
  });

  it('a failure on a Pod that is not the seed’s is not the restore’s', () => {
    const s = restoring({ inPlaceRestore: record('Restoring') }, [member(4, { bootstrap: false })]);
    s.pods[0].restoreFailure = { reason: 'FetchFailed', message: 'HTTP 403' };
    assert.equal(condition(s)?.[1], 'RestoringSeed');
  });

  it('the cluster formed: the others rejoin', () => {
    assert.deepEqual(condition(restoring({ clusterID: 'beef', inPlaceRestore: record('Restoring') })), [
      'Unknown',
      'Rejoining',
      'restoring EtcdSnapshot nightly (request r1) in place, step 3 of 3: etcd cluster beef formed from the snapshot; the other members join it as new learners',
    ]);
  });

  it('done: when, and which cluster replaced which; without a previous ID, no "replaces"', () => {
    const done = record('Done', { finishedAt: '2026-11-22T10:20:00Z' });
    assert.deepEqual(condition(restoring({ clusterID: 'beef', inPlaceRestore: done })), [
      'True',
      'Restored',
      'restored EtcdSnapshot nightly (request r1) in place at 2026-11-22T10:20:00Z: etcd cluster beef replaces c0ffee0000000001',
    ]);
    const noPrevious = { ...done, previousClusterID: '' };
    assert.equal(
      condition(restoring({ clusterID: 'beef', inPlaceRestore: noPrevious }))?.[2],
      'restored EtcdSnapshot nightly (request r1) in place at 2026-11-22T10:20:00Z: etcd cluster beef',
    );
  });

  it('a new request while another restore is under way: the one under way is shown', () => {
    const s = restoring({ clusterID: ID, inPlaceRestore: record('Stopping') });
    s.cluster.spec.inPlaceRestore = { requestID: 'r2', snapshotRef: { name: 'hourly' } };
    s.inPlaceRestore = ready;
    assert.equal(condition(s)?.[1], 'Stopping');
  });

  it('the seed’s Pod not there yet: still the seed restoring', () => {
    const s = restoring({ inPlaceRestore: record('Restoring') });
    s.pods = [];
    assert.equal(condition(s)?.[1], 'RestoringSeed');
  });

  it('a failure is read from the seed’s own Pod, not from another listed first', () => {
    const s = restoring({ inPlaceRestore: record('Restoring') }, [
      member(4, { bootstrap: false }),
      member(3, { bootstrap: true }),
    ]);
    assert.equal(s.pods[0].name, 'demo-4');
    s.pods[0].restoreFailure = { reason: 'Other', message: 'not the seed' };
    assert.equal(condition(s)?.[1], 'RestoringSeed');
  });

  it('a new request after a done one, not accepted yet: the new request is shown, not the done one', () => {
    const s = restoring({
      clusterID: 'beef',
      operation: { type: 'add-member', member: 'demo-4', bootstrap: false, startedAt: '' },
      inPlaceRestore: record('Done', { finishedAt: '2026-11-22T10:20:00Z' }),
    });
    s.cluster.spec.inPlaceRestore = { requestID: 'r2', snapshotRef: { name: 'hourly' } };
    s.inPlaceRestore = ready;
    assert.deepEqual(condition(s), [
      'Unknown',
      'Requested',
      'the in-place restore of EtcdSnapshot hourly (request r2) starts once the step under way ends',
    ]);
  });

  it('a cluster with a request and no status yet: the request is pending, nothing is under way', () => {
    const c = cluster(request);
    assert.deepEqual(pendingRequest(c), request.inPlaceRestore);
    assert.equal(activeRestore(c), undefined);
    assert.equal(inPlaceSource(c), undefined);
  });

  it('no request and none recorded: no condition', () => {
    const s = restoring({ clusterID: ID });
    delete s.cluster.spec.inPlaceRestore;
    assert.equal(condition(s), undefined);
  });

  it('the seed restores the recorded source only in the Restoring step', () => {
    for (const step of ['Stopping', 'Done'] as const) {
      assert.equal(
        inPlaceSource(cluster(request, locked(3, { inPlaceRestore: record(step) }))),
        undefined,
        step,
      );
    }
    assert.equal(inPlaceSource(cluster(request, locked(3))), undefined);
  });
});

describe('planCluster: Done', () => {
  it('the Event names the snapshot, the request and both cluster IDs; none without a previous ID', () => {
    const world = (previousClusterID: string) => {
      const c = cluster(
        request,
        locked(3, {
          clusterID: 'beef',
          clusterToken: 'new',
          nextMemberOrdinal: 6,
          inPlaceRestore: record('Restoring', { previousClusterID }),
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
      return planCluster(state(c, members, { etcd, ready: [3, 4, 5] }));
    };
    const plan = world(ID);
    const message =
      'restored EtcdSnapshot nightly in place (request r1): etcd cluster beef replaces c0ffee0000000001';
    assert.deepEqual(plan.events, [{ type: 'Normal', reason: 'Restored', message }]);
    assert.deepEqual(
      [progressing(plan.status)?.status, progressing(plan.status)?.reason, progressing(plan.status)?.message],
      ['False', 'Reconciled', message],
    );
    assert.equal(
      world('').events[0]?.message,
      'restored EtcdSnapshot nightly in place (request r1): etcd cluster beef',
    );
  });
});
