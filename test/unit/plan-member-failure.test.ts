// Why a member's etcd keeps exiting (shared/plan/member-failure.ts) and what reconcile-member does
// about it: data evidence → recorded, Pod stopped, never restarted under its ID (reconcile-cluster
// replaces it); a crash loop for another reason → reported once, never replaced. Also the
// empty-data guard of the Pod's flags and the sticky status.hasData that turns it on.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { EtcdMember, EtcdMemberStatus } from '../../shared/api/etcd-member.ts';
import { etcdFlags, hasDataGuard } from '../../shared/builders/etcd-flags.ts';
import { etcdError, startFailure, type StartFailure } from '../../shared/plan/member-failure.ts';
import { planMember } from '../../shared/plan/member-plan.ts';
import {
  cluster,
  CLUSTER_ID,
  ID,
  inEtcd,
  member,
  NOW,
  PEER,
  pod,
  pvc,
  ready as readyOf,
} from './member-world.ts';

const GUARD = ['--initial-cluster=demo-1=' + PEER, '--initial-cluster-state=existing'];
const FULL = [
  `--initial-cluster=demo-0=http://demo-0.demo.prod.svc:2380,demo-1=${PEER}`,
  '--initial-cluster-state=existing',
];

const fatal = (error: string): string =>
  `{"level":"info","msg":"starting"}\n{"level":"fatal","ts":"x","caller":"etcdmain/etcd.go:204","msg":"discovery failed","error":"${error}"}`;
const PANIC =
  '{"level":"panic","msg":"tocommit(10) is out of range [lastIndex(0)]. Was the raft log corrupted, truncated, or lost?"}\npanic: tocommit(10) is out of range [lastIndex(0)]. Was the raft log corrupted, truncated, or lost?\n\ngoroutine 144 [running]:';

interface Exit {
  message: string;
  code?: number;
  /** Seconds the last run lasted. */
  ran?: number;
}

function container(restarts: number, last?: Exit, running = false): V1ContainerStatus {
  const finished = new Date(NOW.getTime() - 1000);
  return {
    name: 'etcd',
    image: 'quay.io/coreos/etcd:v3.5.16',
    imageID: '',
    ready: false,
    restartCount: restarts,
    state: running ? { running: { startedAt: NOW } } : { waiting: { reason: 'CrashLoopBackOff' } },
    ...(last && {
      lastState: {
        terminated: {
          exitCode: last.code ?? 1,
          message: last.message,
          startedAt: new Date(finished.getTime() - (last.ran ?? 1) * 1000),
          finishedAt: finished,
        },
      },
    }),
  };
}

function failingPod(m: EtcdMember, flags: string[], status: V1ContainerStatus): V1Pod {
  const p = pod(m, {
    role: 'voter',
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'False' }],
      containerStatuses: [status],
    },
  });
  return { ...p, spec: { containers: [{ name: 'etcd', command: ['etcd', '--name=demo-1', ...flags] }] } };
}

const ran = (s: EtcdMemberStatus = {}): EtcdMember =>
  member(
    {},
    { memberID: ID, isVoter: true, role: 'voter', hasData: true, podUID: 'pod-uid', pvcUID: 'pvc-uid', ...s },
  );

