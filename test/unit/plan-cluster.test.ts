// planCluster over observed states: every branch of reconcile-cluster's decision, as a table of
// worlds and the one step each must lead to.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { buildNetworkPolicy } from '../../shared/builders/network-policy.ts';
import { findCondition } from '../../shared/conditions.ts';
import { planCluster } from '../../shared/plan/cluster/plan.ts';
import {
  LATER,
  NOW,
  cluster,
  etcdOf,
  locked,
  member,
  membership,
  observed,
  state,
} from '../support/cluster-world.ts';

describe('planCluster', () => {
  it('creates the NetworkPolicy after the Services and before the seed member', () => {
    const c = cluster({}, locked(3, { nextMemberOrdinal: 0 }));
    const plan = planCluster(state(c, [], { networkPolicy: false }));
    assert.equal(plan.action.kind, 'ensure-network-policy');
    assert.equal(findCondition(plan.status.conditions, 'Progressing')?.reason, 'CreatingNetworkPolicy');
    assert.equal(
      planCluster(state(c, [], { networkPolicy: false, services: false })).action.kind,
      'ensure-services',
    );
    assert.equal(planCluster(state(c, [])).action.kind, 'claim');
  });

  it('puts back a NetworkPolicy that drifted, and removes it when the cluster turns it off', () => {
    const c = cluster({}, locked(3, { clusterID: 'c', nextMemberOrdinal: 3 }));
    const members = [member(0), member(1), member(2)];
    const etcd = etcdOf([membership(0), membership(1), membership(2)]);
    const drifted = state(c, members, { etcd });
    drifted.networkPolicy!.spec!.ingress = [{}]; // someone opened it to everyone
    assert.equal(planCluster(drifted).action.kind, 'ensure-network-policy');
    assert.equal(planCluster(state(c, members, { etcd })).action.kind, 'none');
    const off = cluster({ networkPolicy: { enabled: false } }, c.status);
    const stale = state(off, members, { etcd, networkPolicy: false });
    stale.networkPolicy = buildNetworkPolicy(c);
    assert.equal(planCluster(stale).action.kind, 'ensure-network-policy');
    assert.equal(planCluster(state(off, members, { etcd })).action.kind, 'none');
  });

  it('a new cluster locks its target, token and deadline before anything else', () => {
    const plan = planCluster(state(cluster(), []));
    assert.equal(plan.action.kind, 'none');
    assert.equal(plan.status.clusterToken, 'prod-demo-uid-1');
    assert.deepEqual(plan.status.observed?.replicas, 3);
    assert.equal(plan.status.progressDeadline, '2026-11-22T10:10:00Z');
    assert.equal(findCondition(plan.status.conditions, 'Progressing')?.status, 'True');
  });

  it('creates the Services before any member', () => {
    const plan = planCluster(
      state(cluster({}, locked(3, { nextMemberOrdinal: 0 })), [], { services: false }),
    );
    assert.equal(plan.action.kind, 'ensure-services');
  });

  it('claims every initial member (demo-0..2) and advances the ordinal past them in the same write', () => {
    const plan = planCluster(state(cluster({}, locked(3, { nextMemberOrdinal: 0 })), []));
    assert.equal(plan.action.kind, 'claim');
    if (plan.action.kind !== 'claim') return;
    assert.deepEqual([plan.action.operation.member, plan.action.operation.bootstrap], ['demo-0', true]);
    assert.deepEqual(plan.action.operation.initialMembers, ['demo-0', 'demo-1', 'demo-2']);
    assert.equal(plan.status.nextMemberOrdinal, 3);
    assert.equal((plan.status.operation as { member: string }).member, 'demo-0');
  });

  it('an operation in status is resumed, whatever else the world says', () => {
    const op = {
      type: 'add-member' as const,
      member: 'demo-1',
      bootstrap: false,
      startedAt: NOW.toISOString(),
    };
    const plan = planCluster(state(cluster({}, locked(3, { clusterID: 'c', operation: op })), [member(0)]));
    assert.deepEqual(plan.action, { kind: 'resume', operation: op });
  });

  it('waits for the seed, then latches the cluster ID from etcd', () => {
    const c = cluster({}, locked(3, { nextMemberOrdinal: 1 }));
    const waiting = planCluster(state(c, [member(0)], { ready: [] }));
    assert.equal(waiting.action.kind, 'wait');
    assert.equal(findCondition(waiting.status.conditions, 'Progressing')?.reason, 'WaitingForSeed');
    const formed = planCluster(state(c, [member(0)], { etcd: etcdOf([membership(0)]) }));
    assert.equal(formed.status.clusterID, 'c0ffee0000000001');
    assert.ok(formed.events.some(e => e.reason === 'ClusterFormed'));
  });

  it('does not latch a cluster ID from an ambiguous answer', () => {
    const c = cluster({}, locked(3, { nextMemberOrdinal: 1 }));
    const plan = planCluster(state(c, [member(0)], { etcd: etcdOf([membership(0), membership(7)]) }));
    assert.equal(plan.status.clusterID, undefined);
  });

  it('adds one learner at a time, only when every running member is ready', () => {
    const c = cluster({}, locked(3, { clusterID: 'c', nextMemberOrdinal: 2 }));
    const members = [member(0), member(1)];
    const unready = planCluster(
      state(c, members, { ready: [0], etcd: etcdOf([membership(0), membership(1)]) }),
    );
    assert.equal(unready.action.kind, 'wait');
    const ready = planCluster(state(c, members, { etcd: etcdOf([membership(0), membership(1)]) }));
    assert.equal(ready.action.kind, 'claim');
    if (ready.action.kind === 'claim') assert.equal(ready.action.operation.member, 'demo-2');
  });

  it('promotes a learner whose Pod runs, and waits for one whose Pod does not', () => {
    const c = cluster({}, locked(3, { clusterID: 'c', nextMemberOrdinal: 2 }));
    const members = [member(0), member(1, { voter: false })];
    const etcd = etcdOf([membership(0), membership(1, { learner: true })]);
    const plan = planCluster(state(c, members, { etcd }));
    assert.deepEqual(plan.action, { kind: 'promote', member: 'demo-1', id: membership(1).id });
    const pending = state(c, members, { etcd, ready: [0] });
    const pod = pending.pods.find(p => p.name === 'demo-1');
    if (pod) pod.phase = 'Pending';
    assert.equal(planCluster(pending).action.kind, 'wait');
  });

  it('repairs a voter whose EtcdMember was never told it was promoted', () => {
    const c = cluster({}, locked(3, { clusterID: 'c', nextMemberOrdinal: 3 }));
    const members = [member(0), member(1), member(2, { voter: false })];
    const plan = planCluster(
      state(c, members, { etcd: etcdOf([membership(0), membership(1), membership(2)]) }),
    );
    assert.deepEqual(plan.action, { kind: 'mark-voter', member: 'demo-2' });
  });

  it('scales down the newest member, moving leadership off it first', () => {
    const c = cluster({ replicas: 1 }, locked(1, { clusterID: 'c', nextMemberOrdinal: 3 }));
    const members = [member(0), member(1), member(2)];
    const all = [membership(0), membership(1), membership(2)];
    const leaderIsVictim = planCluster(state(c, members, { etcd: etcdOf(all, 2) }));
    assert.equal(leaderIsVictim.action.kind, 'move-leader');
    const otherLeader = planCluster(state(c, members, { etcd: etcdOf(all, 0) }));
    assert.deepEqual(otherLeader.action, { kind: 'delete-member', member: 'demo-2' });
  });

  it('waits while a member is being removed (one membership change at a time)', () => {
    const c = cluster({ replicas: 1 }, locked(1, { clusterID: 'c', nextMemberOrdinal: 3 }));
    const members = [member(0), member(1), member(2, { deleting: true })];
    const plan = planCluster(
      state(c, members, { etcd: etcdOf([membership(0), membership(1), membership(2)]) }),
    );
    assert.equal(plan.action.kind, 'wait');
  });

  it('pauses by making the last member dormant, and resumes the same member', () => {
    const pausing = cluster({ replicas: 0 }, locked(0, { clusterID: 'c', nextMemberOrdinal: 1 }));
    const plan = planCluster(state(pausing, [member(0)], { etcd: etcdOf([membership(0)]) }));
    assert.deepEqual(plan.action, { kind: 'set-dormant', member: 'demo-0', dormant: true });
    const paused = planCluster(state(pausing, [member(0, { dormant: true })], { pdb: false }));
    assert.equal(paused.action.kind, 'none');
    assert.match(findCondition(paused.status.conditions, 'Available')?.message ?? '', /data-demo-0/);
    assert.equal(paused.status.phase, 'Paused');
    const resuming = cluster({ replicas: 1 }, locked(1, { clusterID: 'c', nextMemberOrdinal: 1 }));
    const resume = planCluster(state(resuming, [member(0, { dormant: true })], { pdb: false }));
    assert.deepEqual(resume.action, { kind: 'set-dormant', member: 'demo-0', dormant: false });
  });

  it('removes an etcd member that no EtcdMember stands for', () => {
    const c = cluster({}, locked(1, { clusterID: 'c0ffee0000000001', nextMemberOrdinal: 1 }));
    const plan = planCluster(
      state(c, [member(0)], {
        etcd: etcdOf([membership(0), membership(9, { learner: true, started: false })]),
      }),
    );
    assert.equal(plan.action.kind, 'remove-orphan');
  });

  it('a reached target writes nothing: planning twice gives the same status', () => {
    const c = cluster({}, locked(3, { clusterID: 'c', nextMemberOrdinal: 3 }));
    const members = [member(0), member(1), member(2)];
    const etcd = etcdOf([membership(0), membership(1), membership(2)]);
    const first = planCluster(state(c, members, { etcd }));
    assert.equal(first.action.kind, 'none');
    assert.equal(first.status.ready, '3/3');
    assert.equal(first.status.phase, 'Running');
    assert.equal(first.status.progressDeadline, undefined, 'the deadline is cleared once reached');
    assert.equal(findCondition(first.status.conditions, 'Available')?.reason, 'QuorumHealthy');
    const again = planCluster(state({ ...c, status: first.status }, members, { etcd, now: LATER }));
    assert.deepEqual(again.status, first.status);
  });

  it('a spec edit mid-flight waits; once the target is reached it is adopted', () => {
    const midFlight = cluster({ replicas: 5 }, locked(3, { clusterID: 'c', nextMemberOrdinal: 2 }));
    const plan = planCluster(
      state(midFlight, [member(0), member(1)], { etcd: etcdOf([membership(0), membership(1)]) }),
    );
    assert.equal(plan.status.observed?.replicas, 3, 'still working toward 3');
    const reached = cluster({ replicas: 5 }, locked(3, { clusterID: 'c', nextMemberOrdinal: 3 }));
    const members = [member(0), member(1), member(2)];
    const adopt = planCluster(
      state(reached, members, { etcd: etcdOf([membership(0), membership(1), membership(2)]) }),
    );
    assert.equal(adopt.status.observed?.replicas, 5);
  });

  it('a missed deadline is terminal and says what to do, until the spec changes', () => {
    const c = cluster({}, locked(3, { clusterID: 'c', nextMemberOrdinal: 2 }));
    const members = [member(0), member(1)];
    const plan = planCluster(state(c, members, { now: LATER, etcd: etcdOf([membership(0), membership(1)]) }));
    const progressing = findCondition(plan.status.conditions, 'Progressing');
    assert.equal(progressing?.reason, 'DeadlineExceeded');
    assert.match(progressing?.message ?? '', /edit the spec to retry/);
    assert.equal(plan.status.phase, 'Failed');
    const edited = cluster({ replicas: 2 }, c.status);
    const retry = planCluster(
      state(edited, members, { now: LATER, etcd: etcdOf([membership(0), membership(1)]) }),
    );
    assert.equal(retry.status.observed?.replicas, 2);
    assert.equal(findCondition(retry.status.conditions, 'Progressing')?.reason, 'RetryAfterDeadline');
  });

  it('a cluster that never formed reports BootstrapFailed', () => {
    const c = cluster({}, locked(3, { nextMemberOrdinal: 1 }));
    const plan = planCluster(state(c, [member(0)], { now: LATER, ready: [] }));
    assert.equal(findCondition(plan.status.conditions, 'Progressing')?.reason, 'BootstrapFailed');
  });

  it('reports lost quorum with the count', () => {
    const c = cluster({}, locked(3, { clusterID: 'c', nextMemberOrdinal: 3 }));
    const members = [member(0), member(1), member(2)];
    const plan = planCluster(
      state(c, members, { ready: [0], etcd: etcdOf([membership(0), membership(1), membership(2)]) }),
    );
    const available = findCondition(plan.status.conditions, 'Available');
    assert.equal(available?.reason, 'QuorumLost');
    assert.match(available?.message ?? '', /1\/3/);
  });

  it('keeps the PodDisruptionBudget in step with the voters', () => {
    const c = cluster({}, locked(3, { clusterID: 'c', nextMemberOrdinal: 3 }));
    const members = [member(0), member(1), member(2)];
    const plan = planCluster(
      state(c, members, { pdb: false, etcd: etcdOf([membership(0), membership(1), membership(2)]) }),
    );
    assert.equal(plan.action.kind, 'ensure-pdb');
  });

  it('a Pod that cannot start is named in the progress message, with what to check', () => {
    const c = cluster(
      { version: '3.6.0' },
      locked(3, { nextMemberOrdinal: 1, observed: { ...observed(3), version: '3.6.0' } }),
    );
    const s = state(c, [member(0)], { ready: [] });
    s.pods[0].problem = 'ErrImagePull: no etcd 3.6 image';
    const waiting = planCluster(s);
    assert.match(
      findCondition(waiting.status.conditions, 'Progressing')?.message ?? '',
      /ErrImagePull.*spec\.version/,
    );
    const failed = planCluster({ ...s, now: LATER });
    const progressing = findCondition(failed.status.conditions, 'Progressing');
    assert.equal(progressing?.reason, 'BootstrapFailed');
    assert.match(progressing?.message ?? '', /ErrImagePull.*delete and recreate/);
  });

  it('a cluster being deleted is left to garbage collection', () => {
    const c = cluster({}, locked(3, { clusterID: 'c' }));
    c.metadata.deletionTimestamp = NOW;
    assert.equal(planCluster(state(c, [member(0)])).action.kind, 'none');
  });
});

