// The status a person reads (shared/plan/cluster/status.ts): Available and Degraded in each world,
// word for word (quorum healthy, available, lost with each member's state; paused with or without
// data; unreachable), the phase, the members list (IDs, roles, the leader, versions, numeric order),
// and the bookkeeping (observedGeneration, the deadline dropped once idle). Written against the
// mutants StrykerJS left alive in plan/cluster/status.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import { findCondition } from '../../shared/conditions.ts';
import { computeStatus, stableError } from '../../shared/plan/cluster/status.ts';
import type { ClusterState, EtcdView } from '../../shared/plan/cluster/types.ts';
import { cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';
import type { Progress } from '../../shared/plan/cluster/step.ts';

const ID = 'c0ffee0000000001';
const formed = (replicas: number, extra: EtcdClusterStatus = {}) =>
  cluster({ replicas }, locked(replicas, { clusterID: ID, ...extra }));
const idle: Progress = { active: false, reason: 'Idle', message: '' };
const working: Progress = { active: true, reason: 'ScalingUp', message: 'adding member demo-2' };
const three = () => [member(0), member(1), member(2)];
const etcd3 = (leader = 0) => etcdOf([membership(0), membership(1), membership(2)], leader);
const statusOf = (s: ClusterState, progress = idle) => computeStatus(s, s.cluster.status ?? {}, progress);
const condition = (status: EtcdClusterStatus, type: string) => {
  const c = findCondition(status.conditions, type);
  return c && [c.status, c.reason, c.message];
};

describe('Available and Degraded', () => {
  const rows: {
    name: string;
    world: () => ClusterState;
    available: [string, string, string];
    degraded: [string, string, string];
    phase: string;
    ready: string;
  }[] = [
    {
      name: 'every member ready',
      world: () => state(formed(3), three(), { etcd: etcd3() }),
      available: ['True', 'QuorumHealthy', 'all 3 members ready'],
      degraded: ['False', 'QuorumHealthy', ''],
      phase: 'Running',
      ready: '3/3',
    },
    {
      name: 'a majority ready',
      world: () => state(formed(3), three(), { etcd: etcd3(), ready: [0, 1] }),
      available: ['True', 'QuorumAvailable', '2/3 members ready'],
      degraded: ['True', 'MembersUnhealthy', '2/3 members ready'],
      phase: 'Degraded',
      ready: '2/3',
    },
    {
      name: 'three of four ready',
      world: () =>
        state(formed(4), [...three(), member(3)], {
          etcd: etcdOf([membership(0), membership(1), membership(2), membership(3)]),
          ready: [0, 1, 2],
        }),
      available: ['True', 'QuorumAvailable', '3/4 members ready'],
      degraded: ['True', 'MembersUnhealthy', '3/4 members ready'],
      phase: 'Degraded',
      ready: '3/4',
    },
    {
      name: 'etcd does not answer though a member is ready',
      world: () =>
        state(formed(3), three(), {
          etcd: {
            reachable: false,
            error: 'dial tcp: connect ECONNREFUSED on 10.0.0.7:2379 (after 3000ms)',
          },
          ready: [0],
        }),
      available: [
        'False',
        'ClusterUnreachable',
        'etcd did not answer through any ready member: dial tcp: connect ECONNREFUSED',
      ],
      degraded: [
        'True',
        'ClusterUnreachable',
        'etcd did not answer through any ready member: dial tcp: connect ECONNREFUSED',
      ],
      phase: 'Degraded',
      ready: '1/3',
    },
    {
      name: 'paused before the cluster ever formed',
      world: () => state(cluster({ replicas: 0 }, locked(0)), []),
      available: [
        'False',
        'Paused',
        'paused (spec.replicas=0) before the cluster formed, so there is no data',
      ],
      degraded: ['False', 'Paused', ''],
      phase: 'Paused',
      ready: '0/0',
    },
    {
      name: 'paused with the data on a PVC',
      world: () =>
        state(formed(0), [member(0, { dormant: true }), member(1, { deleting: true, dormant: true })]),
      available: [
        'False',
        'Paused',
        'paused (spec.replicas=0); the data is kept on PersistentVolumeClaim data-demo-0; scale up to resume',
      ],
      degraded: ['False', 'Paused', ''],
      phase: 'Paused',
      ready: '0/0',
    },
    {
      name: 'pausing a formed cluster whose members still run (issue 29: not "never bootstrapped")',
      world: () => state(formed(0), three(), { etcd: etcd3() }),
      available: [
        'False',
        'Paused',
        'pausing (spec.replicas=0): stopping the members one at a time; the last one keeps the data on its PersistentVolumeClaim',
      ],
      degraded: ['False', 'Paused', ''],
      phase: 'Paused',
      ready: '3/0',
    },
    {
      name: 'paused, and the dormant member deleted: its deletion is held, and resuming is the way back',
      world: () => state(formed(0), [member(0, { deleting: true, dormant: true })]),
      available: [
        'False',
        'Paused',
        "paused (spec.replicas=0); member demo-0 was deleted but holds the cluster's only data (on PersistentVolumeClaim data-demo-0), so its deletion is held; scale up to resume: demo-0 then runs again as the seed, the other members join it and demo-0 is removed once they have; delete the EtcdCluster to delete the data",
      ],
      degraded: ['False', 'Paused', ''],
      phase: 'Paused',
      ready: '0/0',
    },
    {
      name: 'paused with the data in memory',
      world: () => {
        const m = member(0, { dormant: true });
        m.spec.storage = { size: '1Gi', medium: 'Memory' };
        return state(formed(0), [m]);
      },
      available: [
        'False',
        'Paused',
        'paused (spec.replicas=0); the data was in memory and is gone: delete and recreate the cluster',
      ],
      degraded: ['False', 'Paused', ''],
      phase: 'Paused',
      ready: '0/0',
    },
    {
      name: 'not formed yet',
      world: () => state(cluster({}, locked(3)), [member(0)]),
      available: ['False', 'Bootstrapping', 'the cluster has not formed yet'],
      degraded: ['False', 'Bootstrapping', ''],
      phase: 'Bootstrapping',
      ready: '1/3',
    },
  ];
  for (const row of rows) {
    it(`${row.name}: Available ${row.available[1]}, phase ${row.phase}`, () => {
      const status = statusOf(row.world());
      assert.deepEqual(condition(status, 'Available'), row.available);
      assert.deepEqual(condition(status, 'Degraded'), row.degraded);
      assert.equal(status.phase, row.phase);
      assert.equal(status.ready, row.ready);
    });
  }

  it('quorum lost: each member named with its last known state, and what to do', () => {
    const members = [...three(), member(3), member(4)];
    members[1].status = { isVoter: true, memberID: '00000000000000b1' };
    members[2].status = {
      isVoter: true,
      dataLoss: { reason: 'PVCDeleted', message: 'PVC data-demo-2 was deleted', detectedAt: '' },
    };
    const s = state(formed(5), members, { etcd: etcd3(), ready: [0] });
    s.pods[3] = { ...s.pods[3], phase: 'Pending', problem: 'ErrImagePull: no such image' };
    s.pods[1] = { ...s.pods[1], phase: 'Pending' };
    s.pods.splice(4, 1);
    const status = statusOf(s);
    const message =
      '1/5 members ready: quorum lost, writes fail until a majority is back; demo-0 ready; demo-1 (ID 00000000000000b1) not ready (Pod Pending); demo-2 data lost: PVC data-demo-2 was deleted; demo-3 not running: ErrImagePull: no such image; demo-4 no Pod; etcdfn changes nothing while quorum is lost. What you can do: bring back the members whose Pods cannot run (their Ready condition and logs say why); members whose data is lost cannot rejoin, so if a majority lost its data, set spec.recovery.policy: ForceNewCluster (the most advanced surviving member goes on alone and the others are replaced; writes only they had are lost) or RestoreLatestSnapshot (the newest verified snapshot is restored in place; writes after it are lost), or create a new EtcdCluster restoring a snapshot (spec.bootstrap.restore)';
    assert.deepEqual(condition(status, 'Available'), ['False', 'QuorumLost', message]);
    assert.deepEqual(condition(status, 'Degraded'), ['True', 'QuorumLost', message]);
    assert.equal(status.phase, 'Degraded');
  });

  it('two of four is no majority: quorum lost', () => {
    const s = state(formed(4), [...three(), member(3)], { etcd: etcd3(), ready: [0, 1] });
    assert.equal(condition(statusOf(s), 'Available')?.[1], 'QuorumLost');
  });

  it('etcd unreachable with no member ready is quorum lost, not unreachable', () => {
    const s = state(formed(3), three(), { etcd: { reachable: false, error: 'timeout' }, ready: [] });
    assert.equal(condition(statusOf(s), 'Available')?.[1], 'QuorumLost');
  });
});

describe('phase', () => {
  const rows: { name: string; world: () => ClusterState; progress: Progress; phase: string }[] = [
    {
      name: 'a missed deadline',
      world: () => state(formed(3), three(), { etcd: etcd3() }),
      progress: { active: false, reason: 'DeadlineExceeded', message: 'x' },
      phase: 'Failed',
    },
    {
      name: 'a bootstrap that never formed',
      world: () => state(cluster({}, locked(3)), [member(0)]),
      progress: { active: false, reason: 'BootstrapFailed', message: 'x' },
      phase: 'Failed',
    },
    {
      name: 'working on a formed cluster',
      world: () => state(formed(3), three(), { etcd: etcd3() }),
      progress: working,
      phase: 'Scaling',
    },
    {
      name: 'growing volumes on a formed, ready cluster (Progressing says so)',
      world: () => state(formed(3), three(), { etcd: etcd3() }),
      progress: { active: true, reason: 'GrowingVolumes', message: 'x' },
      phase: 'Running',
    },
    {
      name: 'defragmenting a member of a formed, ready cluster (Progressing says so)',
      world: () => state(formed(3), three(), { etcd: etcd3() }),
      progress: { active: true, reason: 'Defragmenting', message: 'x' },
      phase: 'Running',
    },
    {
      name: 'defragmenting while a member is not ready',
      world: () => state(formed(3), three(), { etcd: etcd3(), ready: [0, 1] }),
      progress: { active: true, reason: 'Defragmenting', message: 'x' },
      phase: 'Degraded',
    },
    {
      name: 'pausing a formed cluster',
      world: () => state(formed(0), [member(0)], { etcd: etcdOf([membership(0)]) }),
      progress: working,
      phase: 'Scaling',
    },
    {
      name: 'pausing before the cluster formed',
      world: () => state(cluster({ replicas: 0 }, locked(0)), [member(0)]),
      progress: working,
      phase: 'Paused',
    },
    {
      name: 'bootstrapping',
      world: () => state(cluster({}, locked(3)), [member(0)]),
      progress: working,
      phase: 'Bootstrapping',
    },
  ];
  for (const row of rows) {
    it(`${row.name}: ${row.phase}`, () => {
      assert.equal(statusOf(row.world(), row.progress).phase, row.phase);
    });
  }
});

describe('members list', () => {
  it('etcd IDs, roles, the leader and versions; dormant and deleted members left out; numeric order', () => {
    const members = [
      member(10),
      member(9),
      member(2),
      member(3, { dormant: true }),
      member(4, { deleting: true }),
    ];
    members[0].status = { isVoter: false, version: '3.5.16' };
    const etcd: EtcdView = etcdOf([membership(2), membership(9), membership(10, { learner: true })], 9);
    const s = state(formed(3), members, { etcd, ready: [2, 9] });
    assert.deepEqual(statusOf(s).members, [
      { name: 'demo-2', ready: true, id: membership(2).id, role: 'voter' },
      { name: 'demo-9', ready: true, id: membership(9).id, role: 'voter', leader: true },
      { name: 'demo-10', ready: false, id: membership(10).id, role: 'learner', version: '3.5.16' },
    ]);
  });

  it('without etcd: the ID the member recorded, no role, no leader', () => {
    const members = [member(0), member(1)];
    members[0].status = { isVoter: true, memberID: '00000000000000b0' };
    const s = state(formed(2), members, { etcd: { reachable: false, error: 'timeout' } });
    assert.deepEqual(statusOf(s).members, [
      { name: 'demo-0', ready: true, id: '00000000000000b0' },
      { name: 'demo-1', ready: true },
    ]);
  });

  it('a member etcd does not list yet has no ID and no role; a leader ID nobody has marks nobody', () => {
    const etcd: EtcdView = { reachable: true, members: [membership(0)], clusterId: ID };
    const s = state(formed(2), [member(0), member(1)], { etcd });
    assert.deepEqual(statusOf(s).members, [
      { name: 'demo-0', ready: true, id: membership(0).id, role: 'voter' },
      { name: 'demo-1', ready: true },
    ]);
  });
});

describe('bookkeeping', () => {
  it('the generation observed is recorded on the status and on every condition written', () => {
    const c = formed(3);
    c.metadata.generation = 7;
    const status = statusOf(state(c, three(), { etcd: etcd3() }));
    assert.equal(status.observedGeneration, 7);
    for (const type of ['Available', 'Degraded', 'Progressing'])
      assert.equal(findCondition(status.conditions, type)?.observedGeneration, 7, type);
  });

  it('with no generation, none is recorded', () => {
    const c = formed(3);
    delete c.metadata.generation;
    const status = statusOf(state(c, three(), { etcd: etcd3() }));
    assert.equal(status.observedGeneration, undefined);
    assert.equal(findCondition(status.conditions, 'Available')?.observedGeneration, undefined);
  });

  it('the deadline is dropped once idle and kept while working; Progressing says which', () => {
    const s = state(formed(3), three(), { etcd: etcd3() });
    const busy = statusOf(s, working);
    assert.equal(busy.progressDeadline, '2026-11-22T10:10:00Z');
    assert.deepEqual(condition(busy, 'Progressing'), ['True', 'ScalingUp', 'adding member demo-2']);
    const done = statusOf(s);
    assert.equal(done.progressDeadline, undefined);
    assert.deepEqual(condition(done, 'Progressing'), ['False', 'Idle', '']);
  });

  it('the selector names the cluster', () => {
    assert.equal(statusOf(state(formed(3), three(), { etcd: etcd3() })).selector, 'etcdfn.io/cluster=demo');
  });
});

describe('stableError', () => {
  const rows: [string, string][] = [
    ['read ECONNRESET on 10.0.0.7:2379', 'read ECONNRESET'],
    ['timeout on [::1]:2379 (after 3000ms)', 'timeout'],
    ['no members to ask', 'no members to ask'],
    ['a on 1.2.3.4:1 and b on 5.6.7.8:2  (after 10ms) (after 20ms)', 'a and b'],
  ];
  for (const [raw, stable] of rows) {
    it(`${raw} → ${stable}`, () => assert.equal(stableError(raw), stable));
  }
});