describe('startFailure: what the Pod says about why etcd stopped', () => {
  const rows: {
    name: string;
    member?: EtcdMember;
    flags?: string[];
    status: V1ContainerStatus;
    want: StartFailure['kind'] | undefined;
    reason?: string;
  }[] = [
    {
      name: 'guarded Pod, etcd found no peer to ask: data directory empty',
      status: container(1, {
        message: fatal(
          'cannot fetch cluster info from peer urls: could not retrieve cluster information from the given URLs',
        ),
      }),
      want: 'data',
      reason: 'DataDirEmpty',
    },
    {
      // A member that never ran: the same words mean its peers did not answer its join: not data.
      name: 'new member, peers not answering its join: nothing yet',
      member: member({}, { memberID: ID }),
      flags: FULL,
      status: container(1, {
        message: fatal(
          'cannot fetch cluster info from peer urls: could not retrieve cluster information from the given URLs',
        ),
      }),
      want: undefined,
    },
    {
      // Seen on the sandbox: a member that joined a 2-member cluster, wiped once the cluster had 5.
      name: 'member that has run, first (unguarded) Pod, wiped: its initial cluster no longer matches',
      flags: FULL,
      status: container(1, {
        message: fatal(
          'error validating peerURLs {ClusterID:cd67d6b39d450b94 Members:[]}: member count is unequal',
        ),
      }),
      want: 'data',
      reason: 'DataDirEmpty',
    },
    {
      name: 'new member whose initial cluster no longer matches: not data',
      member: member({}, { memberID: ID }),
      flags: FULL,
      status: container(5, { message: fatal('error validating peerURLs {}: member count is unequal') }),
      want: 'crash-loop',
    },
    {
      name: 'raft log behind what the cluster committed (wiped, unguarded first Pod)',
      flags: FULL,
      status: container(1, { message: PANIC, code: 2 }),
      want: 'data',
      reason: 'RaftLogLost',
    },
    {
      name: 'member ID removed from the cluster',
      status: container(2, { message: fatal('the member has been permanently removed from the cluster') }),
      want: 'data',
      reason: 'MemberRemoved',
    },
    {
      name: 'corrupt data found by the initial corruption check',
      status: container(1, { message: fatal('found data inconsistency with peers') }),
      want: 'data',
      reason: 'DataCorrupt',
    },
    {
      name: 'a bad option, 5 restarts: crash loop, not data',
      status: container(5, {
        message: fatal('error parsing CompactionRetention: time: invalid duration \\"3000000h\\"'),
      }),
      want: 'crash-loop',
    },
    {
      name: 'a bad option, 4 restarts: not yet a loop',
      status: container(4, { message: fatal('error parsing CompactionRetention: time: invalid duration') }),
      want: undefined,
    },
    {
      name: 'many restarts but the last run lasted over 10 minutes: not a loop',
      status: container(7, { message: 'killed', code: 137, ran: 900 }),
      want: undefined,
    },
    {
      name: 'running again after 6 restarts: not reported while it runs',
      status: container(6, { message: fatal('x') }, true),
      want: undefined,
    },
    {
      name: 'exit code 0 says nothing',
      status: container(6, {
        message: fatal('could not retrieve cluster information from the given URLs'),
        code: 0,
      }),
      want: undefined,
    },
    { name: 'never exited', status: container(0, undefined, true), want: undefined },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const m = row.member ?? ran();
      const got = startFailure(m, failingPod(m, row.flags ?? GUARD, row.status));
      assert.equal(got?.kind, row.want, JSON.stringify(got));
      if (row.reason) assert.equal(got?.kind === 'data' && got.reason, row.reason);
      if (got) assert.match(got.message, /Pod demo-1/);
    });
  }

  it("etcd's error is quoted in its own words", () => {
    assert.equal(etcdError(fatal('boom')), 'discovery failed: boom');
    assert.match(etcdError(PANIC), /^tocommit\(10\) is out of range/);
    assert.equal(
      etcdError('flag provided but not defined: -bogus\nUsage:'),
      'flag provided but not defined: -bogus',
    );
    assert.equal(etcdError(''), 'no log output');
  });
});

