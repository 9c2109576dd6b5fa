// The locked target (status.observed) as a person reads it after planCluster: what a new cluster
// locks, which spec edits of a reached cluster count as a new target and which do not, and when the
// progress deadline starts and passes. Written against the mutants StrykerJS left alive in
// shared/plan/cluster/target.ts (npm run mutation -- shared/plan/cluster/target.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster, EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import { findCondition } from '../../shared/conditions.ts';
import { planCluster, type ClusterPlan } from '../../shared/plan/cluster/plan.ts';
import { deadlinePassed, specDiffersFromObserved } from '../../shared/plan/cluster/target.ts';
import { cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';

const progressing = (plan: ClusterPlan) => {
  const p = findCondition(plan.status.conditions, 'Progressing');
  return [p?.status, p?.reason, p?.message];
};
/** A new cluster: planCluster locks its target and starts the deadline. */
const fresh = (spec: Partial<EtcdCluster['spec']>) => planCluster(state(cluster(spec), []));
/** Three ready voters that etcd agrees on, with the spec edited to `spec` after the target was locked. */
const reached = (spec: Partial<EtcdCluster['spec']>, target: Partial<EtcdClusterStatus['observed']> = {}) => {
  const status = locked(3, { clusterID: 'c0ffee0000000001' });
  status.observed = { ...status.observed!, ...target };
  return planCluster(
    state(cluster(spec, status), [member(0), member(1), member(2)], {
      etcd: etcdOf([membership(0), membership(1), membership(2)]),
    }),
  );
};
const NEW_TARGET = ['True', 'NewTarget', '3 members of etcd 3.5.16'];
const REACHED = ['False', 'Reconciled', '3 members of etcd 3.5.16: reached'];

describe('the target a new cluster locks', () => {
  it('no storage in the spec: 1Gi on a disk, no StorageClass named', () => {
    const plan = fresh({ storage: undefined });
    assert.deepEqual(plan.status.observed, {
      replicas: 3,
      version: '3.5.16',
      storage: { size: '1Gi', medium: '' },
    });
  });
  it('the StorageClass and every Pod setting are locked as written', () => {
    const spec: Partial<EtcdCluster['spec']> = {
      storage: { size: '2Gi', medium: 'Memory', storageClassName: 'fast' },
      resources: { requests: { cpu: '200m' } },
      affinity: { nodeAffinity: {} },
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }],
      additionalMetadata: { labels: { team: 'a' } },
      options: { quotaBackendBytes: 1024 },
      imagePullSecrets: [{ name: 'pull' }],
    };
    const plan = fresh(spec);
    assert.deepEqual(plan.status.observed, {
      replicas: 3,
      version: '3.5.16',
      storage: { size: '2Gi', medium: 'Memory', storageClassName: 'fast' },
      resources: { requests: { cpu: '200m' } },
      affinity: { nodeAffinity: {} },
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }],
      additionalMetadata: { labels: { team: 'a' } },
      options: { quotaBackendBytes: 1024 },
      imagePullSecrets: [{ name: 'pull' }],
    });
    // A later edit of the spec object leaves the locked target as it was.
    spec.resources!.requests!.cpu = '1';
    assert.deepEqual(plan.status.observed?.resources, { requests: { cpu: '200m' } });
  });
  it('without a progressDeadlineSeconds the deadline is 600 s away', () => {
    assert.equal(
      fresh({ progressDeadlineSeconds: undefined }).status.progressDeadline,
      '2026-11-22T10:10:00Z',
    );
    assert.equal(fresh({ progressDeadlineSeconds: 60 }).status.progressDeadline, '2026-11-22T10:01:00Z');
  });
});

describe('a reached cluster: which spec edits are a new target', () => {
  it('the same target: reached, nothing adopted', () => {
    const plan = reached({});
    assert.deepEqual(progressing(plan), REACHED);
    assert.deepEqual(plan.events, []);
  });
  it('the same size written another way (1024Mi for 1Gi) is not a new target', () => {
    assert.deepEqual(progressing(reached({ storage: { size: '1024Mi', medium: '' } })), REACHED);
  });
  it('a larger volume is a new target, locked with its size', () => {
    const plan = reached({ storage: { size: '2Gi', medium: '' } });
    assert.deepEqual(progressing(plan), NEW_TARGET);
    assert.equal(plan.status.observed?.storage.size, '2Gi');
    assert.deepEqual(plan.events, [
      { type: 'Normal', reason: 'NewTarget', message: '3 members of etcd 3.5.16' },
    ]);
  });
  it('moving to memory is a new target, locked with its medium', () => {
    const plan = reached({ storage: { size: '1Gi', medium: 'Memory' } });
    assert.deepEqual(progressing(plan), NEW_TARGET);
    assert.equal(plan.status.observed?.storage.medium, 'Memory');
  });
  it('a Pod setting changed is a new target', () => {
    const plan = reached({ resources: { requests: { cpu: '1' } } });
    assert.deepEqual(progressing(plan), NEW_TARGET);
    assert.deepEqual(plan.status.observed?.resources, { requests: { cpu: '1' } });
  });
  it('a target locked without size or medium (an older status) means 1Gi on a disk: not a new target', () => {
    assert.deepEqual(progressing(reached({}, { storage: {} })), REACHED);
    assert.deepEqual(
      progressing(reached({ storage: { size: '1Gi' } }, { storage: { size: '1Gi' } })),
      REACHED,
    );
  });
});

