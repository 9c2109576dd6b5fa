// A static bootstrap that does not form by its deadline is retried cleanly, as planCluster decides
// it: the attempt is recorded first, the old members are deleted (finalize-member lets them go with
// no etcd removal), and only when all are gone does the next attempt get its own token and deadline
// and claim new members. Never once etcd formed: a latched ID, a Ready member or an answer from etcd.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { findCondition } from '../../shared/conditions.ts';
import { planCluster, type ClusterPlan } from '../../shared/plan/cluster/plan.ts';
import type { ClusterState } from '../../shared/plan/cluster/types.ts';
import { needsEtcd, planFinalize } from '../../shared/plan/member/finalize.ts';
import { LATER, cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';

const NAMES = ['demo-0', 'demo-1', 'demo-2'];
const LIST = NAMES.map(n => `${n}=http://${n}.demo.prod.svc:2380`).join(',');
/** A member of the static bootstrap: created with the whole initial list. */
const initial = (i: number, o: { deleting?: boolean } = {}): EtcdMember => {
  const m = member(i, { bootstrap: true, ...o });
  m.spec.initialCluster = LIST;
  return m;
};
const all = (o: { deleting?: boolean } = {}) => [0, 1, 2].map(i => initial(i, o));
const recorded = (discarding?: string[]): EtcdClusterStatus['bootstrapRetry'] => ({
  attempt: 2,
  ...(discarding && { discarding }),
  reason: 'bootstrap attempt 1 (demo-0, demo-1, demo-2) did not form a cluster within 600s',
  startedAt: LATER.toISOString(),
});
const REASON = 'bootstrap attempt 1 (demo-0, demo-1, demo-2) did not form a cluster within 600s';
const withPodProblem = (s: ClusterState, name: string, problem: string): ClusterState => ({
  ...s,
  pods: s.pods.map(p => (p.name === name ? { ...p, problem } : p)),
});

interface Row {
  name: string;
  world: () => ClusterState;
  action: ClusterPlan['action'];
  progressing: [string, RegExp];
  status?: (s: EtcdClusterStatus) => void;
  warning?: RegExp;
}

const rows: Row[] = [
  {
    name: 'the deadline passes with no member Ready and no answer from etcd: the next attempt is recorded first',
    world: () => state(cluster({}, locked(3)), all(), { ready: [], now: LATER }),
    action: { kind: 'none' },
    progressing: [
      'BootstrapRetrying',
      /^bootstrap attempt 1 \(demo-0, demo-1, demo-2\) did not form a cluster within 600s: no quorum of its members became Ready; deleting those members and their data, then attempt 2 starts with new members and a new cluster token\. If attempts keep failing/,
    ],
    warning: /attempt 2 starts/,
    status: s => {
      assert.deepEqual(s.bootstrapRetry, {
        attempt: 2,
        discarding: NAMES,
        reason: `${REASON}: no quorum of its members became Ready`,
        startedAt: LATER.toISOString(),
      });
      assert.equal(s.clusterToken, 'prod-demo-uid-1', 'the token changes only once the old members are gone');
      assert.equal(s.clusterID, undefined);
    },
  },
  {
    name: 'a Ready member means etcd may have formed: no retry; the deadline report names what kept demo-1',
    world: () =>
      withPodProblem(
        state(cluster({}, locked(3)), all(), { ready: [0], now: LATER }),
        'demo-1',
        'CrashLoopBackOff',
      ),
    action: { kind: 'none' },
    progressing: ['BootstrapFailed', /did not form within 600s; member demo-1: its Pod cannot run/],
  },
  {
    name: 'a Pod that cannot run (no member Ready) is named in the retry',
    world: () =>
      withPodProblem(
        state(cluster({}, locked(3)), all(), { ready: [], now: LATER }),
        'demo-1',
        'ErrImagePull',
      ),
    action: { kind: 'none' },
    progressing: [
      'BootstrapRetrying',
      /within 600s; its Pod cannot run \(ErrImagePull\); check spec\.version/,
    ],
  },
  {
    name: 'etcd answers with the initial members after the deadline (a slow start): latched, nothing wiped',
    world: () =>
      state(cluster({}, locked(3)), all(), {
        ready: [],
        now: LATER,
        etcd: etcdOf([membership(0), membership(1), membership(2)]),
      }),
    action: { kind: 'none' },
    progressing: ['Bootstrapped', /formed with initial members demo-0, demo-1, demo-2/],
    status: s => {
      assert.equal(s.clusterID, 'c0ffee0000000001');
      assert.equal(s.bootstrapRetry, undefined);
    },
  },
  {
    name: 'etcd answers with another membership after the deadline: reported, not latched, nothing wiped',
    world: () =>
      state(cluster({}, locked(3)), all(), { ready: [], now: LATER, etcd: etcdOf([membership(0)]) }),
    action: { kind: 'none' },
    progressing: ['BootstrapFailed', /did not form within 600s/],
    status: s => {
      assert.equal(s.clusterID, undefined);
      assert.equal(s.bootstrapRetry, undefined);
    },
  },
  {
    name: 'a latched cluster ID is never retried: the deadline is reported as for any target',
    world: () =>
      state(cluster({}, locked(3, { clusterID: 'c0ffee0000000001' })), all(), { ready: [], now: LATER }),
    action: { kind: 'none' },
    progressing: ['DeadlineExceeded', /could not reach 3 members/],
    status: s => assert.equal(s.bootstrapRetry, undefined),
  },
  {
    name: 'a one-member seed keeps its BootstrapFailed report',
    world: () =>
      state(cluster({ replicas: 1 }, locked(1)), [member(0, { bootstrap: true })], { ready: [], now: LATER }),
    action: { kind: 'none' },
    progressing: ['BootstrapFailed', /delete and recreate the cluster/],
    status: s => assert.equal(s.bootstrapRetry, undefined),
  },
  {
    name: 'before the deadline the bootstrap just waits',
    world: () => state(cluster({}, locked(3)), all(), { ready: [0] }),
    action: { kind: 'wait', reason: 'waiting for initial member demo-1 to start' },
    progressing: ['WaitingForSeed', /demo-1/],
  },
  {
    name: 'recorded: the old members are deleted, all in one step',
    world: () =>
      state(cluster({}, locked(3, { bootstrapRetry: recorded(NAMES) })), all(), { ready: [], now: LATER }),
    action: { kind: 'delete-members', members: NAMES },
    progressing: ['BootstrapRetrying', /deleting demo-0, demo-1, demo-2 and their data before attempt 2$/],
  },
  {
    name: 'a crash after deleting one: the others still standing are deleted',
    world: () =>
      state(
        cluster({}, locked(3, { bootstrapRetry: recorded(NAMES) })),
        [initial(0, { deleting: true }), initial(1), initial(2)],
        { ready: [], now: LATER },
      ),
    action: { kind: 'delete-members', members: ['demo-1', 'demo-2'] },
    progressing: ['BootstrapRetrying', /deleting demo-1, demo-2/],
  },
  {
    name: 'all being deleted: wait for them to go (their deletion brings the event)',
    world: () =>
      state(cluster({}, locked(3, { bootstrapRetry: recorded(NAMES) })), all({ deleting: true }), {
        ready: [],
        now: LATER,
      }),
    action: {
      kind: 'wait',
      reason: `${REASON}; waiting for demo-0, demo-1, demo-2 to go before attempt 2`,
    },
    progressing: ['BootstrapRetrying', /waiting for demo-0, demo-1, demo-2 to go/],
  },
  {
    name: 'all gone: attempt 2 gets its own token and a new deadline; nothing is created in the same step',
    world: () =>
      state(
        cluster({}, locked(3, { bootstrapRetry: recorded(NAMES), operation: { stale: true } as never })),
        [],
        {
          now: LATER,
        },
      ),
    action: { kind: 'none' },
    progressing: ['BootstrapRetrying', /the old members are gone: starting attempt 2$/],
    status: s => {
      assert.equal(s.clusterToken, 'prod-demo-uid-1-attempt-2');
      assert.deepEqual(s.bootstrapRetry, recorded());
      assert.equal(s.progressDeadline, '2026-11-22T10:40:00Z');
      assert.equal(s.operation, undefined);
    },
  },
  {
    name: 'attempt 2 claims new members: new names, so new PVCs',
    world: () =>
      state(
        cluster(
          {},
          locked(3, {
            bootstrapRetry: recorded(),
            clusterToken: 'prod-demo-uid-1-attempt-2',
            progressDeadline: '2026-11-22T10:40:00Z',
          }),
        ),
        [],
        { now: LATER },
      ),
    action: {
      kind: 'claim',
      operation: {
        type: 'add-member',
        member: 'demo-3',
        bootstrap: true,
        initialMembers: ['demo-3', 'demo-4', 'demo-5'],
        startedAt: LATER.toISOString(),
      },
    },
    progressing: ['Bootstrapping', /creating the initial members demo-3, demo-4, demo-5 together/],
  },
  {
    name: 'attempt 2 fails too: attempt 3 is recorded',
    world: () =>
      state(
        cluster({}, locked(3, { bootstrapRetry: recorded(), nextMemberOrdinal: 6 })),
        [3, 4, 5].map(i => {
          const m = member(i, { bootstrap: true });
          m.spec.initialCluster = 'demo-3=a,demo-4=b,demo-5=c';
          return m;
        }),
        { ready: [], now: new Date('2026-11-22T11:00:00Z') },
      ),
    action: { kind: 'none' },
    progressing: [
      'BootstrapRetrying',
      /^bootstrap attempt 2 \(demo-3, demo-4, demo-5\).*then attempt 3 starts/,
    ],
    status: s => assert.equal(s.bootstrapRetry?.attempt, 3),
  },
];

describe('bootstrap retry (planCluster)', () => {
  for (const row of rows) {
    it(row.name, () => {
      const plan = planCluster(row.world());
      assert.deepEqual(plan.action, row.action);
      const c = findCondition(plan.status.conditions, 'Progressing');
      assert.equal(c?.reason, row.progressing[0]);
      assert.match(c?.message ?? '', row.progressing[1]);
      if (row.warning) {
        const warning = plan.events.find(e => e.type === 'Warning');
        assert.match(warning?.message ?? '', row.warning);
      }
      row.status?.(plan.status);
    });
  }
});

describe('bootstrap retry (finalize-member)', () => {
  const retrying = cluster({}, locked(3, { bootstrapRetry: recorded(NAMES) }));
  const gone = initial(0, { deleting: true });
  gone.metadata.finalizers = ['etcdfn.io/member-cleanup'];

  it('a member of the failed attempt goes without an etcd removal, and etcd is not asked', () => {
    const s = { member: gone, cluster: retrying, others: [initial(1), initial(2)], tried: [] };
    assert.equal(needsEtcd(s), false);
    const action = planFinalize(s);
    assert.equal(action.kind, 'remove-finalizer');
    assert.match(action.reason, /never formed; bootstrap attempt 2 starts over without demo-0/);
  });

  it('once a cluster ID is latched, the record does not excuse the removal', () => {
    const formed = cluster({}, locked(3, { bootstrapRetry: recorded(NAMES), clusterID: 'c0ffee0000000001' }));
    const s = { member: gone, cluster: formed, others: [initial(1), initial(2)], tried: [] };
    assert.equal(needsEtcd(s), true);
    assert.equal(planFinalize(s).kind, 'retry');
  });
});
