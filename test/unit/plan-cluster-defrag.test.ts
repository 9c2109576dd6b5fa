// The defragmentation policy (shared/plan/space/defrag.ts, through planCluster): which member is
// due, in which order (followers by name, the leader last), every guard that holds it back, and
// what a claim left in status.operation leads to (wait, take over, or drop it and plan on).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster, EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import type { DefragPolicy } from '../../shared/api/maintenance.ts';
import { planCluster } from '../../shared/plan/cluster/plan.ts';
import {
  decideDefrag,
  parseFraction,
  thresholdOf,
  type DefragDecision,
} from '../../shared/plan/space/defrag.ts';
import type { ClusterState, EtcdView } from '../../shared/plan/cluster/types.ts';
import { NOW, cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';
import type { MemberSpace } from '../../shared/plan/space/types.ts';

const MIB = 1024 * 1024;
const POLICY: DefragPolicy = { threshold: { unusedFraction: '0.3', minUnusedBytes: '1Mi' } };
const formed = (extra: EtcdClusterStatus = {}) => locked(3, { clusterID: 'c0ffee0000000001', ...extra });
const three = () => [member(0), member(1), member(2)];
const fragmented: MemberSpace = { dbSize: 20 * MIB, dbSizeInUse: 2 * MIB };
const compact: MemberSpace = { dbSize: 2 * MIB, dbSizeInUse: 2 * MIB };
const etcd = (leader = 1, extra: Partial<Extract<EtcdView, { reachable: true }>> = {}): EtcdView => ({
  ...(etcdOf([membership(0), membership(1), membership(2)], leader) as Extract<
    EtcdView,
    { reachable: true }
  >),
  ...extra,
});
const claim = (member: string, startedAt = '2026-11-22T09:59:40Z') => ({
  type: 'defrag' as const,
  member,
  startedAt,
  why: 'x',
});

interface World {
  spec?: Partial<EtcdCluster['spec']>;
  status?: EtcdClusterStatus;
  space?: Record<string, MemberSpace | undefined>;
  opts?: Parameters<typeof state>[2];
}
function world({
  spec = { maintenance: { defrag: POLICY } },
  status = formed(),
  space,
  opts,
}: World = {}): ClusterState {
  const s = state(cluster(spec, status), three(), { etcd: etcd(), ...opts });
  s.space = space ?? { 'demo-0': fragmented, 'demo-1': fragmented, 'demo-2': fragmented };
  return s;
}

describe('defragmentation policy: the threshold', () => {
  it('reads a fraction as a decimal or a percentage', () => {
    assert.equal(parseFraction('0.5'), 0.5);
    assert.equal(parseFraction('.25'), 0.25);
    assert.equal(parseFraction('30%'), 0.3);
    assert.equal(parseFraction('7.5%'), 0.075);
  });
  it('defaults to 50 % and 100 MiB; takes a byte count or a quantity', () => {
    assert.deepEqual(thresholdOf(cluster({ maintenance: { defrag: {} } })), {
      fraction: 0.5,
      minBytes: 100 * MIB,
    });
    assert.deepEqual(thresholdOf(cluster({ maintenance: { defrag: POLICY } })), {
      fraction: 0.3,
      minBytes: MIB,
    });
    const bytes = { threshold: { unusedFraction: '50%', minUnusedBytes: 4096 } };
    assert.deepEqual(thresholdOf(cluster({ maintenance: { defrag: bytes } })), {
      fraction: 0.5,
      minBytes: 4096,
    });
    assert.equal(thresholdOf(cluster()), undefined);
  });
});

describe('defragmentation policy: the next step without a claim', () => {
  const rows: [string, World, boolean, DefragDecision['step'], string?][] = [
    ['no policy', { spec: {} }, true, 'off'],
    ['every member due: the first follower by name', {}, true, 'defragment', 'demo-0'],
    [
      'demo-0 done: the next follower',
      { space: { 'demo-0': compact, 'demo-1': fragmented, 'demo-2': fragmented } },
      true,
      'defragment',
      'demo-2',
    ],
    [
      'only the leader left',
      { space: { 'demo-0': compact, 'demo-1': fragmented, 'demo-2': compact } },
      true,
      'defragment',
      'demo-1',
    ],
    [
      'nobody due',
      { space: { 'demo-0': compact, 'demo-1': compact, 'demo-2': compact } },
      true,
      'nothing-due',
    ],
    [
      'unused above the fraction but not the bytes',
      {
        space: {
          'demo-0': { dbSize: 1 * MIB, dbSizeInUse: 0.1 * MIB },
          'demo-1': compact,
          'demo-2': compact,
        },
      },
      true,
      'nothing-due',
    ],
    [
      'unused above the bytes but not the fraction',
      {
        space: {
          'demo-0': { dbSize: 100 * MIB, dbSizeInUse: 80 * MIB },
          'demo-1': compact,
          'demo-2': compact,
        },
      },
      true,
      'nothing-due',
    ],
    ['etcd does not answer', { opts: { etcd: { reachable: false, error: 'refused' } } }, true, 'hold'],
    [
      'a NOSPACE alarm (its own recovery)',
      { opts: { etcd: etcd(1, { alarms: ['NOSPACE'] }) } },
      true,
      'hold',
    ],
    ['a CORRUPT alarm', { opts: { etcd: etcd(1, { alarms: ['CORRUPT'] }) } }, true, 'hold'],
    ['a member not ready (degraded)', { opts: { ready: [0, 1] } }, true, 'hold'],
    [
      'a member still a learner',
      { opts: { etcd: etcdOf([membership(0), membership(1), membership(2, { learner: true })], 1) } },
      true,
      'hold',
    ],
    [
      'a member etcd does not know',
      { opts: { etcd: etcdOf([membership(0), membership(1)], 1) } },
      true,
      'hold',
    ],
    [
      'a learner being added (another operation)',
      { status: formed({ operation: { type: 'add-member', member: 'demo-3' } as never }) },
      true,
      'hold',
    ],
    [
      'a replacement under way',
      { status: formed({ replacement: { member: 'demo-2', reason: 'x', startedAt: NOW.toISOString() } }) },
      true,
      'hold',
    ],
    [
      'an in-place restore under way',
      {
        status: formed({
          inPlaceRestore: {
            requestID: 'r',
            snapshot: 's',
            step: 'Restoring',
            source: {} as never,
            members: [],
            startedAt: NOW.toISOString(),
          },
        }),
      },
      true,
      'hold',
    ],
    [
      'a new target pending (scaling)',
      { spec: { replicas: 5, maintenance: { defrag: POLICY } } },
      true,
      'hold',
    ],
    ['the target not reached (an upgrade rolling)', {}, false, 'hold'],
    [
      'a member did not report its size',
      { space: { 'demo-0': fragmented, 'demo-1': fragmented, 'demo-2': undefined } },
      true,
      'hold',
    ],
  ];
  for (const [name, w, complete, expected, target] of rows) {
    it(`${name}: ${expected}${target ? ` ${target}` : ''}`, () => {
      const decision = decideDefrag(world(w), complete);
      assert.equal(decision.step, expected, JSON.stringify(decision));
      if (target) assert.equal(decision.step === 'defragment' && decision.member, target);
    });
  }

  it('planCluster claims the member in status.operation and says Defragmenting', () => {
    const plan = planCluster(world());
    assert.deepEqual(plan.action, {
      kind: 'defragment',
      member: 'demo-0',
      endpoint: 'http://demo-0.demo.prod.svc:2379',
      why: "18 MiB of its 20 MiB database unused (90 %), above the policy's 30 % and 1 MiB",
    });
    assert.deepEqual(plan.status.operation, {
      type: 'defrag',
      member: 'demo-0',
      startedAt: NOW.toISOString(),
      why: "18 MiB of its 20 MiB database unused (90 %), above the policy's 30 % and 1 MiB",
    });
    const progressing = plan.status.conditions?.find(c => c.type === 'Progressing');
    assert.equal(progressing?.reason, 'Defragmenting');
    assert.match(progressing?.message ?? '', /^defragmenting demo-0 \(18 MiB .*\); one member at a time/);
  });

  it('planCluster does nothing under a NOSPACE alarm but recover', () => {
    const plan = planCluster(world({ opts: { etcd: etcd(1, { alarms: ['NOSPACE'] }) } }));
    assert.equal(plan.action.kind, 'recover-space');
  });

  it('planCluster leaves a steady cluster alone when nobody is due (no write)', () => {
    const s = world({ space: { 'demo-0': compact, 'demo-1': compact, 'demo-2': compact } });
    const plan = planCluster(s);
    assert.equal(plan.action.kind, 'none');
    assert.equal(plan.status.operation, undefined);
    assert.equal(plan.status.conditions?.find(c => c.type === 'Progressing')?.reason, 'Reconciled');
  });
});

describe('defragmentation policy: a claim in status.operation', () => {
  const claimed = (member: string, startedAt?: string, extra: EtcdClusterStatus = {}) =>
    formed({ operation: claim(member, startedAt), ...extra });
  const EXPIRED = '2026-11-22T09:58:00Z';
  const rows: [string, World, DefragDecision['step'], string?][] = [
    ['young and the member still due: wait for it', { status: claimed('demo-0') }, 'await'],
    [
      'the member done and serving: drop the claim',
      { status: claimed('demo-0'), space: { 'demo-0': compact, 'demo-1': fragmented, 'demo-2': fragmented } },
      'finish',
    ],
    [
      'the member done but not serving yet: wait',
      {
        status: claimed('demo-0'),
        space: { 'demo-0': compact, 'demo-1': fragmented, 'demo-2': fragmented },
        opts: { ready: [1, 2] },
      },
      'await',
    ],
    [
      'the member did not answer (mid-defragmentation): wait',
      { status: claimed('demo-0'), space: { 'demo-1': fragmented, 'demo-2': fragmented } },
      'await',
    ],
    [
      'expired and still due on a healthy cluster: take it over',
      { status: claimed('demo-0', EXPIRED) },
      'defragment',
      'demo-0',
    ],
    [
      'expired while another member is down: give up',
      { status: claimed('demo-0', EXPIRED), opts: { ready: [0, 1] } },
      'finish',
    ],
    [
      'expired after the policy was removed: drop it',
      { spec: {}, status: claimed('demo-0', EXPIRED) },
      'finish',
    ],
    ['the member is gone', { status: claimed('demo-7') }, 'finish'],
  ];
  for (const [name, w, expected, target] of rows) {
    it(`${name}: ${expected}`, () => {
      const decision = decideDefrag(world(w), true);
      assert.equal(decision.step, expected, JSON.stringify(decision));
      if (target) assert.equal(decision.step === 'defragment' && decision.member, target);
    });
  }

  it('planCluster waits while a young claim stands, whatever else is due (no second member)', () => {
    const plan = planCluster(world({ status: claimed('demo-0') }));
    assert.equal(plan.action.kind, 'wait');
    assert.deepEqual(plan.status.operation, claim('demo-0'));
    assert.equal(plan.status.conditions?.find(c => c.type === 'Progressing')?.reason, 'Defragmenting');
    assert.deepEqual(plan.events, [], 'waiting on a claim says nothing new');
  });

  it('planCluster waits rather than adopt a new spec while a member is being defragmented', () => {
    const plan = planCluster(
      world({ spec: { replicas: 5, maintenance: { defrag: POLICY } }, status: claimed('demo-0') }),
    );
    assert.equal(plan.action.kind, 'wait');
    assert.equal(plan.status.observed?.replicas, 3);
  });

  it('planCluster drops a finished claim and claims the next member in one step', () => {
    const s = world({
      status: claimed('demo-0'),
      space: { 'demo-0': compact, 'demo-1': fragmented, 'demo-2': fragmented },
    });
    const plan = planCluster(s);
    assert.equal(plan.action.kind === 'defragment' && plan.action.member, 'demo-2');
    assert.equal((plan.status.operation as { member?: string }).member, 'demo-2');
  });

  it('planCluster drops the last claim and settles Reconciled', () => {
    const s = world({
      status: claimed('demo-1'),
      space: { 'demo-0': compact, 'demo-1': compact, 'demo-2': compact },
    });
    const plan = planCluster(s);
    assert.equal(plan.action.kind, 'none');
    assert.equal(plan.status.operation, undefined);
    assert.equal(plan.status.conditions?.find(c => c.type === 'Progressing')?.reason, 'Reconciled');
  });

  it('planCluster takes an expired claim over with a fresh start time', () => {
    const plan = planCluster(world({ status: claimed('demo-0', EXPIRED) }));
    assert.equal(plan.action.kind === 'defragment' && plan.action.member, 'demo-0');
    assert.equal((plan.status.operation as { startedAt?: string }).startedAt, NOW.toISOString());
  });

  it('planCluster gives up an expired claim on a degraded cluster and starts nothing', () => {
    const plan = planCluster(world({ status: claimed('demo-0', EXPIRED), opts: { ready: [0, 1] } }));
    assert.notEqual(plan.action.kind, 'defragment');
    assert.equal(plan.status.operation, undefined);
    assert.deepEqual(plan.events, [
      {
        type: 'Warning',
        reason: 'DefragmentationAbandoned',
        message: 'gave up on demo-0: the cluster is degraded: demo-2 is not ready',
      },
    ]);
  });

  it('planCluster drops a finished claim without a Warning', () => {
    const s = world({
      status: claimed('demo-1'),
      space: { 'demo-0': compact, 'demo-1': compact, 'demo-2': compact },
    });
    assert.deepEqual(planCluster(s).events, []);
  });
});
