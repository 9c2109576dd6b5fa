// reconcile-cluster's act step (shared/reconcile/cluster-act.ts) over plain fakes: an in-memory API
// server (test/support/store-kube.ts) and a scripted etcd. What a user cares about: which EtcdMember
// and Pod are written with what, which etcd calls are made in what order and to which endpoints,
// what the step answers (done, or a retry naming the cause, with 503), and that a failure part way
// leaves the claimed operation in status so the next event carries it on. Real etcd and a real API
// server do the same steps in test/integration/cluster-act-etcd.test.ts and reconcile-*.test.ts.
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import type { AddMemberOperation } from '../../shared/api/cluster-operation.ts';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import type { EtcdMember as Membership } from '../../shared/etcd/members.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import type { ClusterAction } from '../../shared/plan/cluster/step.ts';
import type { ClusterState } from '../../shared/plan/cluster/types.ts';
import type { RestoreResolution } from '../../shared/plan/restore/types.ts';
import { act } from '../../shared/reconcile/cluster-act.ts';
import {
  cluster as clusterOf,
  locked,
  member,
  membership,
  state as stateOf,
} from '../support/cluster-world.ts';
import { StoreKube, storeContext, withCrashArmed } from '../support/store-kube.ts';

type Cluster = EtcdCluster & KubeObject;
const NS = 'prod';
const peer = (n: number) => `http://demo-${n}.demo.prod.svc:2380`;
const client = (n: number) => `http://demo-${n}.demo.prod.svc:2379`;
const fail = (message: string) => ({ kind: 'unavailable' as const, message });
const retry = (reason: string) => ({ ok: false, outcome: { result: 'retry', reason, status: 503 } });

const op = (o: Partial<AddMemberOperation> = {}): AddMemberOperation => ({
  type: 'add-member',
  member: 'demo-3',
  bootstrap: false,
  startedAt: '2026-11-29T11:59:00Z',
  ...o,
});

/** Cluster demo with members demo-0..2 (voters, ready; demo-1 not ready) and `operation` claimed. */
function world(operation?: AddMemberOperation, restore?: RestoreResolution) {
  const cluster = {
    ...clusterOf({}, locked(3, operation ? { operation } : {})),
    metadata: { ...clusterOf().metadata, resourceVersion: '10' },
  } as Cluster;
  const members = [member(0), member(1), member(2, { voter: false })].map(m => ({
    ...m,
    metadata: {
      ...m.metadata,
      uid: `${m.metadata.name}-uid`,
      ownerReferences: [
        {
          apiVersion: 'etcdfn.io/v1alpha1',
          kind: 'EtcdCluster',
          name: 'demo',
          uid: 'uid-1',
          controller: true,
        },
      ],
    },
  })) as EtcdMember[];
  const state: ClusterState = stateOf(cluster, members, { ready: [0, 2] });
  if (restore) state.restore = restore;
  const kube = new StoreKube([cluster, ...(members as KubeObject[])]);
  return { cluster, state, kube };
}

const three: Membership[] = [membership(0), membership(1), membership(2)];
const withLearner = (n = 3): Membership[] => [
  ...three,
  { ...membership(n, { learner: true, started: false }) },
];

/** An etcd that answers every call; `o` replaces some. Calls are recorded as `name endpoints args`. */
function fakeEtcd(o: Partial<Record<keyof EtcdAdapter, (...a: never[]) => unknown>> = {}) {
  const calls: string[] = [];
  const answer =
    (name: keyof EtcdAdapter, dflt: (...a: never[]) => unknown) =>
    (...args: unknown[]) => {
      calls.push(`${name} ${args.map(a => (Array.isArray(a) ? a.join(',') : String(a))).join(' ')}`);
      return Promise.resolve((o[name] ?? dflt)(...(args as never[])));
    };
  const etcd = {
    listMembers: answer('listMembers', () => ({
      kind: 'ok',
      members: three,
      clusterId: 'c1',
      endpoint: client(0),
    })),
    addLearner: answer('addLearner', () => ({
      kind: 'ok',
      member: withLearner()[3],
      members: withLearner(),
    })),
    moveLeader: answer('moveLeader', () => ({ kind: 'ok', leaderId: 'b', previousLeaderId: 'a' })),
    enableDowngrade: answer('enableDowngrade', () => ({ kind: 'ok', alreadyEnabled: false })),
    remove: answer('remove', () => ({ kind: 'ok', members: three })),
    promote: answer('promote', () => ({ kind: 'ok', member: undefined, members: three })),
    compact: answer('compact', () => fail('compact refused')),
  } as unknown as EtcdAdapter;
  return { etcd, calls };
}

const memberIn = (kube: StoreKube, name: string) => kube.stored<EtcdMember>('EtcdMember', NS, name);
const clusterIn = (kube: StoreKube) => kube.stored<Cluster>('EtcdCluster', NS, 'demo');

async function run(
  action: ClusterAction,
  w = world(),
  etcdAnswers: Parameters<typeof fakeEtcd>[0] = {},
  settings: Parameters<typeof storeContext>[2] = {},
) {
  const { etcd, calls } = fakeEtcd(etcdAnswers);
  const result = await act(storeContext(w.kube, etcd, settings), w.state, action);
  return { result, calls, kube: w.kube, w };
}