describe('the progress deadline', () => {
  // Two of three members: the target is not reached.
  const short = (now: Date) =>
    planCluster(
      state(
        cluster({}, locked(3, { clusterID: 'c0ffee0000000001', nextMemberOrdinal: 2 })),
        [member(0), member(1)],
        { now, etcd: etcdOf([membership(0), membership(1)]) },
      ),
    );
  it('has passed at the very second it names', () => {
    const plan = short(new Date('2026-11-22T10:10:00Z'));
    assert.equal(progressing(plan)[1], 'DeadlineExceeded');
    assert.equal(plan.status.phase, 'Failed');
  });
  it('has not passed a second before', () => {
    const plan = short(new Date('2026-11-22T10:09:59Z'));
    assert.deepEqual(progressing(plan), ['True', 'ScalingUp', 'adding member demo-2']);
    assert.equal(plan.status.progressDeadline, '2026-11-22T10:10:00Z');
  });
});

describe('a spec that must not be adopted (a minor release skipped)', () => {
  const OLD = '3.4.23';
  const on34 = (ordinal: number) => {
    const m = member(ordinal);
    m.spec.version = OLD;
    m.status = { ...m.status, version: OLD };
    return m;
  };
  const skip = (wanted: string) =>
    `spec.version ${wanted} is more than one minor release ahead of member demo-0, which runs etcd ${OLD}; etcd upgrades one minor release at a time: set spec.version to a release of the next minor first`;
  const world = (version: string, status: EtcdClusterStatus, running = 3, now?: Date) =>
    state(cluster({ version }, status), [0, 1, 2].slice(0, running).map(on34), {
      etcd: etcdOf([0, 1, 2].slice(0, running).map(i => membership(i))),
      ...(now && { now }),
    });
  const on34Target = (extra: EtcdClusterStatus = {}) => {
    const status = locked(3, { clusterID: 'c0ffee0000000001', ...extra });
    status.observed = { ...status.observed!, version: OLD };
    return status;
  };

  it('refused with a Warning once per wanted version; the locked target and its words stay', () => {
    // The cluster as it is once 3.4.23 was reached (its status as written then).
    const steady = planCluster(world(OLD, on34Target())).status;
    assert.deepEqual(progressing({ status: steady } as ClusterPlan), [
      'False',
      'Reconciled',
      '3 members of etcd 3.4.23: reached',
    ]);
    const first = planCluster(world('3.6.0', steady));
    assert.deepEqual(first.action, { kind: 'none' });
    assert.deepEqual(progressing(first), ['False', 'VersionSkipsMinor', skip('3.6.0')]);
    assert.deepEqual(first.events, [
      { type: 'Warning', reason: 'VersionSkipsMinor', message: skip('3.6.0') },
    ]);
    assert.equal(first.status.observed?.version, OLD);
    assert.equal(first.status.progressDeadline, undefined);
    assert.equal(first.status.phase, 'Running');

    assert.deepEqual(planCluster(world('3.6.0', first.status)).events, [], 'said once');
    const other = planCluster(world('3.6.1', first.status));
    assert.deepEqual(other.events, [
      { type: 'Warning', reason: 'VersionSkipsMinor', message: skip('3.6.1') },
    ]);
    assert.deepEqual(progressing(other), ['False', 'VersionSkipsMinor', skip('3.6.1')]);
  });

  it('after a missed deadline: refused, and the missed deadline stays so the refusal stays', () => {
    const late = new Date('2026-11-22T10:30:00Z');
    const first = planCluster(world('3.6.0', on34Target({ nextMemberOrdinal: 2 }), 2, late));
    assert.deepEqual(progressing(first), ['False', 'VersionSkipsMinor', skip('3.6.0')]);
    assert.equal(first.status.progressDeadline, '2026-11-22T10:10:00Z');
    const again = planCluster(world('3.6.0', first.status, 2, late));
    assert.deepEqual(progressing(again), ['False', 'VersionSkipsMinor', skip('3.6.0')]);
    assert.deepEqual(again.action, { kind: 'none' }, 'the old target is not pursued meanwhile');
    assert.deepEqual(again.events, []);
  });
});

describe('a paused cluster whose target is reached', () => {
  it('says paused, and nothing is done', () => {
    const status = locked(0, { clusterID: 'c0ffee0000000001', nextMemberOrdinal: 1 });
    const plan = planCluster(
      state(cluster({ replicas: 0 }, status), [member(0, { dormant: true })], { pdb: false }),
    );
    assert.deepEqual(plan.action, { kind: 'none' });
    assert.deepEqual(progressing(plan), ['False', 'Paused', 'paused']);
    assert.equal(plan.status.phase, 'Paused');
  });
});

describe('a cluster with no status yet (what reconcile-cluster sees first)', () => {
  it('differs from its locked target (there is none), and no deadline has passed', () => {
    const c = cluster();
    assert.equal(c.status, undefined);
    assert.equal(specDiffersFromObserved(c), true);
    assert.equal(deadlinePassed(c, new Date('2100-01-01T00:00:00Z')), false);
  });
});
