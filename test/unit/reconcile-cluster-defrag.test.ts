// The defragmentation policy's I/O (shared/reconcile/cluster-defrag.ts) over plain fakes: the sizes
// it reads for the plan (each running member asked itself; one that does not answer is unknown), and
// one claimed member's defragmentation: status before, defragment, wait until it serves reads, status
// after, an Event with both sizes, then the claim dropped from status.operation (re-read on a
// conflict; a scheduled run's member recorded as done in the same write). Every failure is a retry
// naming the member and the cause, and leaves the claim in place.
import assert from 'node:assert/strict';
import { afterEach, describe, it, mock } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { defragmentMember, observeSpace } from '../../shared/reconcile/cluster-defrag.ts';
import { cluster as clusterOf, locked, member, state as stateOf } from '../support/cluster-world.ts';
import { StoreKube, storeContext, withCrashArmed } from '../support/store-kube.ts';

type Cluster = EtcdCluster & KubeObject;
const MiB = 1024 * 1024;
const client = (n: number) => `http://demo-${n}.demo.prod.svc:2379`;
const fail = (message: string) => ({ kind: 'unavailable' as const, message });
const retry = (reason: string) => ({ ok: false, outcome: { result: 'retry', reason, status: 503 } });
const action = { kind: 'defragment' as const, member: 'demo-1', endpoint: client(1), why: 'fragmented' };
const claim = { type: 'defrag' as const, member: 'demo-1', startedAt: '2026-11-29T11:00:00Z' };

function world(status = locked(3, { operation: claim } as never)) {
  const cluster = {
    ...clusterOf({}, status),
    metadata: { ...clusterOf().metadata, resourceVersion: '10' },
  } as Cluster;
  const members = [member(0), member(1), member(2), member(3, { dormant: true })];
  const state = stateOf(cluster, members);
  const kube = new StoreKube([cluster]);
  return { cluster, state, kube };
}

function fakeEtcd(o: Partial<Record<string, (...a: never[]) => unknown>> = {}) {
  const calls: string[] = [];
  const sizes = [8 * MiB, 2 * MiB];
  const answer =
    (name: string, dflt: (...a: never[]) => unknown) =>
    (...args: unknown[]) => {
      calls.push(`${name} ${args.map(a => (Array.isArray(a) ? a.join(',') : String(a))).join(' ')}`);
      return Promise.resolve((o[name] ?? dflt)(...(args as never[])));
    };
  const etcd = {
    memberStatus: answer('memberStatus', () => ({ kind: 'ok', status: { dbSize: sizes.shift() ?? 0 } })),
    defragment: answer('defragment', () => ({ kind: 'ok' })),
    healthRead: answer('healthRead', () => ({ kind: 'ok', revision: 7 })),
    clusterStatus: answer('clusterStatus', (endpoints: string[]) =>
      endpoints.map((_, i) =>
        i === 1 ? fail('down') : { kind: 'ok', status: { dbSize: (i + 1) * MiB, dbSizeInUse: i * MiB } },
      ),
    ),
  } as unknown as EtcdAdapter;
  return { etcd, calls };
}

const clusterIn = (kube: StoreKube) => kube.stored<Cluster>('EtcdCluster', 'prod', 'demo');
const events = (kube: StoreKube) =>
  kube.calls
    .filter(c => c.kind === 'Event')
    .map(c => c.body as { type: string; reason: string; message: string; reportingInstance: string });

describe('observeSpace', () => {
  it('asks each running member itself; a dormant one is not asked, one that fails is unknown', async () => {
    const w = world();
    const { etcd, calls } = fakeEtcd();
    const space = await observeSpace(storeContext(w.kube, etcd), w.state);
    assert.deepEqual(calls, [`clusterStatus ${client(0)},${client(1)},${client(2)}`]);
    assert.deepEqual(space, {
      'demo-0': { dbSize: MiB, dbSizeInUse: 0 },
      'demo-1': undefined,
      'demo-2': { dbSize: 3 * MiB, dbSizeInUse: 2 * MiB },
    });
    assert.deepEqual(Object.keys(space), ['demo-0', 'demo-1', 'demo-2']);
  });
});