describe('planCluster: rolling upgrade', () => {
  // Three voters, demo-0 leads; the target moved from 3.4.23 to 3.5.16.
  const on = (ordinal: number, specVersion: string, runningVersion: string): EtcdMember => {
    const m = member(ordinal);
    m.spec.version = specVersion;
    m.status = { ...m.status, version: runningVersion };
    return m;
  };
  const c = () => cluster({}, locked(3, { clusterID: 'c0ffee0000000001' }));
  const etcd = (leader = 0) => etcdOf([membership(0), membership(1), membership(2)], leader);
  const upgradeWorld = (members: EtcdMember[], opts: { ready?: number[]; leader?: number } = {}) =>
    state(c(), members, { etcd: etcd(opts.leader ?? 0), ...(opts.ready && { ready: opts.ready }) });
  const progressing = (plan: ReturnType<typeof planCluster>) =>
    findCondition(plan.status.conditions, 'Progressing');

  it('upgrades a follower first, the newest, and says so in Progressing and an Event', () => {
    const plan = planCluster(
      upgradeWorld([on(0, '3.4.23', '3.4.23'), on(1, '3.4.23', '3.4.23'), on(2, '3.4.23', '3.4.23')]),
    );
    assert.deepEqual(plan.action, {
      kind: 'upgrade-member',
      member: 'demo-2',
      from: '3.4.23',
      version: '3.5.16',
    });
    assert.equal(progressing(plan)?.reason, 'Upgrading');
    assert.equal(
      progressing(plan)?.message,
      'upgrading member demo-2 from etcd 3.4.23 to 3.5.16 (0/3 members on 3.5.16)',
    );
    assert.deepEqual(
      plan.events.map(e => e.reason),
      ['UpgradingMember'],
    );
  });

  it('waits while the member being upgraded does not run the new release yet', () => {
    const plan = planCluster(
      upgradeWorld([on(0, '3.4.23', '3.4.23'), on(1, '3.4.23', '3.4.23'), on(2, '3.5.16', '3.4.23')]),
    );
    assert.equal(plan.action.kind, 'wait');
    assert.match(progressing(plan)?.message ?? '', /^waiting for demo-2 to run etcd 3\.5\.16/);
  });

  it('never takes a second member while one is not ready', () => {
    const plan = planCluster(
      upgradeWorld([on(0, '3.4.23', '3.4.23'), on(1, '3.4.23', '3.4.23'), on(2, '3.5.16', '3.5.16')], {
        ready: [0, 2],
      }),
    );
    assert.equal(plan.action.kind, 'wait');
    assert.match(progressing(plan)?.message ?? '', /demo-1 to be ready before upgrading the next one/);
  });

  it('moves leadership to an upgraded member before upgrading the leader, then upgrades it', () => {
    const members = [on(0, '3.4.23', '3.4.23'), on(1, '3.5.16', '3.5.16'), on(2, '3.5.16', '3.5.16')];
    const move = planCluster(upgradeWorld(members, { leader: 0 }));
    assert.equal(move.action.kind, 'move-leader');
    assert.equal((move.action as { from: string }).from, 'demo-0');
    assert.notEqual((move.action as { toId: string }).toId, membership(0).id);
    const after = planCluster(upgradeWorld(members, { leader: 1 }));
    assert.deepEqual(after.action, {
      kind: 'upgrade-member',
      member: 'demo-0',
      from: '3.4.23',
      version: '3.5.16',
    });
  });

  it('is Reconciled only once every member runs the target', () => {
    const pending = planCluster(
      upgradeWorld([on(0, '3.5.16', '3.4.23'), on(1, '3.5.16', '3.5.16'), on(2, '3.5.16', '3.5.16')], {
        leader: 1,
      }),
    );
    assert.notEqual(progressing(pending)?.reason, 'Reconciled');
    const done = planCluster(
      upgradeWorld([on(0, '3.5.16', '3.5.16'), on(1, '3.5.16', '3.5.16'), on(2, '3.5.16', '3.5.16')]),
    );
    assert.equal(progressing(done)?.reason, 'Reconciled');
    assert.equal(progressing(done)?.message, '3 members of etcd 3.5.16: reached');
  });

  it('refuses to upgrade a Memory-medium cluster of fewer than 3 members, saying what to do', () => {
    const mem = cluster(
      { replicas: 1, storage: { size: '1Gi', medium: 'Memory' } },
      locked(1, { clusterID: 'c0ffee0000000001' }),
    );
    const plan = planCluster(state(mem, [on(0, '3.4.23', '3.4.23')], { etcd: etcdOf([membership(0)]) }));
    assert.equal(plan.action.kind, 'wait');
    assert.match(
      progressing(plan)?.message ?? '',
      /cannot be upgraded without losing its data.*scale it to 3 first/,
    );
  });
});
