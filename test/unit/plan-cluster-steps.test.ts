// planCluster as a table: for each world, the exact step, the Progressing condition a person reads
// and the Events; then the safety branches one condition at a time (which member may be promoted,
// who may receive leadership, the upgrade order, when the target counts as reached, when the
// cluster ID is latched, scale-down order). Written against the mutants StrykerJS left alive
// (npm run mutation): each row pins one decision or one word a user sees.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { buildPdb } from '../../shared/builders/pdb.ts';
import { findCondition } from '../../shared/conditions.ts';
import { isComplete, planCluster, type ClusterPlan } from '../../shared/plan/cluster/plan.ts';
import type { ClusterState, EtcdView } from '../../shared/plan/cluster/types.ts';
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

const OLD = '3.4.23';
const NEW = '3.5.16';
const IMAGE_HINT =
  'check spec.version (a released etcd 3.5, 3.6 or 3.7 version) and that the etcd image can be pulled';

interface Row {
  name: string;
  world: () => ClusterState;
  action: ClusterPlan['action'];
  /** [status, reason, message] of Progressing. */
  progressing: [string, string, string];
  events?: ClusterPlan['events'];
  status?: (s: EtcdClusterStatus) => void;
}

const on = (ordinal: number, spec: string, running: string | undefined): EtcdMember => {
  const m = member(ordinal);
  m.spec.version = spec;
  m.status = { ...m.status, ...(running && { version: running }) };
  return m;
};
const formed = (replicas: number, extra: EtcdClusterStatus = {}) =>
  cluster({ replicas }, locked(replicas, { clusterID: 'c0ffee0000000001', ...extra }));
type Reachable = Extract<EtcdView, { reachable: true }>;
const three = () => [member(0), member(1), member(2)];
const etcd3 = (leader = 0) => etcdOf([membership(0), membership(1), membership(2)], leader);
const withProblem = (s: ClusterState, name: string, problem: string): ClusterState => {
  const pod = s.pods.find(p => p.name === name);
  if (pod) pod.problem = problem;
  return s;
};
const op = (m: string, bootstrap = false) => ({
  type: 'add-member' as const,
  member: m,
  bootstrap,
  startedAt: NOW.toISOString(),
});