describe('defragmentMember', () => {
  afterEach(() => mock.restoreAll());

  it('defragments the claimed member, says both sizes in an Event and the summary, then drops the claim', async () => {
    const w = world();
    const { etcd, calls } = fakeEtcd();
    const result = await defragmentMember(storeContext(w.kube, etcd), w.state, action);
    assert.deepEqual(result, { ok: true, summary: 'defragmented demo-1: 8 MiB → 2 MiB' });
    assert.deepEqual(calls, [
      `memberStatus ${client(1)}`,
      `defragment ${client(1)}`,
      `healthRead ${client(1)}`,
      `memberStatus ${client(1)}`,
    ]);
    assert.deepEqual(
      events(w.kube).map(e => [e.type, e.reason, e.message, e.reportingInstance]),
      [
        [
          'Normal',
          'MemberDefragmented',
          'defragmented demo-1: 8 MiB → 2 MiB (fragmented)',
          'reconcile-cluster',
        ],
      ],
    );
    assert.equal(clusterIn(w.kube)?.status?.operation, undefined);
    assert.equal(clusterIn(w.kube)?.status?.clusterToken, 'prod-demo-uid-1');
  });

  it('a size unknown after is said as unknown', async () => {
    const w = world();
    let n = 0;
    const { etcd } = fakeEtcd({
      memberStatus: () => (n++ === 0 ? { kind: 'ok', status: { dbSize: 512 * 1024 } } : fail('x')),
    });
    const result = await defragmentMember(storeContext(w.kube, etcd), w.state, action);
    assert.deepEqual(result, { ok: true, summary: 'defragmented demo-1: 512 KiB → unknown' });
  });

  it('a member that does not answer, or refuses, is a retry with the cause; nothing is defragmented or dropped', async () => {
    const silent = world();
    const a = fakeEtcd({ memberStatus: () => fail('connection refused') });
    assert.deepEqual(
      await defragmentMember(storeContext(silent.kube, a.etcd), silent.state, action),
      retry('demo-1 does not answer: connection refused'),
    );
    assert.deepEqual(a.calls, [`memberStatus ${client(1)}`]);

    const refused = world();
    const b = fakeEtcd({ defragment: () => fail('deadline exceeded') });
    assert.deepEqual(
      await defragmentMember(storeContext(refused.kube, b.etcd), refused.state, action),
      retry('defragmenting demo-1: deadline exceeded'),
    );
    assert.equal(
      b.calls.some(c => c.startsWith('healthRead')),
      false,
    );
    for (const w of [silent, refused]) {
      assert.deepEqual(clusterIn(w.kube)?.status?.operation, claim);
      assert.deepEqual(events(w.kube), []);
    }
  });

  it('a member that never serves reads again (60 s) is a retry; the claim stays', async () => {
    const w = world();
    let t = Date.now();
    mock.method(Date, 'now', () => (t += 25_000));
    const { etcd, calls } = fakeEtcd({ healthRead: () => fail('not serving') });
    const result = await defragmentMember(storeContext(w.kube, etcd), w.state, action);
    assert.deepEqual(result, retry('demo-1 did not serve reads again after its defragmentation'));
    assert.ok(calls.filter(c => c.startsWith('healthRead')).length >= 2, 'asked again before giving up');
    assert.deepEqual(clusterIn(w.kube)?.status?.operation, claim);
  });

  it('a conflict on the drop re-reads the cluster and drops it there; a claim gone or moved on is left', async () => {
    const w = world();
    w.kube.script('replaceStatus', { kind: 'conflict', message: 'modified' });
    const { etcd } = fakeEtcd();
    const result = await defragmentMember(storeContext(w.kube, etcd), w.state, action);
    assert.equal(result.ok, true);
    assert.deepEqual(
      w.kube.lines.filter(l => !l.includes('Event')),
      ['replaceStatus EtcdCluster demo', 'get EtcdCluster demo', 'replaceStatus EtcdCluster demo'],
    );
    const get = w.kube.calls.find(c => c.verb === 'get');
    assert.deepEqual([get?.apiVersion, get?.namespace], ['etcdfn.io/v1alpha1', 'prod']);
    assert.equal(clusterIn(w.kube)?.status?.operation, undefined);

    const moved = world(locked(3, { operation: { ...claim, member: 'demo-2' } } as never));
    const m = await defragmentMember(storeContext(moved.kube, fakeEtcd().etcd), moved.state, action);
    assert.equal(m.ok, true);
    assert.equal(moved.kube.lines.includes('replaceStatus EtcdCluster demo'), false);

    const dropped = world(locked(3));
    const d = await defragmentMember(storeContext(dropped.kube, fakeEtcd().etcd), dropped.state, action);
    assert.equal(d.ok, true, 'a claim already dropped (by another invocation) is left so');
    assert.equal(dropped.kube.lines.includes('replaceStatus EtcdCluster demo'), false);

    const gone = world();
    gone.kube.script('replaceStatus', { kind: 'conflict', message: 'x' });
    gone.kube.objects.delete('EtcdCluster/prod/demo');
    const g = await defragmentMember(storeContext(gone.kube, fakeEtcd().etcd), gone.state, action);
    assert.equal(g.ok, true);
  });

  it('a claim that cannot be dropped in 5 tries is a retry saying so', async () => {
    const w = world();
    const conflict = { kind: 'conflict', message: 'x' };
    w.kube.script('replaceStatus', conflict, conflict, conflict, conflict, conflict, conflict);
    const result = await defragmentMember(storeContext(w.kube, fakeEtcd().etcd), w.state, action);
    assert.deepEqual(result, retry('defragmented demo-1: 8 MiB → 2 MiB; could not drop the claim'));
    assert.equal(w.kube.lines.filter(l => l === 'replaceStatus EtcdCluster demo').length, 5);
  });

  it('a scheduled run records the member as defragmented in the same write', async () => {
    const w = world(
      locked(3, {
        operation: { ...claim, run: '2026-11-29T11:00:00Z' },
        defragSchedule: { lastRun: '2026-11-29T11:00:00Z', defragmented: ['demo-0'] },
      } as never),
    );
    await defragmentMember(storeContext(w.kube, fakeEtcd().etcd), w.state, action);
    const status = clusterIn(w.kube)?.status as Record<string, unknown>;
    assert.deepEqual(status.defragSchedule, {
      lastRun: '2026-11-29T11:00:00Z',
      defragmented: ['demo-0', 'demo-1'],
    });
    assert.equal(status.operation, undefined);
  });

  it('crash points: defrag-claimed before any call, defrag-member-done after the Event and before the drop', async () => {
    const a = world();
    const e = fakeEtcd();
    const claimed = await withCrashArmed(
      'cluster:defrag-claimed',
      () => defragmentMember(storeContext(a.kube, e.etcd), a.state, action),
      () => e.calls.length,
    );
    assert.deepEqual(claimed, { killed: true, at: 0 });
    const b = world();
    const done = await withCrashArmed(
      'cluster:defrag-member-done',
      () => defragmentMember(storeContext(b.kube, fakeEtcd().etcd), b.state, action),
      () => [events(b.kube).length, b.kube.lines.includes('replaceStatus EtcdCluster demo')],
    );
    assert.deepEqual(done, { killed: true, at: [1, false] });
  });
});
