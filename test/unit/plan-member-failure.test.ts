// Why a member's etcd keeps exiting (shared/plan/member/failure.ts) and what reconcile-member does
// about it: data evidence → recorded, Pod stopped, never restarted under its ID (reconcile-cluster
// replaces it); a crash loop for another reason → reported once, never replaced. Also the
// empty-data guard of the Pod's flags and the sticky status.hasData that turns it on.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { EtcdMember, EtcdMemberStatus } from '../../shared/api/etcd-member.ts';
import { etcdFlags, hasDataGuard } from '../../shared/builders/etcd-flags.ts';
import { etcdError, startFailure, type StartFailure } from '../../shared/plan/member/failure.ts';
import { planMember } from '../../shared/plan/member/plan.ts';
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
} from '../support/member-world.ts';

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

/**
 * The member as it is after seeing the exits before the one `status` shows: restartCount − 1 of
 * them (at most 4), with the same exit code, each one run (`ran`, default 1 s) plus a 10 s back-off
 * apart — the record reconcile-member keeps (shared/plan/member/restarts.ts).
 */
function seenBefore(m: EtcdMember, status: V1ContainerStatus, ran = 1): EtcdMember {
  const last = status.lastState?.terminated ?? status.state?.terminated;
  const earlier = Math.min(status.restartCount - 1, 4);
  if (!last?.finishedAt || earlier < 1) return m;
  const end = new Date(last.finishedAt).getTime();
  const exits = Array.from({ length: earlier }, (_, i) => ({
    at: new Date(end - (earlier - i) * (ran + 10) * 1000).toISOString(),
    exitCode: last.exitCode,
  }));
  return { ...m, status: { ...m.status, restarts: { podUID: 'pod-uid', restartCount: earlier, exits } } };
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
    /** seconds each earlier run lasted (seenBefore) */
    ran?: number;
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
      // A static bootstrap's initial member starts `new` until it is seen running (etcd-flags.ts):
      // started again on an empty directory after the cluster saw it run, etcd itself refuses.
      name: 'initial member started new, etcd says it was bootstrapped already: data lost, with no record that it ran',
      member: member({}, { memberID: ID, isVoter: true }),
      flags: [
        `--initial-cluster=demo-0=http://demo-0.demo.prod.svc:2380,demo-1=${PEER}`,
        '--initial-cluster-state=new',
      ],
      status: container(1, { message: fatal('member 8e9e05c52164694d has already been bootstrapped') }),
      want: 'data',
      reason: 'DataDirEmpty',
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
      name: 'many restarts but each run lasted over 10 minutes: not a loop',
      status: container(7, { message: 'killed', code: 137, ran: 900 }),
      ran: 900,
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
      const m = seenBefore(row.member ?? ran(), row.status, row.ran);
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
    const looping = container(5, {
      message: fatal('error parsing CompactionRetention: time: invalid duration'),
    });
    const m = seenBefore(ran(), looping);
    const p = failingPod(m, GUARD, looping);
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

describe('startFailure: the exact words, signature by signature', () => {
  const says = {
    DataDirEmpty:
      'its data directory is empty (wiped or a new volume), so etcd refused to start under the member ID',
    RaftLogLost:
      'its raft log is behind what the cluster committed with it (data directory wiped or rolled back)',
    MemberRemoved: 'etcd removed its member ID from the cluster',
    DataCorrupt: 'etcd found its data corrupt',
  };
  const rows: { log: string; reason: keyof typeof says; etcd: string }[] = [
    {
      log: fatal('error validating peerURLs {ClusterID:cd67 Members:[]}: member count is unequal'),
      reason: 'DataDirEmpty',
      etcd: 'discovery failed: error validating peerURLs {ClusterID:cd67 Members:[]}: member count is unequal',
    },
    {
      log: 'panic: tocommit(1234) is out of range [lastIndex(56)]. Was the raft log corrupted, truncated, or lost?',
      reason: 'RaftLogLost',
      etcd: 'tocommit(1234) is out of range [lastIndex(56)]. Was the raft log corrupted, truncated, or lost?',
    },
    {
      log: fatal('member 8e9e05c52164694d has already been removed'),
      reason: 'MemberRemoved',
      etcd: 'discovery failed: member 8e9e05c52164694d has already been removed',
    },
    {
      log: fatal('checkInitialHashKV failed'),
      reason: 'DataCorrupt',
      etcd: 'discovery failed: checkInitialHashKV failed',
    },
    {
      log: fatal('database file (/var/lib/etcd/member/snap/db index 12) does not match, corrupt'),
      reason: 'DataCorrupt',
      etcd: 'discovery failed: database file (/var/lib/etcd/member/snap/db index 12) does not match, corrupt',
    },
    { log: fatal('invalid database'), reason: 'DataCorrupt', etcd: 'discovery failed: invalid database' },
    {
      log: fatal('walpb: CRC Mismatch'),
      reason: 'DataCorrupt',
      etcd: 'discovery failed: walpb: CRC Mismatch',
    },
    {
      log: fatal('failed to recover v3 snapshot'),
      reason: 'DataCorrupt',
      etcd: 'discovery failed: failed to recover v3 snapshot',
    },
    {
      log: fatal('failed to find database'),
      reason: 'DataCorrupt',
      etcd: 'discovery failed: failed to find database',
    },
  ];
  for (const row of rows) {
    it(`${row.reason}: ${row.etcd}`, () => {
      const m = ran();
      const got = startFailure(m, failingPod(m, FULL, container(1, { message: row.log, code: 2 })));
      assert.deepEqual(got, {
        kind: 'data',
        reason: row.reason,
        message: `etcd in Pod demo-1 exited (code 2): ${says[row.reason]}; member ID 8e9e05c52164694d cannot be restarted (etcd: ${row.etcd})`,
      });
    });
  }

  it('a member with no status yet: the message names no ID', () => {
    const m = member();
    const got = startFailure(m, failingPod(m, FULL, container(1, { message: fatal('invalid database') })));
    assert.equal(
      got?.message,
      'etcd in Pod demo-1 exited (code 1): etcd found its data corrupt; member ID cannot be restarted (etcd: discovery failed: invalid database)',
    );
  });

  it('the exit the container is in now counts, not only the last one', () => {
    const m = ran();
    const status: V1ContainerStatus = {
      ...container(0),
      state: { terminated: { exitCode: 3, message: fatal('invalid database') } },
    };
    const got = startFailure(m, failingPod(m, FULL, status));
    assert.equal(got?.kind === 'data' && got.reason, 'DataCorrupt');
    assert.match(got?.message ?? '', /exited \(code 3\)/);
  });

  it('words that are not about data are not taken as such', () => {
    const m = ran();
    for (const log of [
      fatal('tocommit(a) is out of range [lastIndex(b)]'),
      fatal('member xyz has already been removed'),
      fatal('failed to recover v2 snapshot'),
      'database file corrupt',
    ]) {
      assert.equal(startFailure(m, failingPod(m, FULL, container(1, { message: log }))), undefined, log);
    }
  });

  it('a container status with no state: its last exit still counts', () => {
    const m = ran();
    const { state: _state, ...status } = container(1, { message: fatal('invalid database') });
    assert.equal(startFailure(m, failingPod(m, FULL, status))?.kind, 'data');
    const { state: _again, ...looping } = container(6, { message: fatal('bad option') });
    const seen = seenBefore(m, looping);
    assert.equal(startFailure(seen, failingPod(seen, FULL, looping))?.kind, 'crash-loop');
  });

  it('no Pod, no Pod status, or no etcd container status: nothing to say', () => {
    const m = ran();
    assert.equal(startFailure(m, undefined), undefined);
    const { status: _status, ...bare } = failingPod(
      m,
      FULL,
      container(6, { message: fatal('invalid database') }),
    );
    assert.equal(startFailure(m, bare), undefined);
    const p = failingPod(m, FULL, {
      ...container(6, { message: fatal('invalid database') }),
      name: 'sidecar',
    });
    assert.equal(startFailure(m, p), undefined);
  });
});

describe('startFailure: an empty data directory only counts for a member that has run', () => {
  const EMPTY = fatal('could not retrieve cluster information from the given URLs');
  // A member that never recorded hasData: only a Pod started with the guard says it has run.
  const rows: { name: string; flags: string[]; data: boolean }[] = [
    { name: 'guarded: only itself in --initial-cluster, state existing', flags: GUARD, data: true },
    {
      name: 'itself first, but others too: the full initial cluster',
      flags: [
        `--initial-cluster=demo-1=${PEER},demo-0=http://demo-0.demo.prod.svc:2380`,
        '--initial-cluster-state=existing',
      ],
      data: false,
    },
    {
      name: 'only another member in --initial-cluster',
      flags: [
        '--initial-cluster=demo-0=http://demo-0.demo.prod.svc:2380',
        '--initial-cluster-state=existing',
      ],
      data: false,
    },
    {
      name: 'a name that merely starts like its own',
      flags: [`--initial-cluster=demo-10=${PEER}`, '--initial-cluster-state=existing'],
      data: false,
    },
    {
      name: 'only itself but state new (a seed founding the cluster)',
      flags: [`--initial-cluster=demo-1=${PEER}`, '--initial-cluster-state=new'],
      data: false,
    },
    { name: 'only itself, no state flag', flags: [`--initial-cluster=demo-1=${PEER}`], data: false },
    { name: 'no --initial-cluster at all', flags: ['--initial-cluster-state=existing'], data: false },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const m = member({}, { memberID: ID });
      const got = startFailure(m, failingPod(m, row.flags, container(1, { message: EMPTY })));
      assert.equal(got?.kind, row.data ? 'data' : undefined, JSON.stringify(got));
    });
  }

  it('the etcd container’s flags count, not the first container’s', () => {
    const m = member({}, { memberID: ID });
    const p = failingPod(m, GUARD, container(1, { message: EMPTY }));
    const sidecar = { name: 'sidecar', image: 'busybox:1.36.1', command: ['sh'] };
    const withSidecar = { ...p, spec: { containers: [sidecar, ...(p.spec?.containers ?? [])] } };
    assert.equal(startFailure(m, withSidecar)?.kind, 'data');
  });

  it('a Pod with no spec is not guarded', () => {
    const m = member({}, { memberID: ID });
    const { spec: _spec, ...p } = failingPod(m, GUARD, container(1, { message: EMPTY }));
    assert.equal(startFailure(m, p), undefined);
  });

  it('a Pod without a name is never taken as guarded', () => {
    const m = member({}, { memberID: ID });
    const p = failingPod(
      m,
      ['--initial-cluster==' + PEER, '--initial-cluster-state=existing'],
      container(1, { message: EMPTY }),
    );
    delete p.metadata?.name;
    assert.equal(startFailure(m, p), undefined);
  });
});