const rows: Row[] = [
  {
    name: 'an operation in status is resumed and said so',
    world: () => state(cluster({}, locked(3, { clusterID: 'c', operation: op('demo-1') })), [member(0)]),
    action: { kind: 'resume', operation: op('demo-1') },
    progressing: ['True', 'AddingMember', 'adding member demo-1'],
    events: [],
  },
  {
    name: 'a token without an observed target: the target is locked, the ordinal kept',
    world: () => state(cluster({}, { clusterToken: 'prod-demo-uid-1', nextMemberOrdinal: 4 }), []),
    action: { kind: 'none' },
    progressing: ['True', 'NewTarget', '3 members of etcd 3.5.16'],
    events: [],
    status: s => {
      assert.equal(s.nextMemberOrdinal, 4);
      assert.equal(s.observed?.replicas, 3);
      assert.equal(s.progressDeadline, '2026-11-22T10:10:00Z');
    },
  },
  {
    name: 'an observed target without a token: the token is made from namespace, name and uid',
    world: () => state(cluster({ replicas: 1 }, { observed: observed(1) }), []),
    action: { kind: 'none' },
    progressing: ['True', 'NewTarget', '1 member of etcd 3.5.16'],
    status: s => {
      assert.equal(s.clusterToken, 'prod-demo-uid-1');
      assert.equal(s.nextMemberOrdinal, 0);
    },
  },
  {
    name: 'a new paused cluster says what it will do',
    world: () => state(cluster({ replicas: 0 }), []),
    action: { kind: 'none' },
    progressing: ['True', 'NewTarget', 'pause the cluster (0 members)'],
  },
  {
    name: 'a reached target with a spec edit: the new target is adopted, with an Event',
    world: () => state(cluster({ replicas: 5 }, locked(3, { clusterID: 'c' })), three(), { etcd: etcd3() }),
    action: { kind: 'none' },
    progressing: ['True', 'NewTarget', '5 members of etcd 3.5.16'],
    events: [{ type: 'Normal', reason: 'NewTarget', message: '5 members of etcd 3.5.16' }],
    status: s => {
      assert.equal(s.observed?.replicas, 5);
      assert.equal(s.progressDeadline, '2026-11-22T10:10:00Z');
    },
  },
  {
    name: 'a spec edit after a missed deadline is adopted as a retry',
    world: () =>
      state(
        cluster({ replicas: 2 }, locked(3, { clusterID: 'c', nextMemberOrdinal: 2 })),
        [member(0), member(1)],
        {
          now: LATER,
          etcd: etcdOf([membership(0), membership(1)]),
        },
      ),
    action: { kind: 'none' },
    progressing: [
      'True',
      'RetryAfterDeadline',
      'the previous target missed its deadline; now 2 members of etcd 3.5.16',
    ],
    events: [
      {
        type: 'Normal',
        reason: 'RetryAfterDeadline',
        message: 'the previous target missed its deadline; now 2 members of etcd 3.5.16',
      },
    ],
    status: s => assert.equal(s.progressDeadline, '2026-11-22T10:40:00Z'),
  },
  {
    name: 'a missed deadline: Warning once, the default 600 s named, the troubled Pod named',
    world: () =>
      withProblem(
        state(
          cluster(
            { progressDeadlineSeconds: undefined },
            locked(3, { clusterID: 'c', nextMemberOrdinal: 2 }),
          ),
          [member(0), member(1)],
          { now: LATER, etcd: etcdOf([membership(0), membership(1)]) },
        ),
        'demo-1',
        'CrashLoopBackOff: back-off 10s',
      ),
    action: { kind: 'none' },
    progressing: [
      'False',
      'DeadlineExceeded',
      "could not reach 3 members of etcd 3.5.16 within 600s; member demo-1: its Pod cannot run (CrashLoopBackOff: back-off 10s); see the Pod's logs; see the members' conditions and Pods, then edit the spec to retry or delete the cluster",
    ],
    events: [
      {
        type: 'Warning',
        reason: 'DeadlineExceeded',
        message:
          "could not reach 3 members of etcd 3.5.16 within 600s; member demo-1: its Pod cannot run (CrashLoopBackOff: back-off 10s); see the Pod's logs; see the members' conditions and Pods, then edit the spec to retry or delete the cluster",
      },
    ],
    status: s => assert.equal(s.progressDeadline, '2026-11-22T10:10:00Z', 'the deadline stays'),
  },
  {
    name: 'a cluster that never formed: BootstrapFailed, Warning, with the configured seconds',
    world: () =>
      state(cluster({ progressDeadlineSeconds: 300 }, locked(3, { nextMemberOrdinal: 1 })), [member(0)], {
        now: LATER,
        ready: [],
      }),
    action: { kind: 'none' },
    progressing: [
      'False',
      'BootstrapFailed',
      'the cluster did not form within 300s; fix the cause, then delete and recreate the cluster',
    ],
    events: [
      {
        type: 'Warning',
        reason: 'BootstrapFailed',
        message: 'the cluster did not form within 300s; fix the cause, then delete and recreate the cluster',
      },
    ],
  },
  {
    name: 'Services missing while the target is reached: created, still Reconciled',
    world: () => state(formed(3), three(), { etcd: etcd3(), services: false }),
    action: { kind: 'ensure-services' },
    progressing: ['False', 'Reconciled', '3 members of etcd 3.5.16: reached'],
    events: [],
  },
  {
    name: 'Services missing while working: CreatingServices',
    world: () => state(cluster({}, locked(3, { nextMemberOrdinal: 0 })), [], { services: false }),
    action: { kind: 'ensure-services' },
    progressing: ['True', 'CreatingServices', 'creating Services'],
  },
  {
    name: 'paused before it ever formed',
    world: () => state(cluster({ replicas: 0 }, locked(0, { nextMemberOrdinal: 0 })), []),
    action: { kind: 'none' },
    progressing: ['False', 'Paused', 'paused before bootstrap'],
  },
  {
    name: 'the seed claim of a one-member cluster names demo-0 and records the operation with the ordinal',
    world: () => state(cluster({ replicas: 1 }, locked(1, { nextMemberOrdinal: 0 })), []),
    action: { kind: 'claim', operation: op('demo-0', true) },
    progressing: ['True', 'Bootstrapping', 'creating the seed member demo-0'],
    status: s => {
      assert.deepEqual(s.operation, op('demo-0', true));
      assert.equal(s.nextMemberOrdinal, 1);
    },
  },
  {
    name: 'a new empty three-member cluster claims all three initial members in one write',
    world: () => state(cluster({}, locked(3, { nextMemberOrdinal: 0 })), []),
    action: {
      kind: 'claim',
      operation: { ...op('demo-0', true), initialMembers: ['demo-0', 'demo-1', 'demo-2'] },
    },
    progressing: ['True', 'Bootstrapping', 'creating the initial members demo-0, demo-1, demo-2 together'],
    status: s => assert.equal(s.nextMemberOrdinal, 3),
  },
  {
    name: 'a member that is not the seed does not stand in for one: a seed is claimed',
    world: () =>
      state(cluster({}, locked(3, { nextMemberOrdinal: 2 })), [member(1, { bootstrap: false })], {
        ready: [],
      }),
    action: { kind: 'claim', operation: op('demo-2', true) },
    progressing: ['True', 'Bootstrapping', 'creating the seed member demo-2'],
  },
  {
    name: 'the seed is latched by peer URL before etcd knows its name',
    world: () =>
      state(cluster({}, locked(3, { nextMemberOrdinal: 1 })), [member(0)], {
        etcd: etcdOf([membership(0, { started: false })]),
      }),
    action: { kind: 'none' },
    progressing: ['True', 'Bootstrapped', 'etcd cluster c0ffee0000000001 formed with seed member demo-0'],
    events: [
      {
        type: 'Normal',
        reason: 'ClusterFormed',
        message: 'etcd cluster c0ffee0000000001 formed with seed member demo-0',
      },
    ],
    status: s => assert.equal(s.clusterID, 'c0ffee0000000001'),
  },
  {
    name: 'the seed is latched by name whatever peer URL it advertises',
    world: () =>
      state(cluster({}, locked(3, { nextMemberOrdinal: 1 })), [member(0)], {
        etcd: etcdOf([{ ...membership(0), peerURLs: ['http://10.0.0.7:2380'] }]),
      }),
    action: { kind: 'none' },
    progressing: ['True', 'Bootstrapped', 'etcd cluster c0ffee0000000001 formed with seed member demo-0'],
    status: s => assert.equal(s.clusterID, 'c0ffee0000000001'),
  },
  {
    name: 'a lone etcd member that is not the seed is not latched',
    world: () =>
      state(cluster({}, locked(3, { nextMemberOrdinal: 1 })), [member(0)], {
        etcd: etcdOf([{ ...membership(5), name: 'other', peerURLs: ['http://10.0.0.7:2380'] }]),
      }),
    action: { kind: 'wait', reason: 'waiting for the seed member demo-0 to answer: no answer yet' },
    progressing: ['True', 'WaitingForSeed', 'waiting for the seed member demo-0 to answer: no answer yet'],
    events: [],
    status: s => assert.equal(s.clusterID, undefined),
  },
  {
    name: 'the seed is ready but etcd refuses: the error is shown',
    world: () =>
      state(cluster({}, locked(3, { nextMemberOrdinal: 1 })), [member(0)], {
        etcd: { reachable: false, error: 'connection refused' },
      }),
    action: { kind: 'wait', reason: 'waiting for the seed member demo-0 to answer: connection refused' },
    progressing: [
      'True',
      'WaitingForSeed',
      'waiting for the seed member demo-0 to answer: connection refused',
    ],
  },
  {
    name: 'the seed is ready and etcd was not asked yet',
    world: () => state(cluster({}, locked(3, { nextMemberOrdinal: 1 })), [member(0)]),
    action: { kind: 'wait', reason: 'waiting for the seed member demo-0 to answer: no answer yet' },
    progressing: ['True', 'WaitingForSeed', 'waiting for the seed member demo-0 to answer: no answer yet'],
  },
  {
    name: 'the seed is not ready: its image problem and what to check',
    world: () =>
      withProblem(
        state(cluster({}, locked(3, { nextMemberOrdinal: 1 })), [member(0)], { ready: [] }),
        'demo-0',
        'ImagePullBackOff: not found',
      ),
    action: {
      kind: 'wait',
      reason: `waiting for the seed member demo-0 to start: its Pod cannot run (ImagePullBackOff: not found); ${IMAGE_HINT}`,
    },
    progressing: [
      'True',
      'WaitingForSeed',
      `waiting for the seed member demo-0 to start: its Pod cannot run (ImagePullBackOff: not found); ${IMAGE_HINT}`,
    ],
  },
  {
    name: 'a member being deleted: wait, one membership change at a time',
    world: () => state(formed(2), [member(0), member(1), member(2, { deleting: true })], { etcd: etcd3() }),
    action: { kind: 'wait', reason: 'removing member demo-2 from etcd' },
    progressing: ['True', 'ScalingDown', 'removing member demo-2 from etcd'],
  },
  {
    name: 'an orphan in etcd is removed, named by ID and peer URL',
    world: () =>
      state(formed(1), [member(0)], {
        etcd: etcdOf([membership(0), membership(9, { learner: true, started: false })]),
      }),
    action: { kind: 'remove-orphan', id: membership(9).id, peerURL: 'http://demo-9.demo.prod.svc:2380' },
    progressing: [
      'True',
      'RemovingOrphan',
      `removing etcd member ${membership(9).id} (http://demo-9.demo.prod.svc:2380), which no EtcdMember stands for`,
    ],
    events: [],
  },
  {
    name: 'an orphan without a peer URL',
    world: () =>
      state(formed(1), [member(0)], { etcd: etcdOf([membership(0), { ...membership(9), peerURLs: [] }]) }),
    action: { kind: 'remove-orphan', id: membership(9).id, peerURL: '' },
    progressing: [
      'True',
      'RemovingOrphan',
      `removing etcd member ${membership(9).id} (no peer URL), which no EtcdMember stands for`,
    ],
  },
  {
    name: 'a voter whose EtcdMember has no status yet is recorded as a voter',
    world: () => {
      const members = three();
      delete members[2].status;
      return state(formed(3), members, { etcd: etcd3() });
    },
    action: { kind: 'mark-voter', member: 'demo-2' },
    progressing: ['True', 'ScalingUp', 'recording demo-2 as a voter'],
  },
  {
    name: 'a member etcd does not list is not recorded as a voter',
    world: () =>
      state(formed(2), [member(0), member(1, { voter: false })], {
        etcd: etcdOf([membership(0)]),
        pdb: false,
      }),
    action: { kind: 'ensure-pdb' },
    progressing: ['False', 'Reconciled', '2 members of etcd 3.5.16: reached'],
  },
  {
    // etcd lists it as started once it has published its client URLs, which no Kubernetes event
    // follows; etcd refuses to promote a learner that is not in sync, and the promotion retries.
    name: 'a learner whose Pod runs, not yet listed by etcd as started, is promoted',
    world: () =>
      state(formed(3), [member(0), member(1), member(2, { voter: false })], {
        ready: [0, 1],
        etcd: etcdOf([membership(0), membership(1), membership(2, { learner: true, started: false })]),
      }),
    action: { kind: 'promote', member: 'demo-2', id: membership(2).id },
    progressing: ['True', 'ScalingUp', 'promoting learner demo-2 to voter'],
  },
  {
    name: 'a started learner whose Pod is not ready is waited for, with the Pod trouble',
    world: () =>
      withProblem(
        state(formed(3), [member(0), member(1), member(2, { voter: false })], {
          ready: [0, 1],
          etcd: etcdOf([membership(0), membership(1), membership(2, { learner: true })]),
        }),
        'demo-2',
        'CrashLoopBackOff: x',
      ),
    action: {
      kind: 'wait',
      reason:
        "waiting for learner demo-2 to start and catch up: its Pod cannot run (CrashLoopBackOff: x); see the Pod's logs",
    },
    progressing: [
      'True',
      'ScalingUp',
      "waiting for learner demo-2 to start and catch up: its Pod cannot run (CrashLoopBackOff: x); see the Pod's logs",
    ],
  },
  {
    // etcd having started the learner is what makes the promotion possible; whether it caught up is
    // etcd's own check (retried in the request), so the readiness probe's next period is not awaited.
    name: 'a started learner whose Pod runs, before its readiness probe passes, is promoted',
    world: () =>
      state(formed(3), [member(0), member(1), member(2, { voter: false })], {
        ready: [0, 1],
        etcd: etcdOf([membership(0), membership(1), membership(2, { learner: true })]),
      }),
    action: { kind: 'promote', member: 'demo-2', id: membership(2).id },
    progressing: ['True', 'ScalingUp', 'promoting learner demo-2 to voter'],
    events: [],
  },
  {
    name: 'a started learner whose Pod is not running (Pending) is waited for',
    world: () => {
      const s = state(formed(3), [member(0), member(1), member(2, { voter: false })], {
        ready: [0, 1],
        etcd: etcdOf([membership(0), membership(1), membership(2, { learner: true })]),
      });
      const pod = s.pods.find(p => p.name === 'demo-2');
      if (pod) pod.phase = 'Pending';
      return s;
    },
    action: { kind: 'wait', reason: 'waiting for learner demo-2 to start and catch up' },
    progressing: ['True', 'ScalingUp', 'waiting for learner demo-2 to start and catch up'],
  },
  {
    name: 'a started learner whose Pod is being deleted is waited for',
    world: () => {
      const s = state(formed(3), [member(0), member(1), member(2, { voter: false })], {
        etcd: etcdOf([membership(0), membership(1), membership(2, { learner: true })]),
      });
      const pod = s.pods.find(p => p.name === 'demo-2');
      if (pod) pod.deleting = true;
      return s;
    },
    action: { kind: 'wait', reason: 'waiting for learner demo-2 to start and catch up' },
    progressing: ['True', 'ScalingUp', 'waiting for learner demo-2 to start and catch up'],
  },
  {
    name: 'a started learner whose Pod is ready is promoted',
    world: () =>
      state(formed(3), [member(0), member(1), member(2, { voter: false })], {
        etcd: etcdOf([membership(0), membership(1), membership(2, { learner: true })]),
      }),
    action: { kind: 'promote', member: 'demo-2', id: membership(2).id },
    progressing: ['True', 'ScalingUp', 'promoting learner demo-2 to voter'],
    events: [],
  },
  {
    name: 'resuming starts the dormant member again, with an Event',
    world: () => state(formed(1), [member(0, { dormant: true })], { pdb: false }),
    action: { kind: 'set-dormant', member: 'demo-0', dormant: false },
    progressing: ['True', 'Resuming', 'resuming: starting member demo-0 again on its kept data'],
    events: [
      {
        type: 'Normal',
        reason: 'Resuming',
        message: 'resuming: starting member demo-0 again on its kept data',
      },
    ],
  },
  {
    name: 'scale-up waits for an unready member, naming its trouble',
    world: () =>
      withProblem(
        state(formed(3, { nextMemberOrdinal: 2 }), [member(0), member(1)], {
          ready: [0],
          etcd: etcdOf([membership(0), membership(1)]),
        }),
        'demo-1',
        'ErrImagePull: nope',
      ),
    action: {
      kind: 'wait',
      reason: `waiting for member demo-1 to be ready before adding the next one: its Pod cannot run (ErrImagePull: nope); ${IMAGE_HINT}`,
    },
    progressing: [
      'True',
      'ScalingUp',
      `waiting for member demo-1 to be ready before adding the next one: its Pod cannot run (ErrImagePull: nope); ${IMAGE_HINT}`,
    ],
  },
  {
    name: 'scale-up claims the next ordinal as a learner',
    world: () =>
      state(formed(3, { nextMemberOrdinal: 2 }), [member(0), member(1)], {
        etcd: etcdOf([membership(0), membership(1)]),
      }),
    action: { kind: 'claim', operation: op('demo-2') },
    progressing: ['True', 'ScalingUp', 'adding member demo-2'],
    events: [],
    status: s => {
      assert.deepEqual(s.operation, op('demo-2'));
      assert.equal(s.nextMemberOrdinal, 3);
    },
  },
  {
    name: 'pausing makes the last member dormant, with an Event',
    world: () => state(formed(0, { nextMemberOrdinal: 1 }), [member(0)], { etcd: etcdOf([membership(0)]) }),
    action: { kind: 'set-dormant', member: 'demo-0', dormant: true },
    progressing: ['True', 'Pausing', 'pausing: stopping member demo-0 and keeping its data'],
    events: [
      { type: 'Normal', reason: 'Pausing', message: 'pausing: stopping member demo-0 and keeping its data' },
    ],
  },
  {
    name: 'pausing two members removes the newest first; only the last one is kept dormant',
    world: () =>
      state(formed(0, { nextMemberOrdinal: 2 }), [member(0), member(1)], {
        etcd: etcdOf([membership(0), membership(1)]),
      }),
    action: { kind: 'delete-member', member: 'demo-1' },
    progressing: ['True', 'ScalingDown', 'removing member demo-1 (2 → 0)'],
    events: [{ type: 'Normal', reason: 'ScalingDown', message: 'removing member demo-1 (2 → 0)' }],
  },
  {
    name: 'scale-down with an unready member removes the unready one, not the leader',
    world: () =>
      state(formed(2), three(), {
        ready: [0, 2],
        etcd: etcdOf([membership(1), membership(0), membership(2)], 2),
      }),
    action: { kind: 'delete-member', member: 'demo-1' },
    progressing: ['True', 'ScalingDown', 'removing member demo-1 (3 → 2)'],
  },
  {
    name: 'scale-down waits while a member that stays has not started in etcd',
    world: () =>
      state(formed(2), three(), {
        etcd: {
          ...(etcdOf([membership(0, { started: false }), membership(1), membership(2)]) as Reachable),
          leaderId: membership(2).id,
        },
      }),
    action: {
      kind: 'wait',
      reason: 'not removing member demo-2 yet: member demo-0, which stays, has not started in etcd',
    },
    progressing: [
      'True',
      'ScalingDown',
      'not removing member demo-2 yet: member demo-0, which stays, has not started in etcd',
    ],
  },
  {
    name: 'scale-down with two members down waits: removing either could cost quorum',
    world: () => state(formed(2), three(), { ready: [2], etcd: etcd3(2) }),
    action: {
      kind: 'wait',
      reason:
        'not removing member demo-1 yet: member demo-0, which stays, is not ready; removing a member while another is down could cost the cluster its quorum',
    },
    progressing: [
      'True',
      'ScalingDown',
      'not removing member demo-1 yet: member demo-0, which stays, is not ready; removing a member while another is down could cost the cluster its quorum',
    ],
  },
];