describe('act: steps that only answer', () => {
  it('none and wait do nothing and say so; recheck answers a retry with its reason', async () => {
    const none = await run({ kind: 'none' });
    assert.deepEqual(none.result, { ok: true, summary: 'nothing to do' });
    const wait = await run({ kind: 'wait', reason: 'waiting for demo-1 to be ready' });
    assert.deepEqual(wait.result, { ok: true, summary: 'waiting for demo-1 to be ready' });
    const recheck = await run({ kind: 'recheck', reason: 'the leader is not known yet' });
    assert.deepEqual(recheck.result, retry('the leader is not known yet'));
    for (const r of [none, wait, recheck]) {
      assert.deepEqual(r.kube.calls, []);
      assert.deepEqual(r.calls, []);
    }
  });

  it('an ensure step without its planned changes is a retry naming the step, and writes nothing', async () => {
    for (const kind of ['ensure-services', 'ensure-pdb', 'ensure-network-policy'] as const) {
      const { result, kube } = await run({ kind });
      assert.deepEqual(result, retry(`${kind} without the changes it planned`));
      assert.deepEqual(kube.calls, []);
    }
  });
});

describe('act: ensure steps apply the planned changes', () => {
  const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'demo', namespace: NS } } as KubeObject;
  const pdb = {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'demo', namespace: NS },
  } as KubeObject;
  const np = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'demo', namespace: NS },
  } as KubeObject;
  for (const [kind, object, point] of [
    ['ensure-services', svc, 'cluster:service-ensured'],
    ['ensure-pdb', pdb, 'cluster:pdb-ensured'],
    ['ensure-network-policy', np, undefined],
  ] as const) {
    it(`${kind} creates what was planned${point ? ` and may crash at ${point} after it` : ''}`, async () => {
      const w = world();
      const { etcd } = fakeEtcd();
      const owned = { changes: [{ kind: 'create' as const, object }], summary: `${kind} done` };
      const result = await act(storeContext(w.kube, etcd), w.state, { kind }, owned);
      assert.deepEqual(result, { ok: true, summary: `${kind} done` });
      assert.deepEqual(w.kube.lines, [`create ${object.kind} demo`]);
      for (const p of ['cluster:service-ensured', 'cluster:pdb-ensured']) {
        const again = world();
        const crashed = await withCrashArmed(
          p,
          () => act(storeContext(again.kube, etcd), again.state, { kind }, owned),
          () => again.kube.lines,
        );
        if (p === point) assert.deepEqual(crashed, { killed: true, at: [`create ${object.kind} demo`] });
        else assert.equal(crashed.killed, false, `${kind} passes no ${p}`);
      }
    });
  }
});

