// reconcile-member's part of a ForceNewCluster recovery (shared/plan/member/force-new-cluster.ts): the Pod starts
// etcd with --force-new-cluster exactly while spec.forceNewCluster is set, so the flag is on for one
// start and never stays on the Pod once reconcile-cluster unsets it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { buildMemberPod } from '../../shared/builders/pod.ts';
import { etcdFlags, INITIAL_CLUSTER_STATE_ANNOTATION } from '../../shared/builders/etcd-flags.ts';
import { planMember } from '../../shared/plan/member/plan.ts';
import { podForcesNewCluster } from '../../shared/plan/member/force-new-cluster.ts';
import { ID, member, pod, running } from '../support/member-world.ts';

const ran = (force: boolean) =>
  member({ ...(force && { forceNewCluster: true }) }, { memberID: ID, isVoter: true, hasData: true });
const withCommand = (p: V1Pod, flagged: boolean): V1Pod => ({
  ...p,
  spec: {
    containers: [
      { name: 'etcd', command: ['etcd', '--name=demo-1', ...(flagged ? ['--force-new-cluster'] : [])] },
    ],
  },
});

describe('--force-new-cluster on the member Pod', () => {
  it('is in the flags only while spec.forceNewCluster is set', () => {
    const opts = { namespace: 'prod', clusterFormed: true };
    assert.ok(etcdFlags(ran(true), opts).includes('--force-new-cluster'));
    assert.ok(!etcdFlags(ran(false), opts).includes('--force-new-cluster'));
    const built = buildMemberPod(ran(true), { ...opts, isVoter: true });
    assert.equal(podForcesNewCluster(built), true);
    // The data guard stays: with its data etcd ignores --initial-cluster; it keeps its member ID.
    assert.equal(built.metadata?.annotations?.[INITIAL_CLUSTER_STATE_ANNOTATION], 'existing');
    assert.equal(podForcesNewCluster(buildMemberPod(ran(false), { ...opts, isVoter: true })), false);
  });

  const rows: { name: string; force: boolean; flagged: boolean; replaced: boolean; reason?: RegExp }[] = [
    {
      name: 'spec set, Pod without the flag: replaced',
      force: true,
      flagged: false,
      replaced: true,
      reason: /restarting demo-1 alone with --force-new-cluster on its data, keeping its member ID/,
    },
    {
      name: 'spec set, Pod with the flag: kept (the forced start runs)',
      force: true,
      flagged: true,
      replaced: false,
    },
    {
      name: 'spec unset, Pod with the flag: replaced (the flag never stays)',
      force: false,
      flagged: true,
      replaced: true,
      reason: /started as a one-member cluster; restarting it without --force-new-cluster/,
    },
    { name: 'spec unset, Pod without the flag: kept', force: false, flagged: false, replaced: false },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const m = ran(row.force);
      const plan = planMember(running(m, { pod: withCommand(pod(m, { ready: false }), row.flagged) }));
      if (row.replaced) {
        assert.equal(plan.action.kind, 'delete-pod');
        assert.equal(plan.action.kind === 'delete-pod' && plan.action.uid, 'pod-uid', 'by uid');
        assert.match(plan.action.kind === 'delete-pod' ? plan.action.reason : '', row.reason!);
        assert.equal(plan.events.length, 1);
      } else assert.notEqual(plan.action.kind, 'delete-pod');
    });
  }

  it('the new Pod after a deletion carries the flag only if the spec does', () => {
    for (const force of [true, false]) {
      const plan = planMember(running(ran(force)));
      assert.equal(plan.action.kind, 'create-pod');
      assert.equal(plan.action.kind === 'create-pod' && podForcesNewCluster(plan.action.pod), force);
    }
  });
});