const upgradeRows: Row[] = [
  {
    name: 'upgrade: a new Pod that has not reported a version yet paces the next one',
    world: () =>
      state(formed(3), [on(0, OLD, OLD), on(1, OLD, OLD), on(2, NEW, undefined)], { etcd: etcd3() }),
    action: { kind: 'wait', reason: 'waiting for demo-2 to run etcd 3.5.16' },
    progressing: ['True', 'Upgrading', 'waiting for demo-2 to run etcd 3.5.16 (0/3 members on 3.5.16)'],
  },
  {
    name: 'upgrade: the member in flight cannot pull its image',
    world: () =>
      withProblem(
        state(formed(3), [on(0, OLD, OLD), on(1, NEW, NEW), on(2, NEW, OLD)], { etcd: etcd3() }),
        'demo-2',
        'ErrImagePull: x',
      ),
    action: { kind: 'none' },
    progressing: [
      'False',
      'VersionNotPulled',
      'stopped: the Pod of member demo-2 cannot pull etcd 3.5.16 (ErrImagePull: x); check that 3.5.16 is a released etcd version and that its image can be pulled, then set spec.version to a released version (the other members run 3.4.23, 3.5.16); the other members are left as they are',
    ],
  },
  {
    name: 'upgrade: a member in flight that crash-loops is waited for (not a pull failure)',
    world: () =>
      withProblem(
        state(formed(3), [on(0, OLD, OLD), on(1, NEW, NEW), on(2, NEW, OLD)], { etcd: etcd3() }),
        'demo-2',
        'CrashLoopBackOff: back-off',
      ),
    action: {
      kind: 'wait',
      reason:
        "waiting for demo-2 to run etcd 3.5.16: its Pod cannot run (CrashLoopBackOff: back-off); see the Pod's logs",
    },
    progressing: [
      'True',
      'Upgrading',
      "waiting for demo-2 to run etcd 3.5.16: its Pod cannot run (CrashLoopBackOff: back-off); see the Pod's logs (1/3 members on 3.5.16)",
    ],
  },
  {
    name: 'upgrade: an unready member holds the next one back',
    world: () =>
      state(formed(3), [on(0, OLD, OLD), on(1, OLD, OLD), on(2, NEW, NEW)], { ready: [0, 2], etcd: etcd3() }),
    action: { kind: 'wait', reason: 'waiting for member demo-1 to be ready before upgrading the next one' },
    progressing: [
      'True',
      'Upgrading',
      'waiting for member demo-1 to be ready before upgrading the next one (1/3 members on 3.5.16)',
    ],
  },
  {
    name: 'upgrade: the newest follower goes first, skipping the leader',
    world: () => state(formed(3), [on(0, OLD, OLD), on(1, OLD, OLD), on(2, OLD, OLD)], { etcd: etcd3(2) }),
    action: { kind: 'upgrade-member', member: 'demo-1', from: OLD, version: NEW },
    progressing: [
      'True',
      'Upgrading',
      'upgrading member demo-1 from etcd 3.4.23 to 3.5.16 (0/3 members on 3.5.16)',
    ],
    events: [
      {
        type: 'Normal',
        reason: 'UpgradingMember',
        message: 'upgrading member demo-1 from etcd 3.4.23 to 3.5.16',
      },
    ],
  },
  {
    name: 'upgrade: leadership moves to an upgraded voter before the leader is upgraded',
    world: () => state(formed(3), [on(0, OLD, OLD), on(1, NEW, NEW), on(2, NEW, NEW)], { etcd: etcd3(0) }),
    action: { kind: 'move-leader', from: 'demo-0', toId: membership(1).id },
    progressing: [
      'True',
      'Upgrading',
      'moving leadership off demo-0 before upgrading it (2/3 members on 3.5.16)',
    ],
    events: [],
  },
  {
    name: 'upgrade: with no leader known, the newest member goes first',
    world: () =>
      state(formed(3), [on(0, OLD, OLD), on(1, OLD, OLD), on(2, OLD, OLD)], {
        etcd: { reachable: true, members: (etcd3() as Reachable).members, clusterId: 'c0ffee0000000001' },
      }),
    action: { kind: 'upgrade-member', member: 'demo-2', from: OLD, version: NEW },
    progressing: [
      'True',
      'Upgrading',
      'upgrading member demo-2 from etcd 3.4.23 to 3.5.16 (0/3 members on 3.5.16)',
    ],
  },
  {
    name: 'upgrade: etcd not observed (no leader known): the newest member goes first',
    world: () => state(formed(3), [on(0, OLD, OLD), on(1, OLD, OLD), on(2, OLD, OLD)]),
    action: { kind: 'upgrade-member', member: 'demo-2', from: OLD, version: NEW },
    progressing: [
      'True',
      'Upgrading',
      'upgrading member demo-2 from etcd 3.4.23 to 3.5.16 (0/3 members on 3.5.16)',
    ],
  },
  {
    name: 'upgrade: a Memory-medium cluster of 1 member is refused, naming the version to go back to',
    world: () =>
      state(
        cluster({ replicas: 1, storage: { size: '1Gi', medium: 'Memory' } }, locked(1, { clusterID: 'c' })),
        [on(0, OLD, OLD)],
        {
          etcd: etcdOf([membership(0)]),
        },
      ),
    action: {
      kind: 'wait',
      reason:
        'a Memory-medium cluster of 1 member cannot be upgraded without losing its data (each member is replaced); scale it to 3 first, or set spec.version back to 3.4.23',
    },
    progressing: [
      'True',
      'Upgrading',
      'a Memory-medium cluster of 1 member cannot be upgraded without losing its data (each member is replaced); scale it to 3 first, or set spec.version back to 3.4.23 (0/1 members on 3.5.16)',
    ],
  },
  {
    name: 'upgrade: a Memory-medium cluster of 2 members already moving says "the running version"',
    world: () =>
      state(
        cluster({ replicas: 2, storage: { size: '1Gi', medium: 'Memory' } }, locked(2, { clusterID: 'c' })),
        [on(0, NEW, OLD), on(1, NEW, NEW)],
        { etcd: etcdOf([membership(0), membership(1)]) },
      ),
    action: {
      kind: 'wait',
      reason:
        'a Memory-medium cluster of 2 members cannot be upgraded without losing its data (each member is replaced); scale it to 3 first, or set spec.version back to the running version',
    },
    progressing: [
      'True',
      'Upgrading',
      'a Memory-medium cluster of 2 members cannot be upgraded without losing its data (each member is replaced); scale it to 3 first, or set spec.version back to the running version (1/2 members on 3.5.16)',
    ],
  },
  {
    name: 'upgrade: a Memory-medium cluster of 3 members is upgraded member by member',
    world: () =>
      state(
        cluster({ storage: { size: '1Gi', medium: 'Memory' } }, locked(3, { clusterID: 'c' })),
        [on(0, OLD, OLD), on(1, OLD, OLD), on(2, OLD, OLD)],
        { etcd: etcd3() },
      ),
    action: { kind: 'upgrade-member', member: 'demo-2', from: OLD, version: NEW },
    progressing: [
      'True',
      'Upgrading',
      'upgrading member demo-2 from etcd 3.4.23 to 3.5.16 (0/3 members on 3.5.16)',
    ],
  },
];