describe('act: adding a learner (claim and resume)', () => {
  it('creates the EtcdMember, adds it to etcd as a learner via the ready voters first, wires it, clears the operation', async () => {
    const w = world(op());
    const { result, calls, kube } = await run({ kind: 'claim', operation: op() }, w);
    assert.deepEqual(result, { ok: true, summary: 'added learner demo-3' });
    // demo-1 is not ready: not dialled. demo-2 is ready but not a voter: after the voter.
    assert.deepEqual(calls, [
      `listMembers ${client(0)},${client(2)}`,
      `addLearner ${client(0)},${client(2)} ${peer(3)}`,
    ]);
    assert.deepEqual(kube.lines, [
      'create EtcdMember demo-3',
      'mergePatch EtcdMember demo-3',
      'get EtcdCluster demo',
      'replaceStatus EtcdCluster demo',
      'get EtcdMember demo-3',
    ]);
    const created = memberIn(kube, 'demo-3');
    assert.equal(created?.spec.bootstrap, false);
    assert.equal(created?.spec.clusterName, 'demo');
    assert.equal(
      created?.spec.initialCluster,
      ['demo-0', 'demo-1', 'demo-2', 'demo-3'].map((n, i) => `${n}=${peer(i)}`).join(','),
    );
    assert.equal(kube.calls[1]?.apiVersion, 'etcdfn.io/v1alpha1');
    assert.equal(kube.calls[1]?.namespace, NS);
    assert.equal(clusterIn(kube)?.status?.operation, undefined);
    assert.equal(clusterIn(kube)?.status?.clusterToken, 'prod-demo-uid-1', 'the rest of the status is kept');
  });

  it('a seed member is created with itself as its initial cluster and never touches etcd', async () => {
    const seed = op({ member: 'demo-0', bootstrap: true });
    const w = world(seed);
    w.kube.objects.delete('EtcdMember/prod/demo-0');
    const { result, calls, kube } = await run({ kind: 'claim', operation: seed }, w);
    assert.deepEqual(result, { ok: true, summary: 'created seed member demo-0' });
    assert.deepEqual(calls, []);
    assert.equal(memberIn(kube, 'demo-0')?.spec.initialCluster, `demo-0=${peer(0)}`);
    assert.equal(memberIn(kube, 'demo-0')?.spec.bootstrap, true);
    assert.equal(clusterIn(kube)?.status?.operation, undefined);
  });

  it('a seed restoring from a ready source carries the restore; a blocked one creates nothing and says why', async () => {
    const seed = op({ member: 'demo-0', bootstrap: true });
    const source = { s3: { bucket: 'b', key: 'k' } };
    const ready = world(seed, { kind: 'ready', restore: { source } as never, sourceName: 'snap' });
    ready.kube.objects.delete('EtcdMember/prod/demo-0');
    await run({ kind: 'claim', operation: seed }, ready);
    assert.deepEqual(memberIn(ready.kube, 'demo-0')?.spec.restore, { source });

    const blocked = world(seed, {
      kind: 'blocked',
      reason: 'SnapshotNotFound',
      message: 'EtcdSnapshot x not found',
    });
    blocked.kube.objects.delete('EtcdMember/prod/demo-0');
    const { result, kube } = await run({ kind: 'claim', operation: seed }, blocked);
    assert.deepEqual(result, retry('cannot restore yet: EtcdSnapshot x not found'));
    assert.deepEqual(kube.lines, []);
    assert.deepEqual(clusterIn(kube)?.status?.operation, seed, 'the claim stays');

    // A blocked restore does not hold back a joining (non-bootstrap) member.
    const joining = world(op(), { kind: 'blocked', reason: 'x', message: 'y' });
    assert.equal((await run({ kind: 'claim', operation: op() }, joining)).result.ok, true);
    assert.equal(memberIn(joining.kube, 'demo-3')?.spec.restore, undefined);
  });

  it('a member that exists already (ours, wired) is adopted: no etcd call, the operation is cleared', async () => {
    const w = world(op({ member: 'demo-2' }));
    const { result, calls, kube } = await run({ kind: 'resume', operation: op({ member: 'demo-2' }) }, w);
    assert.deepEqual(result, { ok: true, summary: 'added learner demo-2' });
    assert.deepEqual(calls, []);
    assert.deepEqual(kube.lines, [
      'create EtcdMember demo-2',
      'get EtcdMember demo-2',
      'get EtcdCluster demo',
      'replaceStatus EtcdCluster demo',
      'get EtcdMember demo-2',
    ]);
    assert.equal(memberIn(kube, 'demo-2')?.spec.initialCluster, `demo-2=${peer(2)}`, 'not rewired');
  });

  it('an existing member not yet wired is wired from etcd, with no second memberAdd if its peer URL is listed', async () => {
    const w = world(op());
    w.kube.put({
      ...member(3, { wired: false }),
      metadata: {
        name: 'demo-3',
        namespace: NS,
        ownerReferences: [
          { apiVersion: 'x', kind: 'EtcdCluster', name: 'demo', uid: 'uid-1', controller: true },
        ],
      },
    });
    const listed = withLearner();
    const { result, calls, kube } = await run({ kind: 'resume', operation: op() }, w, {
      listMembers: () => ({ kind: 'ok', members: listed, clusterId: 'c1', endpoint: client(0) }),
    });
    assert.equal(result.ok, true);
    assert.deepEqual(calls, [`listMembers ${client(0)},${client(2)}`]);
    assert.match(memberIn(kube, 'demo-3')?.spec.initialCluster ?? '', /demo-3=http:\/\/demo-3/);
  });

  it('an EtcdMember of the same name owned by another cluster is not adopted', async () => {
    const w = world(op());
    w.kube.put({
      ...member(3),
      metadata: {
        name: 'demo-3',
        namespace: NS,
        ownerReferences: [
          { apiVersion: 'x', kind: 'EtcdCluster', name: 'demo', uid: 'old-uid', controller: true },
        ],
      },
    });
    const { result, calls, kube } = await run({ kind: 'claim', operation: op() }, w);
    assert.deepEqual(
      result,
      retry(
        'EtcdMember demo-3 exists but belongs to another EtcdCluster (an earlier one of the same name, still being deleted?)',
      ),
    );
    assert.deepEqual(calls, []);
    assert.deepEqual(clusterIn(kube)?.status?.operation, op());
  });

  it('an invalid member or one that vanishes between create and read is a retry; nothing else happens', async () => {
    const invalid = world(op());
    invalid.kube.script('create', { kind: 'invalid', message: 'spec.storage.size: Invalid value' });
    const a = await run({ kind: 'claim', operation: op() }, invalid);
    assert.deepEqual(a.result, retry('creating member demo-3: spec.storage.size: Invalid value'));
    assert.deepEqual(a.kube.lines, ['create EtcdMember demo-3']);
    assert.deepEqual(a.calls, []);

    const vanished = world(op());
    vanished.kube.script('create', { kind: 'already-exists' });
    const b = await run({ kind: 'claim', operation: op() }, vanished);
    assert.deepEqual(b.result, retry('member demo-3 vanished while being created'));
    assert.deepEqual(b.kube.lines, ['create EtcdMember demo-3', 'get EtcdMember demo-3']);
    assert.equal(b.kube.calls[1]?.apiVersion, 'etcdfn.io/v1alpha1');
    assert.equal(b.kube.calls[1]?.namespace, NS);
    assert.deepEqual(clusterIn(b.kube)?.status?.operation, op());
  });

  it('when etcd does not answer the list, or refuses the add, the member is left unwired and the claim stays', async () => {
    const unlisted = await run({ kind: 'claim', operation: op() }, world(op()), {
      listMembers: () => fail('context deadline exceeded'),
    });
    assert.deepEqual(unlisted.result, retry('adding demo-3: etcd did not answer: context deadline exceeded'));
    assert.deepEqual(
      unlisted.calls.map(c => c.split(' ')[0]),
      ['listMembers'],
    );

    const refused = await run({ kind: 'claim', operation: op() }, world(op()), {
      addLearner: () => ({ kind: 'too-many-learners', message: 'too many learner members in cluster' }),
    });
    assert.deepEqual(
      refused.result,
      retry('adding demo-3 as a learner: too many learner members in cluster'),
    );
    for (const r of [unlisted, refused]) {
      assert.equal(memberIn(r.kube, 'demo-3')?.spec.initialCluster, '');
      assert.deepEqual(clusterIn(r.kube)?.status?.operation, op());
      assert.deepEqual(r.kube.lines, ['create EtcdMember demo-3']);
    }
  });

  it('a repeated add (peer URL exists) adopts the member etcd lists; if that list fails, a retry', async () => {
    const listed = withLearner();
    let lists = 0;
    const adopted = await run({ kind: 'claim', operation: op() }, world(op()), {
      listMembers: () => ({
        kind: 'ok',
        members: lists++ === 0 ? three : listed,
        clusterId: 'c1',
        endpoint: '',
      }),
      addLearner: () => ({ kind: 'peer-url-exists', message: 'Peer URLs already exists', member: undefined }),
    });
    assert.equal(adopted.result.ok, true);
    assert.deepEqual(
      adopted.calls.map(c => c.split(' ')[0]),
      ['listMembers', 'addLearner', 'listMembers'],
    );
    assert.equal(adopted.calls[2], `listMembers ${client(0)},${client(2)}`);
    assert.match(
      memberIn(adopted.kube, 'demo-3')?.spec.initialCluster ?? '',
      /demo-3=http:\/\/demo-3.demo.prod.svc:2380$/,
    );

    let second = 0;
    const lost = await run({ kind: 'claim', operation: op() }, world(op()), {
      listMembers: () => (second++ === 0 ? { kind: 'ok', members: three } : fail('no leader')),
      addLearner: () => ({ kind: 'peer-url-exists', message: 'exists', member: undefined }),
    });
    assert.deepEqual(lost.result, retry('adding demo-3: etcd did not answer: no leader'));
    assert.deepEqual(clusterIn(lost.kube)?.status?.operation, op());
  });

  it('a claim waits inside the request while etcd calls the cluster unhealthy; a resume asks once', async () => {
    let asked = 0;
    const unhealthy = { kind: 'unhealthy-cluster', message: 'unhealthy cluster' };
    const claimed = await run(
      { kind: 'claim', operation: op() },
      world(op()),
      {
        addLearner: () =>
          asked++ < 2 ? unhealthy : { kind: 'ok', member: withLearner()[3], members: withLearner() },
      },
      { unhealthyWaitMs: 5000 },
    );
    assert.equal(claimed.result.ok, true);
    assert.equal(claimed.calls.filter(c => c.startsWith('addLearner')).length, 3);

    const resumed = await run(
      { kind: 'resume', operation: op() },
      world(op()),
      { addLearner: () => unhealthy },
      { unhealthyWaitMs: 5000 },
    );
    assert.deepEqual(resumed.result, retry('adding demo-3 as a learner: unhealthy cluster'));
    assert.equal(resumed.calls.filter(c => c.startsWith('addLearner')).length, 1);

    // The deadline itself ends the wait (Date mocked: the second reading is the deadline).
    let t = 1_000_000;
    const now = mock.method(Date, 'now', () => (t += 100) - 100);
    const atDeadline = await run(
      { kind: 'claim', operation: op() },
      world(op()),
      { addLearner: () => unhealthy },
      { unhealthyWaitMs: 100 },
    );
    now.mock.restore();
    assert.equal(atDeadline.calls.filter(c => c.startsWith('addLearner')).length, 1);

    const started = Date.now();
    const gaveUp = await run(
      { kind: 'claim', operation: op() },
      world(op()),
      { addLearner: () => unhealthy },
      { unhealthyWaitMs: 200 },
    );
    assert.deepEqual(gaveUp.result, retry('adding demo-3 as a learner: unhealthy cluster'));
    const tries = gaveUp.calls.filter(c => c.startsWith('addLearner')).length;
    assert.ok(Date.now() - started >= 190, 'waited for the deadline');
    assert.ok(tries >= 2 && tries <= 6, `asked every 50 ms (${tries})`);
  });

  it('a failed wiring is a retry naming it; the claim stays', async () => {
    const w = world(op());
    w.kube.script('mergePatch', { kind: 'conflict', message: 'modified' });
    const { result, kube } = await run({ kind: 'claim', operation: op() }, w);
    assert.deepEqual(result, retry('wiring demo-3: conflict'));
    assert.deepEqual(clusterIn(kube)?.status?.operation, op());
  });

  it('clearing the operation: re-read on a conflict (up to 5 times), and never clears another member’s', async () => {
    const conflict = { kind: 'conflict', message: 'modified' };
    const w = world(op());
    w.kube.script('replaceStatus', conflict, conflict);
    const { result, kube } = await run({ kind: 'claim', operation: op() }, w);
    assert.equal(result.ok, true);
    assert.equal(kube.lines.filter(l => l === 'replaceStatus EtcdCluster demo').length, 3);
    assert.equal(kube.lines.filter(l => l === 'get EtcdCluster demo').length, 3);
    assert.equal(clusterIn(kube)?.status?.operation, undefined);

    const stuck = world(op());
    stuck.kube.script('replaceStatus', ...Array(9).fill(conflict));
    const s = await run({ kind: 'claim', operation: op() }, stuck);
    assert.equal(s.result.ok, true);
    assert.equal(s.kube.lines.filter(l => l === 'replaceStatus EtcdCluster demo').length, 5);

    const other = op({ member: 'demo-4' });
    const o = await run({ kind: 'resume', operation: op() }, world(other));
    assert.equal(o.result.ok, true);
    assert.equal(o.kube.lines.includes('replaceStatus EtcdCluster demo'), false);
    assert.deepEqual(clusterIn(o.kube)?.status?.operation, other);

    const gone = world(op());
    gone.kube.objects.delete('EtcdCluster/prod/demo');
    const g = await run({ kind: 'claim', operation: op() }, gone);
    assert.equal(g.result.ok, true);
    assert.equal(g.kube.lines.includes('replaceStatus EtcdCluster demo'), false);

    const cleared = world();
    const c = await run({ kind: 'resume', operation: op() }, cleared);
    assert.equal(c.result.ok, true, 'an operation already cleared (a crash after the clear) is left so');
    assert.equal(c.kube.lines.includes('replaceStatus EtcdCluster demo'), false);

    const invalid = world(op());
    invalid.kube.script('replaceStatus', { kind: 'invalid', message: 'x' });
    const i = await run({ kind: 'claim', operation: op() }, invalid);
    assert.equal(
      i.kube.lines.filter(l => l === 'replaceStatus EtcdCluster demo').length,
      1,
      'only a conflict is retried',
    );
  });

  it('crash points: member-created after the create, learner-added after etcd added it, member-wired after the wiring, operation-cleared after the clear', async () => {
    const expected: Record<string, string[]> = {
      'cluster:member-created': ['create EtcdMember demo-3'],
      'cluster:learner-added': ['create EtcdMember demo-3'],
      'cluster:member-wired': ['create EtcdMember demo-3', 'mergePatch EtcdMember demo-3'],
      'cluster:operation-cleared': [
        'create EtcdMember demo-3',
        'mergePatch EtcdMember demo-3',
        'get EtcdCluster demo',
        'replaceStatus EtcdCluster demo',
      ],
    };
    for (const [point, lines] of Object.entries(expected)) {
      const w = world(op());
      const { etcd, calls } = fakeEtcd();
      const crashed = await withCrashArmed(
        point,
        () => act(storeContext(w.kube, etcd), w.state, { kind: 'claim', operation: op() }),
        () => ({ kube: [...w.kube.lines], etcd: calls.length }),
      );
      assert.deepEqual(
        crashed,
        { killed: true, at: { kube: lines, etcd: point === 'cluster:member-created' ? 0 : 2 } },
        point,
      );
    }
    // Not fired where nothing happened: an adopted member, an add refused or repeated, a failed clear.
    const adopt = world(op({ member: 'demo-2' }));
    const a = await withCrashArmed(
      'cluster:member-created',
      () =>
        act(storeContext(adopt.kube, fakeEtcd().etcd), adopt.state, {
          kind: 'resume',
          operation: op({ member: 'demo-2' }),
        }),
      () => 0,
    );
    assert.equal(a.killed, false);
    for (const answer of [{ kind: 'peer-url-exists', message: 'x', member: undefined }, fail('down')]) {
      const w = world(op());
      const r = await withCrashArmed(
        'cluster:learner-added',
        () =>
          act(storeContext(w.kube, fakeEtcd({ addLearner: () => answer }).etcd), w.state, {
            kind: 'claim',
            operation: op(),
          }),
        () => 0,
      );
      assert.equal(r.killed, false, answer.kind);
    }
    const c = world(op());
    c.kube.script('replaceStatus', { kind: 'invalid', message: 'x' });
    const r = await withCrashArmed(
      'cluster:operation-cleared',
      () => act(storeContext(c.kube, fakeEtcd().etcd), c.state, { kind: 'claim', operation: op() }),
      () => 0,
    );
    assert.equal(r.killed, false);
  });
});