describe('startFailure: when exits become a crash loop (5 with the same code within 10 minutes)', () => {
  const BAD = fatal('error parsing CompactionRetention: invalid duration');
  /** Exits `secondsApart` apart, the last one the Pod shows; codes oldest first. */
  const rows: { name: string; codes: number[]; secondsApart: number; loop: boolean }[] = [
    { name: '5 exits, code 1, 10 s apart', codes: [1, 1, 1, 1, 1], secondsApart: 10, loop: true },
    { name: '5 exits spanning exactly 10 minutes', codes: [1, 1, 1, 1, 1], secondsApart: 150, loop: true },
    { name: '5 exits spanning 10 minutes and 4 s', codes: [1, 1, 1, 1, 1], secondsApart: 151, loop: false },
    { name: '4 exits seen', codes: [1, 1, 1, 1], secondsApart: 10, loop: false },
    { name: 'the codes differ (not the same exit)', codes: [1, 1, 2, 1, 1], secondsApart: 10, loop: false },
    {
      name: 'an older different exit falls out of the last 5',
      codes: [2, 1, 1, 1, 1, 1],
      secondsApart: 10,
      loop: true,
    },
    { name: 'exited with code 0 each time', codes: [0, 0, 0, 0, 0], secondsApart: 10, loop: false },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const finished = new Date(NOW.getTime() - 1000);
      const last = row.codes.at(-1)!;
      const exits = row.codes.slice(0, -1).map((exitCode, i, all) => ({
        at: new Date(finished.getTime() - (all.length - i) * row.secondsApart * 1000).toISOString(),
        exitCode,
      }));
      const m = ran({ restarts: { podUID: 'pod-uid', restartCount: exits.length, exits } });
      const status = container(row.codes.length, { message: BAD, code: last });
      const got = startFailure(m, failingPod(m, GUARD, status));
      assert.equal(got?.kind, row.loop ? 'crash-loop' : undefined, JSON.stringify(got));
    });
  }

  it('exits seen in an earlier Pod do not count (the record starts again)', () => {
    const status = container(5, { message: BAD });
    const m = seenBefore(ran(), status);
    const other = { ...m, status: { ...m.status, restarts: { ...m.status!.restarts!, podUID: 'old-pod' } } };
    assert.equal(startFailure(other, failingPod(other, GUARD, status)), undefined);
  });

  it('an exit that left no log says so', () => {
    const status: V1ContainerStatus = {
      ...container(5),
      lastState: { terminated: { exitCode: 1, startedAt: NOW, finishedAt: NOW } },
    };
    const m = seenBefore(ran(), status);
    assert.match(
      startFailure(m, failingPod(m, GUARD, status))?.message ?? '',
      /^etcd in Pod demo-1 keeps exiting \(5 exits with code 1 within 1 min, 5 restarts\): no log output; not a data problem/,
    );
  });

  it("says the restarts, the last exit code and etcd's words", () => {
    const status = container(7, { message: BAD, code: 78 });
    const m = seenBefore(ran(), status);
    const got = startFailure(m, failingPod(m, GUARD, status));
    assert.deepEqual(got, {
      kind: 'crash-loop',
      message:
        "etcd in Pod demo-1 keeps exiting (5 exits with code 78 within 1 min, 7 restarts): discovery failed: error parsing CompactionRetention: invalid duration; not a data problem, so the member is not replaced while a new one would fail the same way: fix the cause in the EtcdCluster's spec (an option etcd refuses? spec.options, spec.resources), and the member is then replaced by one with the new settings",
    });
  });
});