const project = (plan: ClusterPlan) => {
  const p = findCondition(plan.status.conditions, 'Progressing');
  return { action: plan.action, progressing: [p?.status, p?.reason, p?.message] };
};

describe('planCluster: each world, its step and the words a user reads', () => {
  for (const row of [...rows, ...upgradeRows]) {
    it(row.name, () => {
      const plan = planCluster(row.world());
      assert.deepEqual(project(plan), { action: row.action, progressing: row.progressing });
      if (row.events) assert.deepEqual(plan.events, row.events);
      row.status?.(plan.status);
    });
  }
});

describe('planCluster: the target counts as reached only when everything says so', () => {
  // Probe: a spec edit is adopted only once the current target is reached.
  const adopted = (s: ClusterState) => planCluster(s).status.observed?.replicas !== 3;
  const edited = (extra: EtcdClusterStatus = {}) =>
    cluster({ replicas: 5 }, locked(3, { clusterID: 'c', ...extra }));

  it('reached: three ready voters, etcd agrees', () => {
    assert.equal(adopted(state(edited(), three(), { etcd: etcd3() })), true);
  });
  it('not with a dormant member, even if etcd lists three', () => {
    const members = [member(0), member(1), member(2, { dormant: true })];
    assert.equal(adopted(state(edited(), members, { etcd: etcd3() })), false);
  });
  it('not while a member is being deleted', () => {
    const members = [...three(), member(3, { deleting: true })];
    assert.equal(adopted(state(edited(), members, { etcd: etcd3() })), false);
  });
  it('not before the cluster ID is latched', () => {
    const c = cluster({ replicas: 5 }, locked(3));
    assert.equal(adopted(state(c, three(), { etcd: etcd3() })), false);
  });
  it('not while one member is unready', () => {
    assert.equal(adopted(state(edited(), three(), { ready: [0, 1], etcd: etcd3() })), false);
  });
  it('not while etcd does not answer, or was not asked', () => {
    assert.equal(adopted(state(edited(), three(), { etcd: { reachable: false, error: 'x' } })), false);
    assert.equal(adopted(state(edited(), three())), false);
  });
  it('not while a member set to the target still runs the old release', () => {
    const members = [on(0, NEW, NEW), on(1, NEW, NEW), on(2, NEW, OLD)];
    assert.equal(adopted(state(edited(), members, { etcd: etcd3() })), false);
  });
  it('not while a member is on an older spec', () => {
    const members = [on(0, NEW, NEW), on(1, NEW, NEW), on(2, OLD, OLD)];
    assert.equal(adopted(state(edited(), members, { etcd: etcd3() })), false);
  });
  it('not while etcd lists a member too many, or a learner', () => {
    const extra = etcdOf([membership(0), membership(1), membership(2), membership(3)]);
    assert.equal(adopted(state(edited(), three(), { etcd: extra })), false);
    const learner = etcdOf([membership(0), membership(1), membership(2, { learner: true })]);
    assert.equal(adopted(state(edited(), three(), { etcd: learner })), false);
  });
  it('a paused cluster is reached with no member running and etcd not asked', () => {
    const c = cluster({ replicas: 1 }, locked(0, { clusterID: 'c' }));
    assert.equal(
      planCluster(state(c, [member(0, { dormant: true })], { pdb: false })).status.observed?.replicas,
      1,
    );
  });
});