describe('planMember: data evidence from etcd itself', () => {
  it('a guarded Pod refusing an empty data directory: evidence recorded, Pod stopped, no new Pod', () => {
    const m = ran();
    const p = failingPod(
      m,
      GUARD,
      container(1, { message: fatal('could not retrieve cluster information from the given URLs') }),
    );
    const plan = planMember({
      now: NOW,
      member: m,
      cluster: cluster(),
      pod: p,
      pvc: { ...pvc(m), metadata: { ...pvc(m).metadata, uid: 'pvc-uid' } },
    });
    assert.equal(plan.action.kind, 'delete-pod');
    assert.equal(plan.status.dataLoss?.reason, 'DataDirEmpty');
    assert.equal(readyOf(plan)?.reason, 'DataLost');
    assert.match(readyOf(plan)?.message ?? '', /not restarted under its member ID 8e9e05c52164694d/);
    assert.deepEqual(
      plan.events.map(e => e.reason),
      ['MemberDataLost'],
    );
    assert.equal(plan.statusChanged, true);
  });

  it('once recorded, the stopped member waits for its replacement and creates nothing', () => {
    const m = ran({ dataLoss: { reason: 'RaftLogLost', message: 'x', detectedAt: '2026-11-22T09:00:00Z' } });
    const plan = planMember({
      now: NOW,
      member: m,
      cluster: cluster(),
      pvc: { ...pvc(m), metadata: { ...pvc(m).metadata, uid: 'pvc-uid' } },
    });
    assert.equal(plan.action.kind, 'wait');
    assert.deepEqual(plan.events, []);
  });

  it('a crash loop for a bad option: reported once (Warning Event), the Pod kept, the member not replaced', () => {
    const m = ran();
    const p = failingPod(
      m,
      GUARD,
      container(5, { message: fatal('error parsing CompactionRetention: time: invalid duration') }),
    );
    const world = {
      now: NOW,
      member: m,
      cluster: cluster(),
      pod: p,
      pvc: { ...pvc(m), metadata: { ...pvc(m).metadata, uid: 'pvc-uid' } },
    };
    const first = planMember(world);
    assert.equal(first.action.kind, 'none');
    assert.equal(first.status.dataLoss, undefined);
    assert.equal(readyOf(first)?.reason, 'CrashLooping');
    assert.match(readyOf(first)?.message ?? '', /error parsing CompactionRetention/);
    assert.deepEqual(
      first.events.map(e => e.reason),
      ['MemberCrashLooping'],
    );
    const again = planMember({ ...world, member: { ...m, status: first.status } });
    assert.deepEqual(again.events, [], 'reported once, not at every restart');
    assert.equal(again.action.kind, 'none');
  });
});

describe('the empty-data guard', () => {
  it('status.hasData is set once etcd lists the member as started, and stays', () => {
    const m = member({}, { memberID: ID, isVoter: true, role: 'voter', podUID: 'pod-uid' });
    const plan = planMember({
      now: NOW,
      member: m,
      cluster: cluster(),
      pod: pod(m, { role: 'voter' }),
      pvc: pvc(m),
      etcd: { members: [inEtcd()], clusterId: CLUSTER_ID },
    });
    assert.equal(plan.status.hasData, true);
    const notStarted = planMember({
      now: NOW,
      member: m,
      cluster: cluster(),
      pod: pod(m, { role: 'voter', ready: false }),
      pvc: pvc(m),
      etcd: { members: [inEtcd({ name: '', clientURLs: [], started: false })], clusterId: CLUSTER_ID },
    });
    assert.equal(notStarted.status.hasData, undefined);
  });

  const flags = (m: EtcdMember): Map<string, string> =>
    new Map(
      etcdFlags(m, { namespace: 'prod', clusterFormed: true }).map(f => [
        f.split('=')[0] ?? '',
        f.slice(f.indexOf('=') + 1),
      ]),
    );

  const rows: { name: string; status?: EtcdMemberStatus; bootstrap?: boolean; guarded: boolean }[] = [
    {
      name: 'a member that has run: only itself, existing',
      status: { memberID: ID, hasData: true },
      guarded: true,
    },
    {
      name: 'a seed that has run: only itself, existing (never a new cluster)',
      status: { memberID: ID, hasData: true },
      bootstrap: true,
      guarded: true,
    },
    {
      name: 'a learner about to join (ID known, never ran): the full initial cluster',
      status: { memberID: ID },
      guarded: false,
    },
    { name: 'no ID recorded: the full initial cluster', status: { hasData: true }, guarded: false },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const m = member({ bootstrap: row.bootstrap ?? false }, row.status);
      assert.equal(hasDataGuard(m), row.guarded);
      const f = flags(m);
      if (row.guarded) {
        assert.equal(f.get('--initial-cluster'), `demo-1=${PEER}`);
        assert.equal(f.get('--initial-cluster-state'), 'existing');
      } else {
        assert.equal(f.get('--initial-cluster'), m.spec.initialCluster);
      }
    });
  }
});