describe('act: static bootstrap of the initial members', () => {
  const names = ['demo-0', 'demo-1', 'demo-2'];
  const bootstrap = op({ member: 'demo-0', bootstrap: true, initialMembers: names });
  const initialCluster = names.map((n, i) => `${n}=${peer(i)}`).join(',');
  const empty = () => {
    const w = world(bootstrap);
    for (const n of names) w.kube.objects.delete(`EtcdMember/prod/${n}`);
    return w;
  };

  it('creates every member with the whole list as its initial cluster, then clears the operation; no etcd call', async () => {
    const { result, calls, kube } = await run({ kind: 'claim', operation: bootstrap }, empty());
    assert.deepEqual(result, { ok: true, summary: 'created the initial members demo-0, demo-1, demo-2' });
    assert.deepEqual(calls, []);
    for (const n of names) {
      assert.equal(memberIn(kube, n)?.spec.initialCluster, initialCluster, n);
      assert.equal(memberIn(kube, n)?.spec.bootstrap, true, n);
    }
    assert.deepEqual(
      kube.lines.slice(0, 3),
      names.map(n => `create EtcdMember ${n}`),
    );
    assert.equal(clusterIn(kube)?.status?.operation, undefined);
  });

  it('adopts members already created with the same list; one with another list stops it, the claim kept', async () => {
    const w = empty();
    w.kube.put({
      ...member(0, { bootstrap: true }),
      spec: { ...member(0).spec, initialCluster },
      metadata: {
        name: 'demo-0',
        namespace: NS,
        ownerReferences: [
          { apiVersion: 'x', kind: 'EtcdCluster', name: 'demo', uid: 'uid-1', controller: true },
        ],
      },
    } as KubeObject);
    const adopted = await run({ kind: 'resume', operation: bootstrap }, w);
    assert.equal(adopted.result.ok, true);

    const other = empty();
    other.kube.put({
      ...member(1),
      metadata: {
        name: 'demo-1',
        namespace: NS,
        ownerReferences: [
          { apiVersion: 'x', kind: 'EtcdCluster', name: 'demo', uid: 'uid-1', controller: true },
        ],
      },
    });
    const { result, kube } = await run({ kind: 'resume', operation: bootstrap }, other);
    assert.deepEqual(
      result,
      retry(
        `EtcdMember demo-1 exists with another initial cluster (demo-1=${peer(1)}); it is not part of this bootstrap`,
      ),
    );
    assert.equal(memberIn(kube, 'demo-2'), undefined, 'stops at the first that does not fit');
    assert.deepEqual(clusterIn(kube)?.status?.operation, bootstrap);

    const invalid = empty();
    invalid.kube.script('create', { kind: 'invalid', message: 'bad' });
    const i = await run({ kind: 'claim', operation: bootstrap }, invalid);
    assert.deepEqual(i.result, retry('creating member demo-0: bad'));
    assert.deepEqual(invalid.kube.lines, ['create EtcdMember demo-0']);
  });
});