describe('planCluster: the PodDisruptionBudget follows the voters', () => {
  const withPdb = (s: ClusterState, voters: number): ClusterState => {
    const pdb = buildPdb(s.cluster, { voters });
    if (pdb) s.pdb = pdb;
    else delete s.pdb;
    return s;
  };
  const unreachable = (voters: boolean[]): ClusterState => ({
    ...state(
      formed(3),
      voters.map((voter, i) => member(i, { voter })),
      { pdb: false },
    ),
    etcd: { reachable: false, error: 'x' },
  });

  it('etcd not answering: the members recorded as voters are counted', () => {
    assert.equal(planCluster(unreachable([true, true, true])).action.kind, 'ensure-pdb');
    assert.equal(planCluster(withPdb(unreachable([true, true, true]), 3)).action.kind, 'none');
    assert.equal(planCluster(unreachable([false, false, false])).action.kind, 'none', 'no voter, no PDB');
  });
  it('a PDB left where no voter needs one is removed; none is not created', () => {
    const paused = () =>
      state(formed(0, { nextMemberOrdinal: 1 }), [member(0, { dormant: true })], { pdb: false });
    assert.equal(planCluster(paused()).action.kind, 'none');
    assert.equal(planCluster(withPdb(paused(), 3)).action.kind, 'ensure-pdb');
  });
});