describe("etcdError: etcd's own words from its last log lines", () => {
  const long = 'x'.repeat(400);
  const rows: [string, string, string][] = [
    ['the last panic line', 'starting\npanic: runtime error\n\ngoroutine 1', 'runtime error'],
    ['a fatal JSON line: msg and error', '{"level":"fatal","msg":"m","error":"e"}', 'm: e'],
    ['a fatal JSON line: error alone', '{"level":"fatal","error":"e"}', 'e'],
    ['a fatal JSON line: msg alone', '{"level":"fatal","msg":"m"}', 'm'],
    ['a panic JSON line', '{"level":"panic","msg":"p"}\n', 'p'],
    ['a fatal JSON line with neither: the last line', '{"level":"fatal"}', '{"level":"fatal"}'],
    [
      'a warn JSON line is not the error',
      '{"level":"fatal","msg":"first"}\n{"level":"warn","msg":"w"}',
      'first',
    ],
    ['a cut JSON line is skipped', '{"level":"fatal","msg":"whole"}\n{"level":"fatal","ms', 'whole'],
    [
      'a flag parser complaint',
      'invalid value "x" for flag -quota\nUsage of etcd:\n  --help',
      'invalid value "x" for flag -quota',
    ],
    [
      'an invalid argument',
      'invalid argument "y" for "--snapshot-count"\nusage',
      'invalid argument "y" for "--snapshot-count"',
    ],
    [
      'an error verifying flags',
      "error verifying flags, --foo is not a flag. See 'etcd --help'.\nmore",
      "error verifying flags, --foo is not a flag. See 'etcd --help'.",
    ],
    ['else the last line, trimmed', '  first  \n second \n  last words  \n\n', 'last words'],
    ['cut at 300 characters', long, `${'x'.repeat(300)}…`],
    ['300 characters are kept whole', 'y'.repeat(300), 'y'.repeat(300)],
  ];
  for (const [name, text, want] of rows) {
    it(name, () => assert.equal(etcdError(text), want));
  }
});