describe('act: one-call steps', () => {
  it('set-dormant and release-seed patch the member', async () => {
    const { result, kube } = await run({ kind: 'set-dormant', member: 'demo-2', dormant: true });
    assert.deepEqual(result, { ok: true, summary: 'paused: member demo-2 is dormant' });
    assert.equal(memberIn(kube, 'demo-2')?.spec.dormant, true);
    const released = await run({ kind: 'release-seed', member: 'demo-2' });
    assert.deepEqual(released.result, {
      ok: true,
      summary: "released the resume's seed demo-2: its deletion finishes",
    });
    assert.equal(memberIn(released.kube, 'demo-2')?.spec.dormant, false);
  });

  it('mark-voter records the member as a voter, or retries naming the failure', async () => {
    const { result, kube } = await run({ kind: 'mark-voter', member: 'demo-2' });
    assert.deepEqual(result, { ok: true, summary: 'recorded demo-2 as a voter' });
    assert.deepEqual(
      kube.calls.map(c => [c.verb, c.kind, c.name, c.namespace, c.apiVersion, c.body]),
      [
        [
          'mergePatchStatus',
          'EtcdMember',
          'demo-2',
          NS,
          'etcdfn.io/v1alpha1',
          { status: { isVoter: true, role: 'voter' } },
        ],
      ],
    );
    const w = world();
    w.kube.script('mergePatchStatus', { kind: 'not-found' });
    assert.deepEqual(
      (await run({ kind: 'mark-voter', member: 'demo-2' }, w)).result,
      retry('recording demo-2 as a voter: not-found'),
    );
  });

  it('move-leader asks etcd to move it; a refusal is a retry with etcd’s words; the crash point follows a move', async () => {
    const { result, calls } = await run({ kind: 'move-leader', from: 'demo-0', toId: 'b2' });
    assert.deepEqual(result, { ok: true, summary: 'moved leadership from demo-0 to b2' });
    assert.deepEqual(calls, [`moveLeader ${client(0)},${client(2)} b2`]);
    const refused = await run({ kind: 'move-leader', from: 'demo-0', toId: 'b2' }, world(), {
      moveLeader: () => ({ kind: 'bad-leader-transferee', message: 'bad leader transferee' }),
    });
    assert.deepEqual(refused.result, retry('moving leadership off demo-0: bad leader transferee'));
    for (const [answer, fires] of [
      [undefined, true],
      [fail('x'), false],
    ] as const) {
      const w = world();
      const e = fakeEtcd(answer ? { moveLeader: () => answer } : {});
      const r = await withCrashArmed(
        'cluster:leader-moved',
        () => act(storeContext(w.kube, e.etcd), w.state, { kind: 'move-leader', from: 'demo-0', toId: 'b2' }),
        () => e.calls.length,
      );
      assert.deepEqual(r.killed, fires);
    }
  });

  it('enable-downgrade says whether it was enabled already; a failure is a retry', async () => {
    const fresh = await run({ kind: 'enable-downgrade', version: '3.4' });
    assert.deepEqual(fresh.result, { ok: true, summary: "etcd's downgrade to 3.4 enabled" });
    assert.deepEqual(fresh.calls, [`enableDowngrade ${client(0)},${client(2)} 3.4`]);
    const again = await run({ kind: 'enable-downgrade', version: '3.4' }, world(), {
      enableDowngrade: () => ({ kind: 'ok', alreadyEnabled: true }),
    });
    assert.deepEqual(again.result, { ok: true, summary: "etcd's downgrade to 3.4 enabled (already)" });
    const failed = await run({ kind: 'enable-downgrade', version: '3.4' }, world(), {
      enableDowngrade: () => fail('no leader'),
    });
    assert.deepEqual(failed.result, retry("enabling etcd's downgrade to 3.4: no leader"));
  });

  it('upgrade-member sets the member’s version; a failed patch is a retry; the crash point follows a write', async () => {
    const { result, kube } = await run({
      kind: 'upgrade-member',
      member: 'demo-2',
      from: '3.5.16',
      version: '3.6.0',
    });
    assert.deepEqual(result, { ok: true, summary: 'upgrading demo-2 from 3.5.16 to 3.6.0' });
    assert.equal(memberIn(kube, 'demo-2')?.spec.version, '3.6.0');
    assert.deepEqual(kube.calls[0]?.body, { spec: { version: '3.6.0' } });
    const w = world();
    w.kube.script('mergePatch', { kind: 'conflict', message: 'x' });
    assert.deepEqual(
      (await run({ kind: 'upgrade-member', member: 'demo-2', from: '3.5.16', version: '3.6.0' }, w)).result,
      retry('upgrading demo-2: conflict'),
    );
    for (const [answer, fires] of [
      [undefined, true],
      [{ kind: 'conflict', message: 'x' }, false],
    ] as const) {
      const c = world();
      if (answer) c.kube.script('mergePatch', answer);
      const r = await withCrashArmed(
        'cluster:member-upgraded',
        () =>
          act(storeContext(c.kube, fakeEtcd().etcd), c.state, {
            kind: 'upgrade-member',
            member: 'demo-2',
            from: 'a',
            version: 'b',
          }),
        () => 0,
      );
      assert.equal(r.killed, fires);
    }
  });

  it('delete-member deletes the EtcdMember (its finalizer removes it from etcd); the crash point follows', async () => {
    const { result, kube, calls } = await run({ kind: 'delete-member', member: 'demo-2' });
    assert.deepEqual(result, { ok: true, summary: 'deleting member demo-2' });
    assert.deepEqual(
      kube.calls.map(c => [c.verb, c.apiVersion, c.kind, c.namespace, c.name]),
      [['delete', 'etcdfn.io/v1alpha1', 'EtcdMember', NS, 'demo-2']],
    );
    assert.deepEqual(calls, []);
    const c = world();
    const r = await withCrashArmed(
      'cluster:member-deleted',
      () => act(storeContext(c.kube, fakeEtcd().etcd), c.state, { kind: 'delete-member', member: 'demo-2' }),
      () => [...c.kube.lines],
    );
    assert.deepEqual(r, { killed: true, at: ['delete EtcdMember demo-2'] });
  });

  it('delete-members deletes each member, then its Pod, in order; the crash point follows each member', async () => {
    const { result, kube } = await run({ kind: 'delete-members', members: ['demo-1', 'demo-2'] });
    assert.deepEqual(result, {
      ok: true,
      summary: 'deleting members demo-1, demo-2, whose data is discarded',
    });
    assert.deepEqual(
      kube.calls.map(c => [c.verb, c.apiVersion, c.kind, c.namespace, c.name]),
      [
        ['delete', 'etcdfn.io/v1alpha1', 'EtcdMember', NS, 'demo-1'],
        ['delete', 'v1', 'Pod', NS, 'demo-1'],
        ['delete', 'etcdfn.io/v1alpha1', 'EtcdMember', NS, 'demo-2'],
        ['delete', 'v1', 'Pod', NS, 'demo-2'],
      ],
    );
    const c = world();
    const r = await withCrashArmed(
      'cluster:restore-member-deleted',
      () =>
        act(storeContext(c.kube, fakeEtcd().etcd), c.state, {
          kind: 'delete-members',
          members: ['demo-1', 'demo-2'],
        }),
      () => [...c.kube.lines],
    );
    assert.deepEqual(r, { killed: true, at: ['delete EtcdMember demo-1'] });
  });

  it('grow-volumes raises each member’s size', async () => {
    const { result, kube } = await run({ kind: 'grow-volumes', members: ['demo-0', 'demo-2'], size: '2Gi' });
    assert.deepEqual(result, { ok: true, summary: 'volume size 2Gi set on demo-0, demo-2' });
    assert.equal(memberIn(kube, 'demo-2')?.spec.storage.size, '2Gi');
  });

  it('recover-space that fails part way is a retry with its reason', async () => {
    const { result } = await run({
      kind: 'recover-space',
      members: [{ name: 'demo-0', endpoint: client(0) }],
      quotaBytes: 8,
    });
    assert.equal(result.ok, false);
    assert.match(
      !result.ok && result.outcome.result === 'retry' ? result.outcome.reason : '',
      /compact refused/,
    );
    assert.equal(!result.ok && result.outcome.result === 'retry' && result.outcome.status, 503);
  });

  it('force-new-cluster sets and unsets the flag; a failed patch says which; the crash point follows a write', async () => {
    const on = await run({ kind: 'force-new-cluster', member: 'demo-0', on: true });
    assert.deepEqual(on.result, { ok: true, summary: 'member demo-0 restarts with --force-new-cluster' });
    assert.equal(memberIn(on.kube, 'demo-0')?.spec.forceNewCluster, true);
    const off = world();
    await run({ kind: 'force-new-cluster', member: 'demo-0', on: true }, off);
    const r = await run({ kind: 'force-new-cluster', member: 'demo-0', on: false }, off);
    assert.deepEqual(r.result, { ok: true, summary: 'member demo-0 restarts without --force-new-cluster' });
    assert.equal(memberIn(off.kube, 'demo-0')?.spec.forceNewCluster, undefined);
    assert.deepEqual(off.kube.calls[1]?.body, { spec: { forceNewCluster: null } });
    for (const flag of [true, false]) {
      const w = world();
      w.kube.script('mergePatch', { kind: 'not-found' });
      assert.deepEqual(
        (await run({ kind: 'force-new-cluster', member: 'demo-0', on: flag }, w)).result,
        retry(`${flag ? 'setting' : 'unsetting'} forceNewCluster on demo-0: not-found`),
      );
    }
    for (const [answer, fires] of [
      [undefined, true],
      [{ kind: 'conflict', message: 'x' }, false],
    ] as const) {
      const c = world();
      if (answer) c.kube.script('mergePatch', answer);
      const x = await withCrashArmed(
        'cluster:force-flag-set',
        () =>
          act(storeContext(c.kube, fakeEtcd().etcd), c.state, {
            kind: 'force-new-cluster',
            member: 'demo-0',
            on: true,
          }),
        () => 0,
      );
      assert.equal(x.killed, fires);
    }
  });

  it('remove-orphan removes the etcd member; one already gone is fine; a refusal is a retry', async () => {
    const action = { kind: 'remove-orphan' as const, id: 'dead1', peerURL: 'http://10.0.0.9:2380' };
    const { result, calls } = await run(action);
    const done = {
      ok: true,
      summary: 'removed etcd member dead1 (http://10.0.0.9:2380) that no EtcdMember stood for',
    };
    assert.deepEqual(result, done);
    assert.deepEqual(calls, [`remove ${client(0)},${client(2)} dead1`]);
    const gone = await run(action, world(), {
      remove: () => ({ kind: 'member-not-found', message: 'member not found' }),
    });
    assert.deepEqual(gone.result, done);
    const refused = await run(action, world(), {
      remove: () => ({ kind: 'unhealthy-cluster', message: 'unhealthy' }),
    });
    assert.deepEqual(refused.result, retry('removing orphan etcd member dead1: unhealthy'));
    for (const [answer, fires] of [
      [undefined, true],
      [{ kind: 'member-not-found', message: 'x' }, false],
    ] as const) {
      const w = world();
      const x = await withCrashArmed(
        'cluster:orphan-removed',
        () =>
          act(storeContext(w.kube, fakeEtcd(answer ? { remove: () => answer } : {}).etcd), w.state, action),
        () => 0,
      );
      assert.equal(x.killed, fires);
    }
  });

  it('defragment defragments the claimed member', async () => {
    const w = world();
    const etcd = {
      memberStatus: () => Promise.resolve({ kind: 'ok', status: { dbSize: 4 * 1024 * 1024 } }),
      defragment: () => Promise.resolve({ kind: 'ok' }),
      healthRead: () => Promise.resolve({ kind: 'ok', revision: 1 }),
    } as unknown as EtcdAdapter;
    const result = await act(storeContext(w.kube, etcd), w.state, {
      kind: 'defragment',
      member: 'demo-2',
      endpoint: client(2),
      why: 'fragmented',
    });
    assert.deepEqual(result, { ok: true, summary: 'defragmented demo-2: 4 MiB → 4 MiB' });
  });

  it('promote: a refusal other than "not in sync" is a retry at once; one never in sync gives up after the attempts', async () => {
    const refused = await run({ kind: 'promote', member: 'demo-2', id: 'a2' }, world(), {
      promote: () => ({ kind: 'member-not-found', message: 'member not found' }),
    });
    assert.deepEqual(refused.result, retry('promoting demo-2: member not found'));
    assert.equal(refused.calls.length, 1);
    assert.deepEqual(refused.kube.calls, [], 'not recorded as a voter');
    const behind = await run({ kind: 'promote', member: 'demo-2', id: 'a2' }, world(), {
      promote: () => ({ kind: 'learner-not-in-sync', message: 'not in sync' }),
    });
    assert.deepEqual(behind.result, retry('learner demo-2 is still catching up with the leader'));
    assert.equal(behind.calls.length, 3);
    assert.deepEqual(behind.kube.calls, []);
  });

  it('promote promotes the learner and records it as a voter', async () => {
    const { result, calls, kube } = await run({ kind: 'promote', member: 'demo-2', id: 'a2' });
    assert.deepEqual(result, { ok: true, summary: 'promoted demo-2 to voter' });
    assert.deepEqual(calls, [`promote ${client(0)},${client(2)} a2`]);
    assert.equal(kube.stored<EtcdMember>('EtcdMember', NS, 'demo-2')?.status?.isVoter, true);
    assert.deepEqual(kube.calls[0]?.body, { status: { isVoter: true, role: 'voter' } });
  });
});