describe('planCluster: a cluster being deleted', () => {
  it('keeps its status as it is and records nothing', () => {
    const c = cluster({}, locked(3, { clusterID: 'c' }));
    c.metadata.deletionTimestamp = NOW;
    const plan = planCluster(state(c, [member(0)]));
    assert.deepEqual(plan, { action: { kind: 'none' }, status: c.status, events: [] });
  });
});

describe('planCluster: edges of the world', () => {
  const withoutPod = (s: ClusterState, name: string): ClusterState => ({
    ...s,
    pods: s.pods.filter(p => p.name !== name),
  });

  it('the token is made from whatever metadata there is', () => {
    const noNamespace = cluster();
    delete noNamespace.metadata.namespace;
    assert.equal(
      planCluster(state(noNamespace, [], { services: false, networkPolicy: false })).status.clusterToken,
      '-demo-uid-1',
    );
    const noUid = cluster();
    delete noUid.metadata.uid;
    assert.equal(
      planCluster(state(noUid, [], { services: false, networkPolicy: false })).status.clusterToken,
      'prod-demo-',
    );
  });

  it('a member without a Pod: waited for, no trouble named', () => {
    const s = withoutPod(
      state(formed(3, { nextMemberOrdinal: 2 }), [member(0), member(1)], {
        etcd: etcdOf([membership(0), membership(1)]),
      }),
      'demo-1',
    );
    assert.deepEqual(planCluster(s).action, {
      kind: 'wait',
      reason: 'waiting for member demo-1 to be ready before adding the next one',
    });
  });

  it('a missed deadline with a member without a Pod names no Pod trouble', () => {
    const s = withoutPod(
      state(formed(3, { nextMemberOrdinal: 2 }), [member(0), member(1)], {
        now: LATER,
        etcd: etcdOf([membership(0), membership(1)]),
      }),
      'demo-1',
    );
    assert.equal(
      findCondition(planCluster(s).status.conditions, 'Progressing')?.message,
      "could not reach 3 members of etcd 3.5.16 within 600s; see the members' conditions and Pods, then edit the spec to retry or delete the cluster",
    );
  });

  it('a missed deadline already reported is not reported again', () => {
    const world = () =>
      state(formed(3, { nextMemberOrdinal: 2 }), [member(0), member(1)], {
        now: LATER,
        etcd: etcdOf([membership(0), membership(1)]),
      });
    const first = planCluster(world());
    assert.equal(first.events.length, 1);
    const again = world();
    again.cluster = { ...again.cluster, status: first.status };
    assert.deepEqual(planCluster(again).events, []);
    const otherReason = world();
    otherReason.cluster = {
      ...otherReason.cluster,
      status: {
        ...first.status,
        conditions: first.status.conditions?.map(c =>
          c.type === 'Progressing' ? { ...c, reason: 'ScalingUp' } : c,
        ),
      },
    };
    assert.equal(planCluster(otherReason).events.length, 1, 'reported once the reason changes to it');
  });

  it('scale-down with etcd not observed waits: the health of the members that stay is unknown', () => {
    assert.deepEqual(planCluster(state(formed(2), three())).action, {
      kind: 'wait',
      reason:
        'not removing member demo-2 yet: etcd does not answer (no member to ask), so the health of the members that stay is unknown',
    });
  });

  it('isComplete: never while an operation is recorded', () => {
    const s = state(formed(3, { operation: op('demo-3') }), three(), { etcd: etcd3() });
    assert.equal(isComplete(s), false);
    assert.equal(isComplete(state(formed(3), three(), { etcd: etcd3() })), true);
  });
});
